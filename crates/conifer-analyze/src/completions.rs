//! Which requests a completion call (`MPI_Wait`, `MPI_Testall`, `MPI_Waitany`,
//! `MPI_Waitsome`, …) completed, each with its status when the trace recorded one: the
//! request array read through the call's flag, index or indices.

use crate::call::Args;
use crate::effect::base;
use conifer_trace::value::Value;

/// The (request, status) pairs call `a` completed, in array order; `fortran` when the call
/// was made from Fortran (1-based indices). Nothing for calls that complete no request, a
/// `Test…` whose flag is clear, or an index of `MPI_UNDEFINED`.
pub(crate) fn completed<'a>(a: &Args<'a>, fortran: bool) -> Vec<(&'a Value, Option<&'a Value>)> {
    let name = base(a.name);
    let mut out = Vec::new();
    match name {
        "Wait" | "Test" => {
            if let (true, Some(r)) = (name == "Wait" || flag(a), a.get("request")) {
                out.push((r, a.get("status")));
            }
        }
        "Waitall" | "Testall" => {
            let done = name == "Waitall" || flag(a);
            if let (true, Some(Value::Array(reqs))) = (done, a.get("array_of_requests")) {
                let statuses = a.get("array_of_statuses");
                for (i, r) in reqs.iter().enumerate() {
                    out.push((r, nth(statuses, i)));
                }
            }
        }
        "Waitany" | "Testany" => {
            let done = name == "Waitany" || flag(a);
            let index = index_of(a.get("index"), fortran);
            if let (true, Some(i), Some(Value::Array(reqs))) =
                (done, index, a.get("array_of_requests"))
            {
                if let Some(r) = reqs.get(i) {
                    out.push((r, a.get("status")));
                }
            }
        }
        "Waitsome" | "Testsome" => {
            let statuses = a.get("array_of_statuses");
            let outcount = a.int("outcount").unwrap_or(0) as usize;
            if let (Some(Value::Array(reqs)), Some(Value::Array(indices))) =
                (a.get("array_of_requests"), a.get("array_of_indices"))
            {
                for (k, index) in indices.iter().take(outcount).enumerate() {
                    if let Some(r) = index_of(Some(index), fortran).and_then(|i| reqs.get(i)) {
                        out.push((r, nth(statuses, k)));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// True when the call's `flag` output is set.
fn flag(a: &Args) -> bool {
    matches!(a.get("flag"), Some(Value::Int(f)) if *f != 0)
}

/// The `i`th element of an array of statuses.
fn nth(statuses: Option<&Value>, i: usize) -> Option<&Value> {
    match statuses {
        Some(Value::Array(items)) => items.get(i),
        _ => None,
    }
}

/// An index output as a 0-based position (Fortran's are 1-based); `None` for
/// `MPI_UNDEFINED` and other negative values.
fn index_of(v: Option<&Value>, fortran: bool) -> Option<usize> {
    let Some(Value::Int(i)) = v else {
        return None;
    };
    let i = if fortran { *i - 1 } else { *i };
    usize::try_from(i).ok()
}
