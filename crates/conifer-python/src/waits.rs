//! Wait states and the critical path as columns, from `conifer_analyze::waits` (what
//! `conifer waits` prints); traces without per-call timing raise `ValueError` saying so.

use conifer_analyze::callers::Resolver;
use conifer_analyze::site_names::site_label;
use conifer_analyze::waits::{self, Waits};
use conifer_analyze::Site;
use conifer_trace::caller::Caller;
use conifer_trace::Trace;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The wait states of `trace` (an error in one line).
fn compute(trace: &Trace) -> PyResult<Waits> {
    waits::analyze(trace, &mut |_, _| {}).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Per (pattern, rank, call site), largest first: the pattern's `--json` name, the rank, the
/// function, the site's name as `conifer waits` gives it, its `file:line` where known, the
/// waiting time and the calls that waited.
pub fn entries<'py>(py: Python<'py>, trace: &Trace) -> PyResult<Bound<'py, PyDict>> {
    let w = compute(trace)?;
    let mut resolver = Resolver::new(&trace.meta);
    let sources: Vec<Option<String>> = w
        .entries
        .iter()
        .map(|e| match e.site {
            Site::Address { module, offset } => Some(resolver.name(Caller { module, offset })),
            _ => e.source.clone(),
        })
        .collect();
    let e = &w.entries;
    let d = PyDict::new(py);
    d.set_item(
        "pattern",
        e.iter().map(|e| e.pattern.key()).collect::<Vec<_>>(),
    )?;
    d.set_item("rank", e.iter().map(|e| e.rank).collect::<Vec<_>>())?;
    d.set_item(
        "function",
        e.iter().map(|e| e.function.as_str()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "site",
        e.iter()
            .zip(&sources)
            .map(|(e, s)| site_label(trace, &e.site, &e.function, s.as_deref()))
            .collect::<Vec<_>>(),
    )?;
    d.set_item("source", sources)?;
    d.set_item("time_ns", e.iter().map(|e| e.time_ns).collect::<Vec<_>>())?;
    d.set_item(
        "instances",
        e.iter().map(|e| e.instances).collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// The critical path: `shares` (per rank and activity, largest first), `segments` (the path
/// from start to end, ns on the synchronised clock) and its facts (`length_ns`, `end_rank`,
/// `ends_at_finalize`, `jumps`, `segments_truncated`); `None` when no rank made a call.
pub fn critical_path<'py>(py: Python<'py>, trace: &Trace) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(p) = compute(trace)?.critical_path else {
        return Ok(None);
    };
    let shares = PyDict::new(py);
    shares.set_item("rank", p.shares.iter().map(|s| s.rank).collect::<Vec<_>>())?;
    shares.set_item(
        "activity",
        p.shares
            .iter()
            .map(|s| s.activity.as_str())
            .collect::<Vec<_>>(),
    )?;
    shares.set_item(
        "time_ns",
        p.shares.iter().map(|s| s.time_ns).collect::<Vec<_>>(),
    )?;
    let segments = PyDict::new(py);
    let s = &p.segments;
    segments.set_item("rank", s.iter().map(|s| s.rank).collect::<Vec<_>>())?;
    segments.set_item(
        "activity",
        s.iter().map(|s| s.activity.as_str()).collect::<Vec<_>>(),
    )?;
    segments.set_item("start_ns", s.iter().map(|s| s.start_ns).collect::<Vec<_>>())?;
    segments.set_item("end_ns", s.iter().map(|s| s.end_ns).collect::<Vec<_>>())?;
    let d = PyDict::new(py);
    d.set_item("shares", shares)?;
    d.set_item("segments", segments)?;
    d.set_item("length_ns", p.length_ns())?;
    d.set_item("end_rank", p.end_rank)?;
    d.set_item("ends_at_finalize", p.ends_at_finalize)?;
    d.set_item("jumps", p.jumps)?;
    d.set_item("segments_truncated", p.segments_truncated)?;
    Ok(Some(d))
}
