//! One rank's calls as columns: the read side's `CallReader` walked once, each call a row.
//!
//! Fixed columns: `rank`, `thread`, `index`, `function`, `site` (call site: `file:line` of a
//! structure-tree site, else the caller's module when recorded), `ret`; with per-call timing
//! (`lossless`, `lossy:REL`) `start_ns`, `end_ns` (the MPI part *as run*, on rank 0's clock),
//! `enter_ns`, `exit_ns` (the wrapper's entry and return, as run), `duration_ns` and
//! `interval_ns` (*without the recorder*: the MPI part and the computation before it), else
//! `mean_ns`, the call's timing family's mean duration (without the recorder). Then one column
//! per argument name the kept functions have: integers where every value is one, else the
//! values as the decoder prints them (objects by their symbolic ids: `comm1`, `req3`, `dt2`).
//! Columns cross into Python as buffers ([`crate::columns`]).

use crate::columns::{Floats, Ints, Texts};
use conifer_trace::{Call, ReadCalls, Trace};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The columns being filled.
#[derive(Default)]
struct Columns {
    rows: usize,
    rank: Ints,
    thread: Ints,
    index: Ints,
    function: Texts,
    site: Texts,
    ret: Ints,
    start_ns: Ints,
    end_ns: Ints,
    enter_ns: Ints,
    exit_ns: Ints,
    duration_ns: Ints,
    interval_ns: Ints,
    mean_ns: Floats,
    /// Per argument name, its cells so far (padded with empty cells where a call has no such
    /// argument).
    args: BTreeMap<String, Texts>,
    /// The text of the argument being added (reused, not allocated per cell).
    cell: String,
}

impl Columns {
    fn push(&mut self, call: &Call) {
        let row = self.rows;
        self.rows += 1;
        self.rank.push(Some(call.rank.into()));
        self.thread.push(Some(call.signature.thread.into()));
        self.index.push(i64::try_from(call.index).ok());
        self.function.push(Some(call.name));
        self.site.push(call.at_source.or(call.caller_module));
        self.ret.push(Some(call.signature.ret));
        self.start_ns.push(call.run.map(|r| r.start_ns));
        self.end_ns.push(call.run.map(|r| r.end_ns));
        self.enter_ns.push(call.run.map(|r| r.enter_ns));
        self.exit_ns.push(call.run.map(|r| r.exit_ns));
        let time = |ns: u64| i64::try_from(ns).ok();
        self.duration_ns
            .push(call.time.and_then(|t| time(t.duration_ns)));
        self.interval_ns
            .push(call.time.and_then(|t| time(t.interval_ns)));
        let mean = call.timing.filter(|_| call.time.is_none());
        self.mean_ns.push(mean.map(|t| t.duration.mean()));
        for (i, value) in call.signature.values.iter().enumerate() {
            let unnamed;
            let name = match call.slots.get(i) {
                Some(slot) => slot.as_str(),
                None => {
                    unnamed = format!("arg{i}");
                    unnamed.as_str()
                }
            };
            let column = match self.args.get_mut(name) {
                Some(c) => c,
                None => self.args.entry(name.to_string()).or_default(),
            };
            column.pad(row);
            if column.len() == row {
                self.cell.clear();
                let _ = write!(self.cell, "{}", value.display(call.position(i)));
                column.push(Some(&self.cell));
            }
        }
    }

    fn into_dict(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("rank", self.rank.into_py(py)?)?;
        d.set_item("thread", self.thread.into_py(py)?)?;
        d.set_item("index", self.index.into_py(py)?)?;
        d.set_item("function", self.function.into_py(py)?)?;
        d.set_item("site", self.site.into_py(py)?)?;
        d.set_item("ret", self.ret.into_py(py)?)?;
        if self.duration_ns.any() {
            d.set_item("start_ns", self.start_ns.into_py(py)?)?;
            d.set_item("end_ns", self.end_ns.into_py(py)?)?;
            d.set_item("enter_ns", self.enter_ns.into_py(py)?)?;
            d.set_item("exit_ns", self.exit_ns.into_py(py)?)?;
            d.set_item("duration_ns", self.duration_ns.into_py(py)?)?;
            d.set_item("interval_ns", self.interval_ns.into_py(py)?)?;
        } else {
            d.set_item("mean_ns", self.mean_ns.into_py(py)?)?;
        }
        for (name, mut cells) in self.args {
            cells.pad(self.rows);
            // An argument named like a fixed column keeps its own name with a prefix.
            let key = if d.contains(&name)? {
                format!("arg_{name}")
            } else {
                name
            };
            d.set_item(key, cells.into_py_typed(py)?)?;
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
