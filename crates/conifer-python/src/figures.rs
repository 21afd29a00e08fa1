//! The statistics of a whole trace, computed by `conifer-analyze` on the compressed form as
//! the CLI computes them: the per-function profile, per-rank figures and the matrix.

use conifer_analyze::rank_figures::rank_figures;
use conifer_analyze::{MatrixSelect, Totals, UnknownWord};
use conifer_trace::timing_mode::TimingMode;
use conifer_trace::Trace;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The trace's analysis (an error in one line).
fn analysis(trace: &Trace) -> PyResult<conifer_analyze::Analysis> {
    conifer_analyze::analyze(trace, &mut |_, _| {})
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The timing the trace kept (`aggregate`, `histogram`, `lossless`, `lossy:REL`).
pub fn timing_name(trace: &Trace) -> String {
    TimingMode::recorded(&trace.meta.options).to_string()
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

/// Per function: calls, bytes sent, received (arrived) and posted (receive capacity), and time
/// in MPI summed over ranks (without the recorder).
pub fn profile<'py>(py: Python<'py>, trace: &Trace) -> PyResult<Bound<'py, PyDict>> {
    let a = analysis(trace)?;
    let figures = rank_figures(trace);
    let names: Vec<&String> = a.functions.keys().collect();
    let exact = !figures.is_empty() && figures.iter().all(|f| f.exact);
    let time = |name: &str| -> Option<u64> {
        exact.then(|| figures.iter().filter_map(|f| f.functions.get(name)).sum())
    };
    let totals = |field: fn(&Totals) -> u64| -> Vec<u64> {
        names.iter().map(|n| field(&a.functions[*n])).collect()
    };
    let d = PyDict::new(py);
    d.set_item("function", names.clone())?;
    d.set_item("calls", totals(|t| t.calls))?;
    d.set_item("bytes_sent", totals(|t| t.bytes_sent))?;
    d.set_item("bytes_received", totals(|t| t.bytes_received))?;
    d.set_item("bytes_posted", totals(|t| t.bytes_posted))?;
    d.set_item("time_ns", names.iter().map(|n| time(n)).collect::<Vec<_>>())?;
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
        "mpi_percent",
        figures.iter().map(|f| f.mpi_percent()).collect::<Vec<_>>(),
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
