//! Comparing a proxy's trace with the original's, call by call per rank.
//!
//! Two calls are equal when they call the same function with the same values in every slot
//! but these, which legitimately differ between the original and its proxy:
//! - where buffers lie (segment ids, offsets and stack offsets name each program's own
//!   memory): buffers are compared by kind only (`NULL`, `MPI_IN_PLACE`, `MPI_BOTTOM`, memory);
//! - statuses and values not interpreted (`?`), and whether a status was ignored;
//! - the outcome of nondeterministic completion calls (`MPI_Waitany`, `MPI_Waitsome`,
//!   `MPI_Test*`, `MPI_Iprobe`): only their function and counts are compared, since the
//!   run decides which requests complete when.
//!
//! Requests are compared by their role: the function that created them and its
//! communicator (`request of MPI_Irecv on MPI_COMM_WORLD`, from the latest call that returned
//! the id), not by their ids, whose pools follow the creating signatures, buffers included,
//! each program had met. The creating call's other arguments are compared at that call; a
//! proxy's trace cannot always tell two live requests of one handle apart (the proxy
//! completes some requests with PMPI calls its recorder does not see, and the MPI reuses
//! their handles), so a completion names them no more precisely than that.
//!
//! Ranks are compared restored (a peer is the rank it names for the caller), so codes the
//! merge chose differently for the two runs still compare equal. Each difference says what
//! the original had and what the proxy had.

use crate::args::NONDETERMINISTIC;
use conifer_trace::decode::Call;
use conifer_trace::value::{Buffer, HandleKind, HandleRef, Position, Value};
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use std::collections::HashMap;

/// What [`compare`]'s report says of buffers, once.
pub const PLACEMENT_NOTE: &str = "buffers are compared by kind (NULL, MPI_IN_PLACE, \
    MPI_BOTTOM, memory) only: where in memory they lie differs between a program and its \
    proxy and is not a failure";

/// One difference between the traces.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// World rank.
    pub rank: u32,
    /// Call index in the rank's sequence.
    pub index: u64,
    /// What differs.
    pub why: String,
}

/// Compares `proxy` with `original`: at most `limit` differences per rank are reported (a
/// rank's comparison stops at its first call to another function).
pub fn compare(original: &Trace, proxy: &Trace, limit: usize) -> Result<Vec<Difference>, String> {
    if original.meta.ranks != proxy.meta.ranks {
        return Ok(vec![Difference {
            rank: 0,
            index: 0,
            why: format!(
                "{} ranks, the proxy ran {}",
                original.meta.ranks, proxy.meta.ranks
            ),
        }]);
    }
    let (ra, rb) = (original.reader(), proxy.reader());
    let mut out = Vec::new();
    for rank in 0..original.meta.ranks {
        let mut a = ra.calls(rank);
        let mut b = rb.calls(rank);
        let (mut roles_a, mut roles_b) = (Roles::default(), Roles::default());
        let mut found = 0;
        let mut index = 0u64;
        loop {
            let (x, y) = (a.next().transpose(), b.next().transpose());
            let (x, y) = (x.map_err(|e| e.to_string())?, y.map_err(|e| e.to_string())?);
            x.iter().for_each(|x| roles_a.learn(x));
            y.iter().for_each(|y| roles_b.learn(y));
            let why = match (&x, &y) {
                (None, None) => break,
                (Some(x), None) => Some(format!("original: calls {x}; proxy: ends here")),
                (None, Some(y)) => Some(format!("original: ends here; proxy: calls {y}")),
                (Some(x), Some(y)) => call_difference((x, &roles_a), (y, &roles_b)),
            };
            if let Some(why) = why {
                let stop = x
                    .as_ref()
                    .zip(y.as_ref())
                    .is_none_or(|(x, y)| x.name != y.name);
                out.push(Difference { rank, index, why });
                found += 1;
                if stop || found >= limit {
                    break;
                }
            }
            index += 1;
        }
    }
    Ok(out)
}

/// Why call `b` (of the proxy) is not equal to `a` (of the original), if it is not; each
/// call with its trace's request roles.
fn call_difference((a, ra): (&Call, &Roles), (b, rb): (&Call, &Roles)) -> Option<String> {
    if a.name != b.name {
        return Some(format!(
            "original: calls {}; proxy: calls {}",
            a.name, b.name
        ));
    }
    if a.name == "free" {
        return None;
    }
    let loose = NONDETERMINISTIC.contains(&a.name);
    let mut why = Vec::new();
    for (i, slot) in a.slots.iter().enumerate() {
        let (Some(x), Some(y)) = (a.signature.values.get(i), b.signature.values.get(i)) else {
            continue;
        };
        if ignored(x) || ignored(y) || (loose && !matches!(slot.as_str(), "count" | "incount")) {
            continue;
        }
        let (x, y) = (ra.render(x, a.position(i)), rb.render(y, b.position(i)));
        if x != y {
            why.push(format!("{slot}: original: {x}; proxy: {y}"));
        }
    }
    if a.signature.ret != b.signature.ret {
        why.push(format!(
            "returned: original: {}; proxy: {}",
            a.signature.ret, b.signature.ret
        ));
    }
    (!why.is_empty()).then(|| format!("{}: {}", a.name, why.join(" | ")))
}

