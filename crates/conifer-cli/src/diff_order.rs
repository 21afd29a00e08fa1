//! Whether two runs' calls differ only in the order their requests completed: the outputs of
//! `MPI_Waitany`, `MPI_Testany`, `MPI_Waitsome`, `MPI_Testsome`, `MPI_Test` and `MPI_Testall`
//! (index, flag, indices, statuses), the request arrays they are passed (which slots are
//! already `MPI_REQUEST_NULL` follows the order) and how often a completion loop calls them
//! (poll repeats) depend on when messages arrive, not on what the program does. Also how a
//! call is compared at all ([`call_text`]).

use conifer_trace::decode::{Call, CallReader, DecodeError};
use std::fmt::Write;

/// The calls whose outputs and repetitions follow the order in which requests complete.
const COMPLETIONS: &[&str] = &[
    "MPI_Waitany",
    "MPI_Testany",
    "MPI_Waitsome",
    "MPI_Testsome",
    "MPI_Test",
    "MPI_Testall",
];

/// A call as compared up to completion order: a completion call by its function and its
/// array length only; any other call whole.
fn normalized(c: &Call) -> String {
    if !COMPLETIONS.contains(&c.name) {
        return call_text(c);
    }
    let count = c
        .slots
        .iter()
        .position(|s| s == "count" || s == "incount")
        .and_then(|i| c.signature.values.get(i))
        .map(|v| v.display(None).to_string());
    format!("{}(count={})", c.name, count.unwrap_or_default())
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
        if COMPLETIONS.contains(&call.name) {
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

/// A call as compared: function, every argument with ranks restored, return value.
pub fn call_text(c: &Call) -> String {
    let mut s = format!("{}(", c.name);
    for (i, v) in c.signature.values.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match c.slots.get(i) {
            Some(slot) => {
                let _ = write!(s, "{slot}={}", v.display(c.position(i)));
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
