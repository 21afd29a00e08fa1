//! The replay action of a collective: SMPI replays every collective on `MPI_COMM_WORLD`, with
//! sizes in bytes (the default datatype after a bare `init` is `MPI_BYTE`) and per-rank
//! counts in world-rank order. Argument lists as SimGrid 3.32's parsers read them
//! (`src/smpi/internals/smpi_replay.cpp`):
//!
//! | action | arguments |
//! |---|---|
//! | `barrier` | – |
//! | `bcast` | bytes, root |
//! | `reduce` | bytes, flops of the reduction, root |
//! | `allreduce`, `scan`, `exscan` | bytes, flops of the reduction |
//! | `alltoall` | bytes sent to each rank, bytes received from each |
//! | `alltoallv` | send total, P send counts, receive total, P receive counts |
//! | `gather`, `scatter` | bytes sent by each, bytes received by each, root |
//! | `allgather` | bytes sent, bytes received from each |
//! | `gatherv` | bytes sent, P receive counts (significant at the root), root |
//! | `scatterv` | P send counts (significant at the root), bytes received, root |
//! | `allgatherv` | bytes sent, P receive counts |
//! | `reducescatter` | P receive counts, flops of the reduction |
//!
//! The flops of reductions are written as 0: the computation a reduction does is inside
//! the recorded call's time, which the simulator predicts instead of replaying.

use conifer_analyze::call::Args;
use conifer_analyze::types::TypeSizes;
use conifer_trace::value::{Buffer, Value};

/// What one collective call needs besides its arguments.
pub(super) struct Context<'a> {
    /// The caller's datatype sizes.
    pub types: &'a TypeSizes,
    /// The world rank of each member of the call's communicator, by local rank (a
    /// communicator of all ranks, possibly reordered).
    pub members: &'a [u32],
    /// The caller's world rank.
    pub me: u32,
    /// The root, world rank, for rooted collectives.
    pub root: Option<u32>,
}

