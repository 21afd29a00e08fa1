//! `conifer stats`: what a trace says about a run.

use crate::output::outln;
use conifer_trace::decode::{human_time, Signature};
use conifer_trace::fast_hash::FastMap;
use conifer_trace::forest::Forest;
use conifer_trace::{Language, Trace, TraceFile};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::ExitCode;

/// One line on a partial trace: why its ranks stopped and which left no record.
pub fn partial_summary(meta: &conifer_trace::Metadata) -> String {
    let mut line = format!(
        "partial trace (the run ended early): {}",
        meta.partial_reasons.join(", ")
    );
    if !meta.missing_ranks.is_empty() {
        let missing: Vec<String> = meta.missing_ranks.iter().map(u32::to_string).collect();
        line.push_str(&format!("; no record from ranks {}", missing.join(",")));
    }
    line
}

/// The function name of every signature, in table order.
fn signature_functions(trace: &Trace) -> Result<Vec<&str>, String> {
    let names: BTreeMap<u16, &str> = trace
        .catalog
        .iter()
        .map(|f| (f.id, f.name.as_str()))
        .collect();
    trace
        .record
        .signatures
        .iter()
        .map(|s| {
            Signature::parse(s)
                .and_then(|sig| names.get(&sig.function).copied())
                .ok_or_else(|| "a signature names no known function".to_string())
        })
        .collect()
}

/// Calls per function name and rank, counted from the grammars and trace trees (not
/// expanded).
fn grammar_counts(trace: &Trace) -> Result<BTreeMap<String, Vec<u64>>, String> {
    let ranks = trace.meta.ranks as usize;
    let functions = signature_functions(trace)?;
    let mut known: HashMap<(u32, Option<u32>), FastMap<u32, u64>> = HashMap::new();
    let mut counts: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (rank, entry) in trace.record.ranks.iter().enumerate() {
        for (thread, &g) in entry.threads.iter().enumerate() {
            let key = (g, entry.trees.get(thread).copied());
            let per_terminal = known
                .entry(key)
                .or_insert_with(|| trace.record.thread_terminal_counts(entry, thread));
            for (&terminal, &n) in per_terminal.iter() {
                counts
                    .entry(functions[terminal as usize].to_string())
                    .or_insert_with(|| vec![0; ranks])[rank] += n;
            }
        }
    }
    Ok(counts)
}

/// Whether the recording may have left calls out: the program called `MPI_Pcontrol`, or the
/// run excluded functions or started with recording off.
fn recording_filtered(options: &[String], recorded: &BTreeMap<String, Vec<u64>>) -> bool {
    recorded.contains_key("MPI_Pcontrol")
        || options
            .iter()
            .any(|o| o.starts_with("exclude=") || o == "start-off")
}

/// Per function, the calls the wrappers counted but the record does not hold (functions with
/// none omitted); `None` when some rank recorded more calls than it counted.
fn not_recorded(
    counted: &BTreeMap<String, Vec<u64>>,
    recorded: &BTreeMap<String, Vec<u64>>,
) -> Option<BTreeMap<String, u64>> {
    if recorded.keys().any(|name| !counted.contains_key(name)) {
        return None;
    }
    let mut missing = BTreeMap::new();
    for (name, counts) in counted {
        let kept = recorded.get(name);
        let mut total = 0;
        for (rank, &n) in counts.iter().enumerate() {
            let k = kept.and_then(|v| v.get(rank)).copied().unwrap_or(0);
            total += n.checked_sub(k)?;
        }
        if total > 0 {
            missing.insert(name.clone(), total);
        }
    }
    Some(missing)
}

/// Calls held by trace trees and calls outside them (on the grammar path), over all ranks.
fn tree_calls(trace: &Trace) -> (u64, u64) {
    let mut inside = 0;
    let mut outside = 0;
    for entry in &trace.record.ranks {
        for (thread, &g) in entry.threads.iter().enumerate() {
            let grammar = trace.record.grammars[g as usize].len();
            outside += grammar;
            inside += trace.record.thread_calls(entry, thread) - grammar;
        }
    }
    (inside, outside)
}

/// Distinct records stored per vertex, summed.
fn vertex_records(forest: &Forest) -> usize {
    forest.vertices.iter().map(Vec::len).sum()
}

/// One line on the trace trees. The tree and the grammar path hold records: the MPI calls and
/// the buffer-release records (`segment_frees`), which are not MPI calls.
fn tree_summary(trace: &Trace, forest: &Forest, calls: u64, segment_frees: u64) -> String {
    let (inside, outside) = tree_calls(trace);
    let records = if segment_frees > 0 {
        format!(
            "{} records ({calls} MPI calls + {segment_frees} buffer-release records)",
            inside + outside
        )
    } else {
        format!("{} calls", inside + outside)
    };
    format!(
        "{} vertices, {} distinct vertex records, {} distinct thread trees; of its {records}, \
         {inside} in the tree and {outside} outside it (grammar path)",
        forest.structure.shape.len(),
        vertex_records(forest),
        forest.trees.len()
    )
}