/// Functions that take a request they did not create in a slot named `request`.
const USES_REQUEST: [&str; 7] = [
    "MPI_Wait",
    "MPI_Test",
    "MPI_Start",
    "MPI_Request_free",
    "MPI_Cancel",
    "MPI_Request_get_status",
    "MPI_Grequest_complete",
];

/// One rank's live requests, each named by the call that created it (a request id is
/// reused once its request completes: the latest creation names it).
#[derive(Default)]
struct Roles(HashMap<u32, String>);

impl Roles {
    /// Names the request `call` creates, if it creates one.
    fn learn(&mut self, call: &Call) {
        if USES_REQUEST.contains(&call.name) {
            return;
        }
        let Some(i) = call.slots.iter().position(|s| s == "request") else {
            return;
        };
        let Some(Value::Handle(HandleKind::Request, HandleRef::Id(id))) =
            call.signature.values.get(i)
        else {
            return;
        };
        let on = ["comm", "win", "fh"]
            .iter()
            .find_map(|c| call.slots.iter().position(|s| s == c))
            .and_then(|k| call.signature.values.get(k))
            .map(|c| format!(" on {}", c.display(None)))
            .unwrap_or_default();
        self.0.insert(*id, format!("{}{on}", call.name));
    }

    /// A value's text as compared: requests by their role, buffers by their kind.
    fn render(&self, v: &Value, at: Option<Position>) -> String {
        match v {
            Value::Handle(HandleKind::Request, HandleRef::Id(id)) => match self.0.get(id) {
                Some(role) => format!("request of {role}"),
                None => "a request no traced call made".into(),
            },
            Value::Buffer(b) => match b {
                Buffer::Null => "NULL",
                Buffer::InPlace => "MPI_IN_PLACE",
                Buffer::Bottom => "MPI_BOTTOM",
                _ => "memory",
            }
            .into(),
            Value::Array(items)
                if items.iter().any(|i| {
                    matches!(i, Value::Handle(HandleKind::Request, _) | Value::Buffer(_))
                }) =>
            {
                let items: Vec<String> = items.iter().map(|i| self.render(i, at)).collect();
                format!("[{}]", items.join(", "))
            }
            _ => v.display(at).to_string(),
        }
    }
}

/// Values not compared: statuses, uninterpreted values.
fn ignored(v: &Value) -> bool {
    matches!(v, Value::Status(_) | Value::Ignored | Value::Opaque)
        || matches!(v, Value::Array(items) if items.iter().any(|i| matches!(i, Value::Status(_))))
}

#[cfg(test)]
mod tests {
    use super::Roles;
    use conifer_trace::value::{Buffer, HandleKind, HandleRef, Value};

    #[test]
    fn requests_shown_by_role_and_buffers_by_kind() {
        let mut roles = Roles::default();
        roles
            .0
            .insert((3 << 12) | 1, "MPI_Irecv on MPI_COMM_WORLD".into());
        roles
            .0
            .insert(5 << 12, "MPI_Irecv on MPI_COMM_WORLD".into());
        let req = |id| Value::Handle(HandleKind::Request, HandleRef::Id(id));
        // Requests of different ids made by the same call look the same.
        let a = Value::Array(vec![req((3 << 12) | 1), req(5 << 12)]);
        let shown = roles.render(&a, None);
        assert_eq!(
            shown,
            "[request of MPI_Irecv on MPI_COMM_WORLD, request of MPI_Irecv on MPI_COMM_WORLD]"
        );
        assert_eq!(
            roles.render(&req(7 << 12), None),
            "a request no traced call made"
        );
        let heap = Value::Buffer(Buffer::Segment { id: 4, offset: 8 });
        let stack = Value::Buffer(Buffer::Stack { offset: 16 });
        assert_eq!(roles.render(&heap, None), roles.render(&stack, None));
        assert_ne!(
            roles.render(&heap, None),
            roles.render(&Value::Buffer(Buffer::InPlace), None)
        );
    }
}
