//! The native half of the `conifer` Python package (`conifer._conifer`): Conifer's read side
//! (`conifer-trace`) and analysis (`conifer-analyze`) behind a small Python API, returning
//! plain columns that `python/conifer/__init__.py` turns into pandas tables. Nothing here
//! parses the format: every call comes from the read side's iterators, every statistic from
//! the analysis the CLI runs on the compressed form.

mod calls;
mod columns;
mod figures;
mod trace;
mod waits;

use pyo3::prelude::*;

/// Opens the trace at `path`; a file that cannot be read or is not a trace raises
/// `ValueError` with one line saying which file and why.
#[pyfunction]
fn open(path: std::path::PathBuf) -> PyResult<trace::PyTrace> {
    trace::PyTrace::open(&path)
}

/// The extension module.
#[pymodule]
fn _conifer(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_class::<trace::PyTrace>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