/// The trace trees in `stats --json`: `calls_in_tree` and `calls_outside_tree` count records
/// (MPI calls and buffer-release records, `segment_frees`).
fn tree_json(trace: &Trace, forest: &Forest) -> serde_json::Value {
    let (inside, outside) = tree_calls(trace);
    serde_json::json!({
        "vertices": forest.structure.shape.len(),
        "vertex_records": vertex_records(forest),
        "thread_trees": forest.trees.len(),
        "calls_in_tree": inside,
        "calls_outside_tree": outside,
    })
}

/// The wrappers' own per-function counters, summed over bindings (a cross-check).
fn counter_counts(trace: &Trace) -> BTreeMap<String, Vec<u64>> {
    let mut counts: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for c in &trace.function_counts() {
        let entry = counts
            .entry(c.name.clone())
            .or_insert_with(|| vec![0; c.per_rank.len()]);
        entry.iter_mut().zip(&c.per_rank).for_each(|(a, b)| *a += b);
    }
    counts
}

fn calls_through(trace: &Trace, language: Language) -> u64 {
    trace
        .function_counts()
        .iter()
        .filter(|c| c.language == language)
        .flat_map(|c| &c.per_rank)
        .sum()
}

/// The calls a partial trace's ranks had entered but not finished when they stopped: the
/// wrappers count a call when it starts, the record holds it once it returns (`entered` by
/// the counters, `finished` recorded or left out). 0 for a complete trace.
fn calls_in_progress(partial: bool, entered: u64, finished: u64) -> u64 {
    if partial {
        entered.saturating_sub(finished)
    } else {
        0
    }
}

/// Prints the statistics of the trace at `path`.
pub fn print(path: &Path, json: bool) -> Result<ExitCode, String> {
    let mut out = String::new();
    let result = print_into(&mut out, path, json);
    crate::output::emit(&out)?;
    result
}

