//! `conifer diff A.cft B.cft`: two runs compared — calls and bytes per function and per call
//! site, the matrix difference, time per function, and per rank the first call where the
//! two call sequences differ. Exit status 0 when the traces are equal up to timing — or up
//! to buffer placement, when the only differences are where buffers lie (a sliced and a full
//! build of one program place their locals and heap blocks differently), which it says — 1
//! when not (2 for errors, as elsewhere).

use crate::output::{emit, emit_json};
use crate::profile::{self, Times};
use conifer_analyze::{human_bytes, Analysis, Site, Totals};
use conifer_trace::decode::{human_time, Call, CallReader};
use conifer_trace::timing::timing_family;
use conifer_trace::value::{Buffer, Value};
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
            Some(source) if crate::callsites::has_line(source) => {
                format!("{} {source}", st.function)
            }
            source => format!(
                "{} {} {offset:#x}",
                st.function,
                source.as_deref().unwrap_or("?")
            ),
        },
        Site::Family(f) => {
            let bytes = trace
                .record
                .timing
                .get(*f as usize)
                .and_then(|f| trace.record.signatures.get(f.terminal as usize))
                .map(|s| timing_family(s))
                .unwrap_or_default();
            format!("{} family {}", st.function, fnv(&bytes))
        }
        Site::Signature(t) => {
            let bytes = trace
                .record
                .signatures
                .get(*t as usize)
                .cloned()
                .unwrap_or_default();
            format!("{} signature {}", st.function, fnv(&bytes))
        }
    }
}

/// A short stable hash of bytes (FNV-1a, 32 bits of it, hex).
fn fnv(bytes: &[u8]) -> String {
    format!("{:08x}", conifer_spec::fnv::fnv1a(bytes) >> 32)
}

/// How calls are compared.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Compare {
    /// Every argument as recorded.
    Exact,
    /// Buffers in memory (a heap or static segment at an offset, the stack at an offset) are
    /// all one value; `NULL`, `MPI_IN_PLACE` and `MPI_BOTTOM` stay themselves.
    BufferPlacementAside,
    /// Buffer placement aside, and statuses (sources, tags, received bytes) too: what a run
    /// sliced with `--slice` makes up for the calls it skips.
    StatusesAside,
}

/// `v` as compared under `how`.
fn compared(v: &Value, how: Compare) -> Option<Value> {
    if how == Compare::Exact {
        return None;
    }
    match v {
        Value::Buffer(Buffer::Segment { .. } | Buffer::Stack { .. }) => {
            Some(Value::Str("memory".into()))
        }
        Value::Status(_) if how == Compare::StatusesAside => Some(Value::Str("status".into())),
        Value::Array(items)
            if items
                .iter()
                .any(|i| matches!(i, Value::Buffer(_) | Value::Status(_))) =>
        {
            Some(Value::Array(
                items
                    .iter()
                    .map(|i| compared(i, how).unwrap_or_else(|| i.clone()))
                    .collect(),
            ))
        }
        _ => None,
    }
}

/// A call as compared: function, every argument with ranks restored, return value.
fn call_text(c: &Call, how: Compare) -> String {
    let mut s = format!("{}(", c.name);
    for (i, v) in c.signature.values.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        if let Some(slot) = c.slots.get(i) {
            let _ = write!(s, "{slot}=");
        }
        match compared(v, how) {
            Some(blank) => {
                let _ = write!(s, "{}", blank.display(c.position(i)));
            }
            None => {
                let _ = write!(s, "{}", v.display(c.position(i)));
            }
        }
    }
    let _ = write!(s, ") = {}", c.signature.ret);
    s
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
    let times = profile::times(&trace, &analysis);
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
            let _ = writeln!(s, "\n{} call sites differ:", site_diffs.len());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// With placement aside, any two buffers in memory compare equal, inside arrays too, but
    /// not with `NULL` or `MPI_IN_PLACE`; exactly, nothing is rewritten.
    #[test]
    fn placement_aside_blanks_only_buffers_in_memory() {
        let heap = Value::Buffer(Buffer::Segment {
            id: 0,
            offset: 3416,
        });
        let stack = Value::Buffer(Buffer::Stack { offset: 112 });
        let aside = |v: &Value| compared(v, Compare::BufferPlacementAside);
        assert_eq!(aside(&heap), aside(&stack));
        assert!(aside(&heap).is_some());
        assert_eq!(aside(&Value::Buffer(Buffer::Null)), None);
        assert_eq!(aside(&Value::Buffer(Buffer::InPlace)), None);
        assert_eq!(aside(&Value::Int(3416)), None);
        let arrays = (
            Value::Array(vec![heap.clone(), Value::Buffer(Buffer::Null)]),
            Value::Array(vec![stack.clone(), Value::Buffer(Buffer::Null)]),
        );
        assert_eq!(aside(&arrays.0), aside(&arrays.1));
        assert_ne!(
            aside(&arrays.0),
            aside(&Value::Array(vec![heap.clone(), heap.clone()]))
        );
        assert_eq!(compared(&heap, Compare::Exact), None);
        // Statuses are set aside only with StatusesAside, alone or in arrays.
        let status = |bytes| {
            Value::Status(conifer_trace::value::Status {
                source: conifer_trace::value::Rank::Absolute(3),
                tag: 1,
                error: 0,
                bytes,
            })
        };
        let statuses = Compare::StatusesAside;
        assert_eq!(aside(&status(800)), None);
        assert_eq!(
            compared(&status(800), statuses),
            compared(&status(8192), statuses)
        );
        assert_eq!(
            compared(&Value::Array(vec![status(800)]), statuses),
            compared(&Value::Array(vec![status(8192)]), statuses)
        );
        assert_eq!(compared(&heap, statuses), aside(&heap));
    }
}
