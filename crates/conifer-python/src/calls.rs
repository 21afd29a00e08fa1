//! One rank's calls as columns: the read side's `CallReader` walked once, each call a row.
//!
//! Fixed columns: `rank`, `thread`, `index`, `function`, `site` (call site: `file:line` of a
//! structure-tree site, else the caller's module when recorded), `ret`; with per-call timing
//! (`lossless`, `lossy:REL`) `start_ns`, `end_ns` (the MPI part *as run*, on rank 0's clock),
//! `enter_ns`, `exit_ns` (the wrapper's entry and return, as run), `duration_ns` and
//! `interval_ns` (*without the recorder*: the MPI part and the computation before it), else
//! `mean_ns`, the call's timing family's mean duration (without the recorder). Then one column
//! per argument name the kept functions have, holding integers as integers and everything
//! else as the decoder prints it (objects by their symbolic ids: `comm1`, `req3`, `dt2`).

use conifer_trace::{Call, ReadCalls, Trace};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::IntoPyObjectExt;
use std::collections::BTreeMap;

/// A cell of an argument column.
enum Arg {
    Int(i64),
    Text(String),
}

/// The columns being filled.
#[derive(Default)]
struct Columns {
    rank: Vec<u32>,
    thread: Vec<u32>,
    index: Vec<u64>,
    function: Vec<String>,
    site: Vec<Option<String>>,
    ret: Vec<i64>,
    start_ns: Vec<Option<i64>>,
    end_ns: Vec<Option<i64>>,
    enter_ns: Vec<Option<i64>>,
    exit_ns: Vec<Option<i64>>,
    duration_ns: Vec<Option<u64>>,
    interval_ns: Vec<Option<u64>>,
    mean_ns: Vec<Option<f64>>,
    /// Per argument name, its cell in each row so far (`None` where a call has no such
    /// argument).
    args: BTreeMap<String, Vec<Option<Arg>>>,
}

impl Columns {
    fn push(&mut self, call: &Call) {
        let row = self.rank.len();
        self.rank.push(call.rank);
        self.thread.push(call.signature.thread);
        self.index.push(call.index);
        self.function.push(call.name.to_string());
        let site = call.at_source.or(call.caller_module).map(str::to_string);
        self.site.push(site);
        self.ret.push(call.signature.ret);
        self.start_ns.push(call.run.map(|r| r.start_ns));
        self.end_ns.push(call.run.map(|r| r.end_ns));
        self.enter_ns.push(call.run.map(|r| r.enter_ns));
        self.exit_ns.push(call.run.map(|r| r.exit_ns));
        self.duration_ns.push(call.time.map(|t| t.duration_ns));
        self.interval_ns.push(call.time.map(|t| t.interval_ns));
        let mean = call.timing.filter(|_| call.time.is_none());
        self.mean_ns.push(mean.map(|t| t.duration.mean()));
        for (i, value) in call.signature.values.iter().enumerate() {
            let name = call
                .slots
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("arg{i}"));
            let text = value.display(call.position(i)).to_string();
            let cell = match text.parse::<i64>() {
                Ok(n) => Arg::Int(n),
                Err(_) => Arg::Text(text),
            };
            let column = self.args.entry(name).or_default();
            column.resize_with(row, || None);
            column.push(Some(cell));
        }
    }

    fn into_dict(mut self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let rows = self.rank.len();
        let d = PyDict::new(py);
        d.set_item("rank", self.rank)?;
        d.set_item("thread", self.thread)?;
        d.set_item("index", self.index)?;
        d.set_item("function", self.function)?;
        d.set_item("site", self.site)?;
        d.set_item("ret", self.ret)?;
        let per_call = self.duration_ns.iter().any(Option::is_some);
        if per_call {
            d.set_item("start_ns", self.start_ns)?;
            d.set_item("end_ns", self.end_ns)?;
            d.set_item("enter_ns", self.enter_ns)?;
            d.set_item("exit_ns", self.exit_ns)?;
            d.set_item("duration_ns", self.duration_ns)?;
            d.set_item("interval_ns", self.interval_ns)?;
        } else {
            d.set_item("mean_ns", self.mean_ns)?;
        }
        for (name, mut cells) in std::mem::take(&mut self.args) {
            cells.resize_with(rows, || None);
            let objects: Vec<PyObject> = cells
                .into_iter()
                .map(|cell| match cell {
                    Some(Arg::Int(n)) => n.into_py_any(py),
                    Some(Arg::Text(s)) => s.into_py_any(py),
                    None => Ok(py.None()),
                })
                .collect::<PyResult<_>>()?;
            // An argument named like a fixed column keeps its own name with a prefix.
            let key = if d.contains(&name)? {
                format!("arg_{name}")
            } else {
                name
            };
            d.set_item(key, objects)?;
        }
        Ok(d)
    }
}

/// The calls of `rank` (only those of `functions`, when given) as columns.
pub fn columns<'py>(
    py: Python<'py>,
    trace: &Trace,
    rank: u32,
    functions: Option<&[String]>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut columns = Columns::default();
    for call in trace.reader().calls(rank) {
        let call = call.map_err(|e| PyValueError::new_err(e.to_string()))?;
        if functions.is_none_or(|keep| keep.iter().any(|f| f == call.name)) {
            columns.push(&call);
        }
    }
    columns.into_dict(py)
}
