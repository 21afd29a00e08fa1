//! `conifer diff A.cft B.cft`: two runs compared — calls and bytes per function and per call
//! site, the matrix difference, time per function, and per rank the first call where the
//! two call sequences differ. Exit status 0 when the traces are equal up to timing — or up
//! to buffer placement, when the only differences are where buffers lie (a sliced and a full
//! build of one program place their locals and heap blocks differently), which it says — 1
//! when not (2 for errors, as elsewhere).

use crate::diff_order::{call_text, same_up_to_completion_order, Compare};
use crate::output::{emit, emit_json};
use conifer_analyze::site_names::{family_hash, signature_hash, what_sites_are};
use conifer_analyze::times::{times, Times};
use conifer_analyze::{human_bytes, Analysis, Site, Totals};
use conifer_trace::decode::{human_time, Call, CallReader};
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

/// A call site as both traces can name it: a structure-tree site by its source position
/// and id, a recorded caller by its source line (builds differ in offsets; without line
/// information, by its offset too), a timing family by its (blanked) signature.
fn site_key(trace: &Trace, site: &Site, st: &conifer_analyze::SiteStats) -> String {
    match site {
        Site::Tree(id) => format!("{} [v{id}]", st.source.as_deref().unwrap_or("?")),
        Site::Address { offset, .. } => match &st.source {
            Some(source) if conifer_analyze::callers::has_line(source) => {
                format!("{} {source}", st.function)
            }
            source => format!(
                "{} {} {offset:#x}",
                st.function,
                source.as_deref().unwrap_or("?")
            ),
        },
        Site::Family(f) => format!("{} family {}", st.function, family_hash(trace, *f)),
        Site::Signature(t) => format!("{} signature {}", st.function, signature_hash(trace, *t)),
    }
}

/// The first call that differs: its index, the call in A and in B (`None`: no more calls).
type Divergence = (u64, Option<String>, Option<String>);

/// Where rank `rank`'s calls first differ when compared `how` (the two calls as recorded),
/// `None` if they do not.
fn divergence(
    a: &CallReader,
    b: &CallReader,
    rank: u32,
    how: Compare,
) -> Result<Option<Divergence>, String> {
    let mut ia = a.calls(rank);
    let mut ib = b.calls(rank);
    let mut index = 0u64;
    loop {
        let ca = ia.next().transpose().map_err(|e| e.0)?;
        let cb = ib.next().transpose().map_err(|e| e.0)?;
        match (ca, cb) {
            (None, None) => return Ok(None),
            (ca, cb) => {
                let ta = ca.as_ref().map(|c| call_text(c, how));
                let tb = cb.as_ref().map(|c| call_text(c, how));
                if ta != tb {
                    let exact = |c: &Option<Call>| c.as_ref().map(|c| call_text(c, Compare::Exact));
                    return Ok(Some((index, exact(&ca), exact(&cb))));
                }
            }
        }
        index += 1;
    }
}

struct Side {
    trace: Trace,
    analysis: Analysis,
    times: Times,
}

fn side(path: &Path) -> Result<Side, String> {
    let trace = conifer_trace::open(path)?;
    let analysis = crate::analysis::analyze(&trace, &Default::default())?;
    let times = times(&trace, &analysis);
    Ok(Side {
        trace,
        analysis,
        times,
    })
}

fn sites(s: &Side) -> BTreeMap<String, Totals> {
    let mut m: BTreeMap<String, Totals> = BTreeMap::new();
    for (site, st) in &s.analysis.sites {
        let t = m.entry(site_key(&s.trace, site, st)).or_default();
        t.calls += st.totals.calls;
        t.bytes_sent += st.totals.bytes_sent;
        t.bytes_received += st.totals.bytes_received;
    }
    m
}

/// Rows of a per-key comparison where the totals differ.
fn compare(
    a: &BTreeMap<String, Totals>,
    b: &BTreeMap<String, Totals>,
) -> Vec<(String, Totals, Totals)> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (x, y) = (
                a.get(k).copied().unwrap_or_default(),
                b.get(k).copied().unwrap_or_default(),
            );
            (x != y).then(|| (k.clone(), x, y))
        })
        .collect()
}

