//! Whether two runs' calls differ only in the order their requests completed: the outputs of
//! `MPI_Waitany`, `MPI_Testany`, `MPI_Waitsome`, `MPI_Testsome`, `MPI_Test`, `MPI_Testall` and
//! `MPI_Iprobe` (index, flag, indices, statuses: what the recorder keeps in value streams,
//! `conifer_trace::completion`), the request arrays they are passed (which slots are
//! already `MPI_REQUEST_NULL` follows the order) and how often a completion loop calls them
//! (poll repeats) depend on when messages arrive, not on what the program does. Also how a
//! call is compared at all ([`call_text`]): exactly, or with buffer placement or statuses set
//! aside ([`Compare`]).

use conifer_trace::decode::{Call, CallReader, DecodeError};
use conifer_trace::value::{Buffer, Value};
use std::fmt::Write;

/// The calls whose outputs and repetitions follow the order in which requests complete, with
/// how many of their first values are inputs that do not (the request arrays do).
const COMPLETIONS: &[(&str, usize)] = &[
    ("MPI_Waitany", 1),
    ("MPI_Testany", 1),
    ("MPI_Waitsome", 1),
    ("MPI_Testsome", 1),
    ("MPI_Test", 1),
    ("MPI_Testall", 1),
    ("MPI_Iprobe", 3),
];

/// The number of inputs compared of a completion call, `None` for other calls.
fn completion_inputs(name: &str) -> Option<usize> {
    COMPLETIONS.iter().find(|c| c.0 == name).map(|c| c.1)
}

/// A call as compared up to completion order: a completion call by its function and the
/// inputs that do not follow the order (its array length, its request or probed source);
/// any other call whole.
fn normalized(c: &Call) -> String {
    let Some(inputs) = completion_inputs(c.name) else {
        return call_text(c, Compare::Exact);
    };
    let shown: Vec<String> = c
        .signature
        .values
        .iter()
        .take(inputs)
        .enumerate()
        .map(|(i, v)| {
            let slot = c.slots.get(i).map_or("", String::as_str);
            format!("{slot}={}", v.display(c.position(i)))
        })
        .collect();
    format!("{}({})", c.name, shown.join(", "))
}

/// Rank `rank`'s calls, normalized, with consecutive equal completion calls made one (a
/// completion loop runs as often as the arrivals make it).
fn sequence<'t>(
    reader: &CallReader<'t>,
    rank: u32,
) -> impl Iterator<Item = Result<String, DecodeError>> + 't {
    let mut last_completion: Option<String> = None;
    reader.calls(rank).filter_map(move |call| {
        let call = match call {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        let text = normalized(&call);
        if completion_inputs(call.name).is_some() {
            if last_completion.as_ref() == Some(&text) {
                return None;
            }
            last_completion = Some(text.clone());
        } else {
            last_completion = None;
        }
        Some(Ok(text))
    })
}

/// How calls are compared.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Compare {
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
pub fn call_text(c: &Call, how: Compare) -> String {
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

/// True when rank `rank` makes the same calls in both traces up to completion order.
pub fn same_up_to_completion_order(
    a: &CallReader,
    b: &CallReader,
    rank: u32,
) -> Result<bool, String> {
    let (mut ia, mut ib) = (sequence(a, rank), sequence(b, rank));
    loop {
        let x = ia.next().transpose().map_err(|e| e.0)?;
        let y = ib.next().transpose().map_err(|e| e.0)?;
        match (x, y) {
            (None, None) => return Ok(true),
            (x, y) if x != y => return Ok(false),
            _ => {}
        }
    }
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