/// Writes what [`print()`] prints into `out`.
fn print_into(out: &mut String, path: &Path, json: bool) -> Result<ExitCode, String> {
    let TraceFile { bytes, trace } = TraceFile::open(path)?;
    let sections =
        conifer_trace::section_sizes(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut per_rank = grammar_counts(&trace)?;
    // `free` events (segments MPI used, freed by the program) are not MPI calls.
    let segment_frees: u64 = per_rank.remove("free").map_or(0, |v| v.iter().sum());
    let counters = counter_counts(&trace);
    let left_out = recording_filtered(&trace.meta.options, &per_rank)
        .then(|| not_recorded(&counters, &per_rank))
        .flatten();
    let counters_agree = counters == per_rank || left_out.is_some();
    let left_out = left_out.unwrap_or_default();
    let left_out_total: u64 = left_out.values().sum();
    let functions: BTreeMap<&str, u64> = per_rank
        .iter()
        .map(|(n, v)| (n.as_str(), v.iter().sum()))
        .collect();
    let calls: u64 = functions.values().sum();
    let rules: usize = trace.record.grammars.iter().map(|g| g.rule_count()).sum();
    let time_ns: f64 = trace.record.ranks.iter().map(|r| r.time.mpi_ns).sum();
    let m = &trace.meta;
    let timing = crate::stats_timing::TimingSummary::of(&trace, &sections);
    let names = signature_functions(&trace)?;
    if json {
        let value = serde_json::json!({
            "file_bytes": bytes.len(),
            "ranks": m.ranks,
            "calls": calls,
            "signatures": trace.record.signatures.len(),
            "signatures_by_function": signature_functions(&trace)?.into_iter().fold(
                BTreeMap::new(),
                |mut by, name| {
                    *by.entry(name).or_insert(0u64) += 1;
                    by
                }
            ),
            "unique_grammars": trace.record.grammars.len(),
            "trace_tree": trace.record.forest.as_ref().map(|f| tree_json(&trace, f)),
            "grammar_rules": rules,
            "time_in_mpi_ns": time_ns,
            "partial": m.partial,
            "partial_reasons": m.partial_reasons,
            "missing_ranks": m.missing_ranks,
            "mpi": m.mpi,
            "mpi_library_version": m.mpi_library_version,
            "command_line": m.command_line,
            "bytes_by_section": sections.iter().map(|(t, n)| (t.clone(), *n)).collect::<BTreeMap<_, _>>(),
            "calls_in_progress": calls_in_progress(
                m.partial,
                calls_through(&trace, Language::C) + calls_through(&trace, Language::Fortran),
                calls + left_out_total,
            ),
            "calls_by_language": {
                "c": calls_through(&trace, Language::C),
                "fortran": calls_through(&trace, Language::Fortran),
            },
            "counters_agree": counters_agree,
            "segment_frees": segment_frees,
            "functions": functions,
            "functions_per_rank": per_rank,
            "left_out": left_out,
            "timing": timing.json(&trace, &names),
            "message_log": crate::msglog_summary::of(path),
            "replayed_computation": replayed_computation(&trace),
        });
        outln!(
            out,
            "{}",
            serde_json::to_string_pretty(&value).expect("JSON value prints")
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        out,
        "trace       {} ({} bytes){}",
        path.display(),
        bytes.len(),
        if m.partial { "  PARTIAL" } else { "" }
    );
    if m.partial {
        outln!(out, "PARTIAL     {}", partial_summary(m));
    }
    outln!(out, "command     {}", m.command_line.join(" "));
    outln!(out, "mpi         {} ({})", m.mpi_library_version, m.mpi);
    outln!(out, "ranks       {}", m.ranks);
    let (c, fortran) = (
        calls_through(&trace, Language::C),
        calls_through(&trace, Language::Fortran),
    );
    let in_progress = calls_in_progress(m.partial, c + fortran, calls + left_out_total);
    let recorded = if left_out_total > 0 {
        format!("{calls} recorded of {} made", calls + left_out_total)
    } else if in_progress > 0 {
        format!("{calls} recorded")
    } else {
        calls.to_string()
    };
    let languages = if in_progress > 0 {
        format!(
            " + {in_progress} in progress when ranks stopped, not recorded ({} entered: {c} C, {fortran} Fortran)",
            c + fortran
        )
    } else {
        format!(" ({c} C, {fortran} Fortran)")
    };
    outln!(
        out,
        "calls       {recorded}{languages}, {} in MPI over all ranks",
        human_time(time_ns)
    );
    if segment_frees > 0 {
        outln!(
            out,
            "also        {segment_frees} buffer-release records (memory MPI used, freed by the \
             program): recorded beside the calls, not MPI calls"
        );
    }
    if left_out_total > 0 {
        let by_function: Vec<String> = left_out.iter().map(|(f, n)| format!("{f} {n}")).collect();
        outln!(
            out,
            "left out    {left_out_total} calls counted but not recorded (MPI_Pcontrol(0) phases, --exclude): {}",
            by_function.join(", ")
        );
    }
    if let Some(forest) = &trace.record.forest {
        outln!(
            out,
            "trace tree  {}",
            tree_summary(&trace, forest, calls, segment_frees)
        );
    }
    outln!(
        out,
        "compressed  {} signatures, {} distinct grammars ({} rules) for {} rank threads",
        trace.record.signatures.len(),
        trace.record.grammars.len(),
        rules,
        trace
            .record
            .ranks
            .iter()
            .map(|r| r.threads.len())
            .sum::<usize>()
    );
    let sizes: Vec<String> = sections.iter().map(|(t, n)| format!("{t} {n}")).collect();
    outln!(out, "sections    {}", sizes.join(", "));
    outln!(out, "timing      {}", timing.line());
    if let Some(log) = crate::msglog_summary::of(path) {
        outln!(out, "msglog      {}", log.line());
    }
    if let Some(how) = replayed_computation(&trace) {
        outln!(
            out,
            "replayed    computation measured by `conifer replay`: {how}"
        );
    }
    if let Some(line) = crate::stats_timing::clocks_line(&trace) {
        outln!(out, "clocks      {line}");
    }
    if !counters_agree && !m.partial {
        outln!(
            out,
            "warning     the wrappers' call counters disagree with the grammars"
        );
    }
    out.push('\n');
    outln!(
        out,
        "{:<28} {:>12} {:>10} {:>10}",
        "function",
        "calls",
        "min/rank",
        "max/rank"
    );
    let mut by_count: Vec<_> = per_rank.iter().collect();
    by_count.sort_by(|a, b| {
        functions[b.0.as_str()]
            .cmp(&functions[a.0.as_str()])
            .then(a.0.cmp(b.0))
    });
    for (name, counts) in by_count {
        let min = counts.iter().min().copied().unwrap_or(0);
        let max = counts.iter().max().copied().unwrap_or(0);
        outln!(
            out,
            "{name:<28} {:>12} {min:>10} {max:>10}",
            functions[name.as_str()]
        );
    }
    out.push_str(&crate::stats_timing::histogram_table(&trace, &names));
    Ok(ExitCode::SUCCESS)
}

/// How the computation of a trace written by `conifer replay` was measured (`None` for a
/// trace with its recorded computation).
fn replayed_computation(trace: &conifer_trace::Trace) -> Option<&str> {
    trace
        .meta
        .options
        .iter()
        .find_map(|o| o.strip_prefix(crate::replay_times::OPTION_PREFIX))
}
