//! The trace object Python holds: an opened trace and the methods the package builds its
//! tables from.

use crate::{calls, figures, waits};
use conifer_trace::Trace;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;

/// An opened Conifer trace (`conifer._conifer.open`).
#[pyclass(name = "NativeTrace", module = "conifer._conifer", frozen)]
pub struct PyTrace {
    trace: Trace,
}

impl PyTrace {
    /// Opens and parses the trace at `path`.
    pub fn open(path: &Path) -> PyResult<PyTrace> {
        let trace = conifer_trace::open(path).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PyTrace { trace })
    }
}

#[pymethods]
impl PyTrace {
    /// Number of ranks (the size of `MPI_COMM_WORLD`).
    #[getter]
    fn ranks(&self) -> u32 {
        self.trace.meta.ranks
    }

    /// The run's metadata as a dict: command line, MPI, ranks, options, hosts per rank,
    /// partial-trace facts, the timing kept.
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let meta = &self.trace.meta;
        let d = PyDict::new(py);
        d.set_item("command_line", meta.command_line.clone())?;
        d.set_item("mpi", &meta.mpi)?;
        d.set_item("mpi_library_version", &meta.mpi_library_version)?;
        d.set_item("conifer_version", &meta.conifer_version)?;
        d.set_item("ranks", meta.ranks)?;
        d.set_item("start_unix_seconds", meta.start_unix_seconds)?;
        d.set_item("options", meta.options.clone())?;
        d.set_item("partial", meta.partial)?;
        d.set_item("missing_ranks", meta.missing_ranks.clone())?;
        d.set_item("partial_reasons", meta.partial_reasons.clone())?;
        let hosts: Vec<&str> = self
            .trace
            .record
            .ranks
            .iter()
            .map(|r| r.host.as_str())
            .collect();
        d.set_item("hosts", hosts)?;
        d.set_item(
            "timing",
            conifer_analyze::times::recorded_timing(&self.trace),
        )?;
        d.set_item("calls", figures::total_calls(&self.trace))?;
        Ok(d)
    }

    /// The calls of `rank` as columns (a dict of equal-length lists), keeping only
    /// `functions` when given; see `conifer.Trace.calls` for the columns.
    #[pyo3(signature = (rank, functions=None))]
    fn call_columns<'py>(
        &self,
        py: Python<'py>,
        rank: u32,
        functions: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        if rank >= self.trace.meta.ranks {
            return Err(PyValueError::new_err(format!(
                "rank {rank} does not exist: the trace has ranks 0-{}",
                self.trace.meta.ranks.saturating_sub(1)
            )));
        }
        calls::columns(py, &self.trace, rank, functions.as_deref())
    }

    /// Per MPI function: calls, bytes sent and received, and time inside MPI (without the
    /// recorder), computed on the compressed form as `conifer profile` does.
    fn profile_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        figures::profile(py, &self.trace)
    }

    /// Per call site: name, function, `file:line`, calls, bytes and times, as `conifer
    /// profile` lists them.
    fn site_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        figures::sites(py, &self.trace)
    }

    /// Wait states per (pattern, rank, call site), as `conifer waits` computes them.
    fn wait_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        waits::entries(py, &self.trace)
    }

    /// The critical path's shares, segments and facts (`None` when no rank made a call).
    fn critical_path<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        waits::critical_path(py, &self.trace)
    }

    /// Per rank: span as run, time in MPI and between calls without the recorder, the
    /// recorder's own time.
    fn rank_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        figures::ranks(py, &self.trace)
    }

    /// The rank × rank matrix (rows senders, columns receivers) of `kind` (`p2p`, `coll`,
    /// `all`) and `metric` (`bytes`, `messages`), as `conifer matrix` computes it.
    #[pyo3(signature = (kind="p2p", metric="bytes"))]
    fn matrix_rows(&self, kind: &str, metric: &str) -> PyResult<Vec<Vec<u64>>> {
        figures::matrix(&self.trace, kind, metric)
    }
}