/// The action (without the rank prefix) replaying collective `operation` (as
/// [`crate::messages::COLLECTIVES`] names it) with arguments `a` (`Reduce_scatter_block` is
/// written as `reducescatter`, `Alltoallw` as `alltoallv` in bytes); `None` for an operation
/// not in that list; an error when a count exceeds the `int` SMPI parses.
pub(super) fn action(operation: &str, a: &Args, cx: &Context) -> Result<Option<String>, String> {
    let size_of = |slot: &str| a.get(slot).and_then(|t| cx.types.size(t)).unwrap_or(0);
    let bytes = |count: &str, ty: &str| a.int(count).unwrap_or(0).saturating_mul(size_of(ty));
    let in_place = matches!(a.get("sendbuf"), Some(Value::Buffer(Buffer::InPlace)));
    let root = cx.root.unwrap_or(0);
    let at_root = cx.root == Some(cx.me);
    // Per-rank byte counts of `counts` in `ty`, in world-rank order (zeros where unknown).
    let per_rank = |counts: &str, ty: &str| -> Vec<u64> {
        let size = size_of(ty);
        let counts = a.ints(counts).unwrap_or_default();
        world_order(cx.members, |l| counts.get(l).map_or(0, |c| c * size))
    };
    // Alltoallw: one datatype per rank.
    let per_rank_w = |counts: &str, types: &str| -> Vec<u64> {
        let counts = a.ints(counts).unwrap_or_default();
        let types = match a.get(types) {
            Some(Value::Array(t)) => t.as_slice(),
            _ => &[],
        };
        world_order(cx.members, |l| {
            let size = types.get(l).and_then(|t| cx.types.size(t)).unwrap_or(0);
            counts.get(l).map_or(0, |c| c * size)
        })
    };
    let mine = |counts: &[u64]| counts.get(cx.me as usize).copied().unwrap_or(0);
    let zeros = || vec![0; cx.members.len()];
    let (name, mut numbers): (&str, Vec<u64>) = match operation {
        "Barrier" => ("barrier", vec![]),
        "Bcast" => ("bcast", vec![bytes("count", "datatype"), u64::from(root)]),
        "Reduce" => (
            "reduce",
            vec![bytes("count", "datatype"), 0, u64::from(root)],
        ),
        "Allreduce" => ("allreduce", vec![bytes("count", "datatype"), 0]),
        "Scan" => ("scan", vec![bytes("count", "datatype"), 0]),
        "Exscan" => ("exscan", vec![bytes("count", "datatype"), 0]),
        "Alltoall" => {
            let received = bytes("recvcount", "recvtype");
            let sent = if in_place {
                received
            } else {
                bytes("sendcount", "sendtype")
            };
            ("alltoall", vec![sent, received])
        }
        "Alltoallv" | "Alltoallw" => {
            let (received, sent) = if operation == "Alltoallv" {
                (
                    per_rank("recvcounts", "recvtype"),
                    per_rank("sendcounts", "sendtype"),
                )
            } else {
                (
                    per_rank_w("recvcounts", "recvtypes"),
                    per_rank_w("sendcounts", "sendtypes"),
                )
            };
            let sent = if in_place { received.clone() } else { sent };
            let mut n = vec![sent.iter().sum()];
            n.extend(&sent);
            n.push(received.iter().sum());
            n.extend(&received);
            ("alltoallv", n)
        }
        "Gather" => {
            let received = bytes("recvcount", "recvtype");
            let sent = if in_place && at_root {
                received
            } else {
                bytes("sendcount", "sendtype")
            };
            let received = if at_root { received } else { sent };
            ("gather", vec![sent, received, u64::from(root)])
        }
        "Scatter" => {
            let sent = bytes("sendcount", "sendtype");
            let in_place = matches!(a.get("recvbuf"), Some(Value::Buffer(Buffer::InPlace)));
            let received = if in_place && at_root {
                sent
            } else {
                bytes("recvcount", "recvtype")
            };
            let sent = if at_root { sent } else { received };
            ("scatter", vec![sent, received, u64::from(root)])
        }
        "Allgather" => {
            let received = bytes("recvcount", "recvtype");
            let sent = if in_place {
                received
            } else {
                bytes("sendcount", "sendtype")
            };
            ("allgather", vec![sent, received])
        }
        "Gatherv" => {
            let received = if at_root {
                per_rank("recvcounts", "recvtype")
            } else {
                zeros()
            };
            let sent = if in_place && at_root {
                mine(&received)
            } else {
                bytes("sendcount", "sendtype")
            };
            let mut n = vec![sent];
            n.extend(received);
            n.push(u64::from(root));
            ("gatherv", n)
        }
        "Scatterv" => {
            let sent = if at_root {
                per_rank("sendcounts", "sendtype")
            } else {
                zeros()
            };
            let in_place = matches!(a.get("recvbuf"), Some(Value::Buffer(Buffer::InPlace)));
            let received = if in_place && at_root {
                mine(&sent)
            } else {
                bytes("recvcount", "recvtype")
            };
            let mut n = sent;
            n.push(received);
            n.push(u64::from(root));
            ("scatterv", n)
        }
        "Allgatherv" => {
            let received = per_rank("recvcounts", "recvtype");
            let sent = if in_place {
                mine(&received)
            } else {
                bytes("sendcount", "sendtype")
            };
            let mut n = vec![sent];
            n.extend(received);
            ("allgatherv", n)
        }
        "Reduce_scatter" => ("reducescatter", per_rank("recvcounts", "datatype")),
        "Reduce_scatter_block" => {
            let each = bytes("recvcount", "datatype");
            ("reducescatter", vec![each; cx.members.len()])
        }
        _ => return Ok(None),
    };
    if name == "reducescatter" {
        numbers.push(0);
    }
    if let Some(n) = numbers.iter().find(|&&n| n > i32::MAX as u64) {
        return Err(format!(
            "{name} with a count of {n} bytes: SMPI's replay reads counts as int; \
             such a trace cannot be replayed"
        ));
    }
    let mut line = name.to_string();
    for n in numbers {
        line.push(' ');
        line.push_str(&n.to_string());
    }
    Ok(Some(line))
}

/// Values by world rank from `of_local(l)` for each local rank `l` of a communicator whose
/// members are `members`.
fn world_order(members: &[u32], of_local: impl Fn(usize) -> u64) -> Vec<u64> {
    let mut out = vec![0; members.len()];
    for (l, &w) in members.iter().enumerate() {
        if let Some(slot) = out.get_mut(w as usize) {
            *slot = of_local(l);
        }
    }
    out
}
