//! The statistics of a whole trace as columns, every figure from `conifer-analyze` (the same
//! functions `conifer profile`, `report` and `matrix` format): the per-function and per-site
//! profile, per-rank figures and the matrix.

use conifer_analyze::rank_figures::rank_figures;
use conifer_analyze::site_names::site_label;
use conifer_analyze::times::{sorted_sites, times, Time};
use conifer_analyze::{MatrixSelect, Totals, UnknownWord};
use conifer_trace::Trace;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The trace's analysis, its recorded callers named (an error in one line).
pub fn analysis(trace: &Trace) -> PyResult<conifer_analyze::Analysis> {
    let mut a = conifer_analyze::analyze(trace, &mut |_, _| {})
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    conifer_analyze::callers::name_sites(&trace.meta, &mut a);
    Ok(a)
}

/// Calls recorded, over all ranks and threads (from the grammars and trees, not expanded).
pub fn total_calls(trace: &Trace) -> u64 {
    let record = &trace.record;
    record
        .ranks
        .iter()
        .map(|entry| {
            (0..entry.threads.len())
                .map(|t| record.thread_calls(entry, t))
                .sum::<u64>()
        })
        .sum()
}

/// Sets the time columns (`time_ns`, `mean_ns`, `min_ns`, `max_ns`) of `times` on `d`.
fn set_times(d: &Bound<'_, PyDict>, times: &[Time]) -> PyResult<()> {
    d.set_item(
        "time_ns",
        times.iter().map(|t| t.total_ns).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "mean_ns",
        times.iter().map(Time::mean_ns).collect::<Vec<_>>(),
    )?;
    d.set_item("min_ns", times.iter().map(|t| t.min_ns).collect::<Vec<_>>())?;
    d.set_item("max_ns", times.iter().map(|t| t.max_ns).collect::<Vec<_>>())?;
    Ok(())
}

/// Sets the count and byte columns of `totals` on `d`.
fn set_totals(d: &Bound<'_, PyDict>, totals: &[&Totals]) -> PyResult<()> {
    let column =
        |field: fn(&Totals) -> u64| -> Vec<u64> { totals.iter().map(|t| field(t)).collect() };
    d.set_item("calls", column(|t| t.calls))?;
    d.set_item("bytes_sent", column(|t| t.bytes_sent))?;
    d.set_item("bytes_received", column(|t| t.bytes_received))?;
    d.set_item("bytes_posted", column(|t| t.bytes_posted))?;
    Ok(())
}

/// Per function: calls, bytes sent, received (arrived) and posted (receive capacity), and
/// time in MPI summed over ranks (without the recorder), as `conifer profile` prints them.
pub fn profile<'py>(py: Python<'py>, trace: &Trace) -> PyResult<Bound<'py, PyDict>> {
    let a = analysis(trace)?;
    let t = times(trace, &a);
    let names: Vec<&String> = a.functions.keys().collect();
    let d = PyDict::new(py);
    d.set_item("function", names.clone())?;
    set_totals(
        &d,
        &names.iter().map(|n| &a.functions[*n]).collect::<Vec<_>>(),
    )?;
    let function_times: Vec<Time> = names
        .iter()
        .map(|n| t.functions.get(*n).copied().unwrap_or_default())
        .collect();
    set_times(&d, &function_times)?;
    Ok(d)
}

/// Per call site (longest time first): its name as `conifer profile --json` gives it, the
/// function, `file:line` where known, calls, bytes and times.
pub fn sites<'py>(py: Python<'py>, trace: &Trace) -> PyResult<Bound<'py, PyDict>> {
    let a = analysis(trace)?;
    let t = times(trace, &a);
    let rows = sorted_sites(&a, &t);
    let d = PyDict::new(py);
    d.set_item(
        "site",
        rows.iter()
            .map(|(s, st, _)| site_label(trace, s, &st.function, st.source.as_deref()))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "function",
        rows.iter()
            .map(|r| r.1.function.as_str())
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "source",
        rows.iter()
            .map(|r| r.1.source.as_deref())
            .collect::<Vec<_>>(),
    )?;
    set_totals(&d, &rows.iter().map(|r| &r.1.totals).collect::<Vec<_>>())?;
    set_times(&d, &rows.iter().map(|r| r.2).collect::<Vec<_>>())?;
    Ok(d)
}

/// Per rank: span as run, MPI and computation time without the recorder, the recorder's time.
pub fn ranks<'py>(py: Python<'py>, trace: &Trace) -> PyResult<Bound<'py, PyDict>> {
    let figures = rank_figures(trace);
    let d = PyDict::new(py);
    d.set_item("rank", figures.iter().map(|f| f.rank).collect::<Vec<_>>())?;
    d.set_item(
        "span_ns",
        figures.iter().map(|f| f.span_ns).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "mpi_ns",
        figures.iter().map(|f| f.mpi_ns).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "compute_ns",
        figures.iter().map(|f| f.compute_ns).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "recorder_ns",
        figures.iter().map(|f| f.recorder_ns).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "init_ns",
        figures.iter().map(|f| f.init_ns()).collect::<Vec<_>>(),
    )?;
    // Which figures are exact sums, and the error the others carry.
    d.set_item("exact", figures.iter().map(|f| f.exact).collect::<Vec<_>>())?;
    d.set_item(
        "relative_error",
        figures.iter().map(|f| f.relative_error).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "error_floor_ns",
        figures.iter().map(|f| f.error_floor_ns).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "mpi_percent",
        figures.iter().map(|f| f.mpi_percent()).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "mpi_percent_after_init",
        figures
            .iter()
            .map(|f| f.mpi_percent_after_init())
            .collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// The matrix rows of `kind` and `metric`, as `conifer matrix --json` prints them.
pub fn matrix(trace: &Trace, kind: &str, metric: &str) -> PyResult<Vec<Vec<u64>>> {
    let select = MatrixSelect::from_words(metric, kind).map_err(|word| {
        PyValueError::new_err(match word {
            UnknownWord::Metric(m) => format!("unknown metric {m:?}: use bytes or messages"),
            UnknownWord::Kind(k) => format!("unknown kind {k:?}: use p2p, coll or all"),
        })
    })?;
    Ok(select.rows(&analysis(trace)?.matrix))
}
