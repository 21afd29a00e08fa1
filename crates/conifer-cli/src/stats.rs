//! `conifer stats`: what a trace says about a run.

use conifer_trace::{Language, Trace};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// Reads and validates a trace file, with a one-line error that names the file.
pub fn load(path: &Path) -> Result<Trace, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Trace::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Per-function totals over all ranks and both bindings, by name.
fn totals(trace: &Trace) -> BTreeMap<&str, u64> {
    let mut totals = BTreeMap::new();
    for c in &trace.counts {
        *totals.entry(c.name.as_str()).or_insert(0) += c.per_rank.iter().sum::<u64>();
    }
    totals
}

fn calls_through(trace: &Trace, language: Language) -> u64 {
    trace
        .counts
        .iter()
        .filter(|c| c.language == language)
        .flat_map(|c| &c.per_rank)
        .sum()
}

/// Prints the statistics of the trace at `path`.
pub fn print(path: &Path, json: bool) -> Result<ExitCode, String> {
    let trace = load(path)?;
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let functions = totals(&trace);
    let calls: u64 = functions.values().sum();
    if json {
        let value = serde_json::json!({
            "file_bytes": file_bytes,
            "ranks": trace.meta.ranks,
            "calls": calls,
            "partial": trace.meta.partial,
            "mpi": trace.meta.mpi,
            "mpi_library_version": trace.meta.mpi_library_version,
            "command_line": trace.meta.command_line,
            "calls_by_language": {
                "c": calls_through(&trace, Language::C),
                "fortran": calls_through(&trace, Language::Fortran),
            },
            "functions": functions,
            "functions_per_rank": trace.counts.iter().map(|c| serde_json::json!({
                "name": c.name, "language": c.language, "per_rank": c.per_rank,
            })).collect::<Vec<_>>(),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&value).expect("JSON value prints")
        );
        return Ok(ExitCode::SUCCESS);
    }
    let m = &trace.meta;
    println!(
        "trace      {} ({file_bytes} bytes){}",
        path.display(),
        if m.partial { "  PARTIAL" } else { "" }
    );
    println!("command    {}", m.command_line.join(" "));
    println!("mpi        {} ({})", m.mpi_library_version, m.mpi);
    println!("ranks      {}", m.ranks);
    println!(
        "calls      {calls} ({} C, {} Fortran)",
        calls_through(&trace, Language::C),
        calls_through(&trace, Language::Fortran)
    );
    println!();
    println!(
        "{:<28} {:>12} {:>10} {:>10}",
        "function", "calls", "min/rank", "max/rank"
    );
    let mut by_count: Vec<_> = functions.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (name, total) in by_count {
        let (min, max) = trace
            .counts
            .iter()
            .filter(|c| c.name == *name)
            .fold(vec![0u64; m.ranks as usize], |mut acc, c| {
                acc.iter_mut().zip(&c.per_rank).for_each(|(a, b)| *a += b);
                acc
            })
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        println!("{name:<28} {total:>12} {min:>10} {max:>10}");
    }
    Ok(ExitCode::SUCCESS)
}