/// Runs `conifer diff`.
pub fn run(pa: &Path, pb: &Path, json: bool) -> Result<ExitCode, String> {
    let a = side(pa)?;
    let b = side(pb)?;
    let fa = &a.analysis.functions;
    let fb = &b.analysis.functions;
    let functions = compare(fa, fb);
    let site_diffs = compare(&sites(&a), &sites(&b));
    let same_ranks = a.trace.meta.ranks == b.trace.meta.ranks;
    // Matrix difference (bytes, all kinds), B − A.
    let mut matrix: Vec<(u32, u32, i128)> = Vec::new();
    if same_ranks {
        let n = a.trace.meta.ranks;
        for i in 0..n {
            for j in 0..n {
                let x = a.analysis.matrix.get(i, j, false, true, true);
                let y = b.analysis.matrix.get(i, j, false, true, true);
                if x != y {
                    matrix.push((i, j, i128::from(y) - i128::from(x)));
                }
            }
        }
    }
    // Ranks whose calls differ exactly, those that still differ with buffer placement aside,
    // and how many of those differ in nothing but statuses.
    let mut moved = Vec::new();
    let mut diverging = Vec::new();
    let mut statuses_only = 0usize;
    if same_ranks {
        let bar = crate::output::progress("comparing calls", u64::from(a.trace.meta.ranks));
        let (ra, rb) = (a.trace.reader(), b.trace.reader());
        for r in 0..a.trace.meta.ranks {
            if let Some(d) = divergence(&ra, &rb, r, Compare::Exact)? {
                match divergence(&ra, &rb, r, Compare::BufferPlacementAside)? {
                    Some(d) => {
                        let aside = divergence(&ra, &rb, r, Compare::StatusesAside)?;
                        statuses_only += usize::from(aside.is_none());
                        diverging.push((r, d));
                    }
                    None => moved.push((r, d)),
                }
            }
            bar.set_position(u64::from(r) + 1);
        }
        bar.finish_and_clear();
    }
    let equal = same_ranks && diverging.is_empty();
    let exact = equal && moved.is_empty();
    // Runs that diverge may still make the same calls up to the order requests completed.
    let mut completion_order_only = !diverging.is_empty();
    if completion_order_only {
        let (ra, rb) = (a.trace.reader(), b.trace.reader());
        for (r, _) in &diverging {
            if !same_up_to_completion_order(&ra, &rb, *r)? {
                completion_order_only = false;
                break;
            }
        }
    }
    let fn_times: BTreeSet<&String> = a
        .times
        .functions
        .keys()
        .chain(b.times.functions.keys())
        .collect();
    let time_rows: Vec<(&String, f64, f64)> = fn_times
        .into_iter()
        .map(|f| {
            (
                f,
                a.times.functions.get(f).map_or(0.0, |t| t.total_ns),
                b.times.functions.get(f).map_or(0.0, |t| t.total_ns),
            )
        })
        .collect();
    if json {
        let tot = |t: &Totals| serde_json::json!({"calls": t.calls, "bytes_sent": t.bytes_sent, "bytes_received": t.bytes_received});
        emit_json(&serde_json::json!({
            "a": pa.display().to_string(),
            "b": pb.display().to_string(),
            "equal_up_to_timing": exact,
            "equal_up_to_buffer_placement": equal,
            "equal_up_to_completion_order": equal || completion_order_only,
            "ranks_differing_only_in_statuses": statuses_only,
            "ranks": [a.trace.meta.ranks, b.trace.meta.ranks],
            "functions": functions.iter().map(|(k, x, y)| serde_json::json!({"function": k, "a": tot(x), "b": tot(y)})).collect::<Vec<_>>(),
            "call_sites": site_diffs.iter().map(|(k, x, y)| serde_json::json!({"site": k, "a": tot(x), "b": tot(y)})).collect::<Vec<_>>(),
            "matrix_bytes_b_minus_a": matrix.iter().map(|(i, j, d)| serde_json::json!({"from": i, "to": j, "delta": d.to_string()})).collect::<Vec<_>>(),
            "time_per_function_ns": time_rows.iter().map(|(f, x, y)| serde_json::json!({"function": f, "a": x, "b": y})).collect::<Vec<_>>(),
            "first_moved_buffer": moved.iter().map(|(r, (i, x, y))| serde_json::json!({"rank": r, "call": i, "a": x, "b": y})).collect::<Vec<_>>(),
            "first_divergence": diverging.iter().map(|(r, (i, x, y))| serde_json::json!({"rank": r, "call": i, "a": x, "b": y})).collect::<Vec<_>>(),
        }))?;
    } else {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "A {} ({} ranks)\nB {} ({} ranks)",
            pa.display(),
            a.trace.meta.ranks,
            pb.display(),
            b.trace.meta.ranks
        );
        if !same_ranks {
            let _ = writeln!(s, "the runs have different rank counts");
        }
        if functions.is_empty() {
            let _ = writeln!(s, "\ncalls and bytes per function: equal");
        } else {
            let _ = writeln!(
                s,
                "\n{:<26} {:>10} {:>10} {:>11} {:>11}",
                "function", "calls A", "calls B", "sent A", "sent B"
            );
            for (k, x, y) in &functions {
                let _ = writeln!(
                    s,
                    "{k:<26} {:>10} {:>10} {:>11} {:>11}",
                    x.calls,
                    y.calls,
                    human_bytes(x.bytes_sent),
                    human_bytes(y.bytes_sent)
                );
            }
        }
        if site_diffs.is_empty() {
            let _ = writeln!(s, "calls and bytes per call site: equal");
        } else {
            let _ = writeln!(
                s,
                "\n{} call sites differ ({}):",
                site_diffs.len(),
                what_sites_are(&a.trace, &a.analysis)
            );
            for (k, x, y) in site_diffs.iter().take(20) {
                let _ = writeln!(
                    s,
                    "  {k:<44} calls {} -> {}, sent {} -> {}",
                    x.calls,
                    y.calls,
                    human_bytes(x.bytes_sent),
                    human_bytes(y.bytes_sent)
                );
            }
        }
        if same_ranks {
            if matrix.is_empty() {
                let _ = writeln!(s, "matrix: equal");
            } else {
                let _ = writeln!(
                    s,
                    "\nmatrix: {} entries differ (bytes, B - A):",
                    matrix.len()
                );
                let mut m = matrix.clone();
                m.sort_by_key(|e| std::cmp::Reverse(e.2.abs()));
                for (i, j, d) in m.iter().take(20) {
                    let _ = writeln!(s, "  {i:>6} -> {j:<6} {d:+}");
                }
            }
        }
        let _ = writeln!(s, "\n{:<26} {:>12} {:>12}", "time per function", "A", "B");
        for (f, x, y) in &time_rows {
            let _ = writeln!(s, "{f:<26} {:>12} {:>12}", human_time(*x), human_time(*y));
        }
        if !same_ranks {
            let _ = writeln!(
                s,
                "\nthe runs have {} and {} ranks: their calls are not compared rank by rank \
                 (compare the totals above)",
                a.trace.meta.ranks, b.trace.meta.ranks
            );
        } else if exact {
            let _ = writeln!(s, "\nevery rank makes the same calls: equal up to timing");
        } else if equal {
            let _ = writeln!(
                s,
                "\nevery rank makes the same calls with the same arguments, but {} ranks pass \
                 buffers at other addresses: equal up to buffer placement",
                moved.len()
            );
            if let Some((r, (i, x, y))) = moved.first() {
                let _ = writeln!(
                    s,
                    "  first: rank {r} call #{i}\n    A: {}\n    B: {}",
                    x.as_deref().unwrap_or("(no more calls)"),
                    y.as_deref().unwrap_or("(no more calls)")
                );
            }
        } else {
            if completion_order_only {
                let _ = writeln!(
                    s,
                    "\nequal up to completion order: every rank makes the same calls but for \
                     the order in which requests completed (the indices, flags and statuses \
                     of Waitany/Testany/Waitsome/Testsome/Test/Testall/Iprobe, the request \
                     slots already null, and how often a completion loop polls)"
                );
            }
            let _ = writeln!(
                s,
                "\n{} ranks diverge; first call that differs:",
                diverging.len()
            );
            for (r, (i, x, y)) in diverging.iter().take(32) {
                let _ = writeln!(
                    s,
                    "  rank {r} call #{i}\n    A: {}\n    B: {}",
                    x.as_deref().unwrap_or("(no more calls)"),
                    y.as_deref().unwrap_or("(no more calls)")
                );
            }
            if statuses_only > 0 {
                let _ = writeln!(
                    s,
                    "{statuses_only} of them differ in nothing but statuses (sources, tags, \
                     received bytes): a run sliced with --slice makes up the statuses of the \
                     calls it skips; `conifer proxy --check A --against B` compares such runs \
                     without them"
                );
            }
        }
        emit(&s)?;
    }
    Ok(if equal {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
