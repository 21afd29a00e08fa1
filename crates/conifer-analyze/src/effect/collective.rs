//! Collectives' effects, by the matrix rule in the [`effect`](super) module documentation;
//! non-blocking and persistent collectives count as the blocking ones they start.

use super::kinds::{Caller, Effect, Kind};
use super::peer::local_peer;
use crate::call::Args;
use conifer_trace::value::{Buffer, Position, Rank, Value};

/// Adds the effect of collective `name` (any variant) to `e`.
pub(super) fn collective(
    e: &mut Effect,
    a: &Args,
    name: &str,
    caller: &dyn Caller,
    comm: Option<&Value>,
    at: Option<(Position, u32)>,
) {
    let canon = canonical_collective(name);
    let name = canon.as_str();
    let types = caller.types();
    let me = caller.world();
    let size_of = |dt: &str| a.get(dt).and_then(|d| types.size(d));
    let bytes = |count: &str, dt: &str| Some(a.int(count)?.saturating_mul(size_of(dt)?));
    let root = || match a.get("root") {
        Some(Value::Rank(Rank::Absolute(r) | Rank::Fixed(r))) => Some(*r),
        Some(Value::Rank(r)) => at.and_then(|(p, _)| local_peer(r, p)),
        _ => None,
    };
    enum Pattern {
        /// The caller sends `b` to each of these local ranks.
        To(Vec<(i64, u64)>),
        /// The caller sends `b` to every other member.
        ToOthers(u64),
        /// The caller receives `b` from this local rank.
        From(i64, u64),
        Nothing,
    }
    let Some((pos, n)) = at else {
        // Allreduce on an inter-communicator: each rank's data goes to every member of the
        // remote group (and each receives the remote group's reduction).
        if let (Some((_, g)), "Allreduce") = (comm.and_then(|c| caller.remote(c)), name) {
            if let Some(b) = bytes("count", "datatype") {
                e.size = Some(b);
                e.received += b;
                for to in g {
                    if to.is_some() {
                        e.sent += b;
                    }
                    e.link(to.map(|to| (me, to)), b, Kind::Coll);
                }
                return;
            }
        }
        if is_collective(name) {
            // An inter-communicator or a communicator the trace does not describe.
            let b = bytes("count", "datatype")
                .or_else(|| bytes("sendcount", "sendtype"))
                .or_else(|| bytes("recvcount", "recvtype"));
            e.size = b;
            e.sent += b.unwrap_or(0);
            e.unresolved = b.is_some();
        }
        return;
    };
    let mine = pos.rank;
    // Bytes of the `side` ("send" or "recv") buffer for all members but the caller: the
    // same `{side}count` for each when `fixed`, else `{side}counts`, in `{side}type`.
    let from_others = |fixed: bool, side: &str| -> Option<u64> {
        let ty = format!("{side}type");
        if fixed {
            bytes(&format!("{side}count"), &ty).map(|b| b * u64::from(n - 1))
        } else {
            a.ints(&format!("{side}counts"))
                .zip(size_of(&ty))
                .map(|(c, s)| {
                    c.iter()
                        .enumerate()
                        .filter(|(j, _)| *j as i64 != mine)
                        .map(|(_, c)| c * s)
                        .sum()
                })
        }
    };
    let pattern = match name {
        "Bcast" => match (root(), bytes("count", "datatype")) {
            (Some(r), Some(b)) if r == mine => {
                e.size = Some(b);
                e.sent += b * u64::from(n - 1);
                Pattern::Nothing
            }
            (Some(r), Some(b)) => {
                e.size = Some(b);
                Pattern::From(r, b)
            }
            _ => return unresolved(e),
        },
        "Reduce" => match (root(), bytes("count", "datatype")) {
            (Some(r), Some(b)) if r == mine => {
                e.size = Some(b);
                e.received += b * u64::from(n - 1);
                Pattern::Nothing
            }
            (Some(r), Some(b)) => {
                e.size = Some(b);
                Pattern::To(vec![(r, b)])
            }
            _ => return unresolved(e),
        },
        "Allreduce" => match bytes("count", "datatype") {
            Some(b) => {
                e.size = Some(b);
                e.received += b * u64::from(n - 1);
                Pattern::ToOthers(b)
            }
            None => return unresolved(e),
        },
        "Gather" | "Gatherv" => {
            let r = root();
            let Some(r) = r else { return unresolved(e) };
            if r == mine {
                let got = from_others(name == "Gather", "recv");
                let Some(got) = got else { return unresolved(e) };
                e.received += got;
                e.size = bytes("sendcount", "sendtype").or(Some(got));
                Pattern::Nothing
            } else {
                let Some(b) = bytes("sendcount", "sendtype") else {
                    return unresolved(e);
                };
                e.size = Some(b);
                Pattern::To(vec![(r, b)])
            }
        }
        "Scatter" | "Scatterv" => {
            let Some(r) = root() else {
                return unresolved(e);
            };
            if r == mine {
                let sent = from_others(name == "Scatter", "send");
                let Some(sent) = sent else {
                    return unresolved(e);
                };
                e.sent += sent;
                e.size = Some(sent / u64::from(n.max(2) - 1));
                Pattern::Nothing
            } else {
                let Some(b) = bytes("recvcount", "recvtype") else {
                    return unresolved(e);
                };
                e.size = Some(b);
                Pattern::From(r, b)
            }
        }
        "Allgather" | "Allgatherv" => {
            let b = if is_in_place(a.get("sendbuf")) {
                if name == "Allgather" {
                    bytes("recvcount", "recvtype")
                } else {
                    a.ints("recvcounts")
                        .and_then(|c| c.get(mine as usize).copied())
                        .zip(size_of("recvtype"))
                        .map(|(c, s)| c * s)
                }
            } else {
                bytes("sendcount", "sendtype")
            };
            let got = from_others(name == "Allgather", "recv");
            let Some(b) = b else { return unresolved(e) };
            e.received += got.unwrap_or(0);
            e.size = Some(b);
            Pattern::ToOthers(b)
        }
        "Alltoall" => {
            let b = if is_in_place(a.get("sendbuf")) {
                bytes("recvcount", "recvtype")
            } else {
                bytes("sendcount", "sendtype")
            };
            let Some(b) = b else { return unresolved(e) };
            e.received += bytes("recvcount", "recvtype").unwrap_or(b) * u64::from(n - 1);
            e.size = Some(b);
            Pattern::ToOthers(b)
        }
        "Alltoallv" | "Alltoallw" => {
            let place = is_in_place(a.get("sendbuf"));
            let (cs, ts) = if place {
                ("recvcounts", "recvtype")
            } else {
                ("sendcounts", "sendtype")
            };
            let per_type = |slot: &str, j: usize| -> Option<u64> {
                if name == "Alltoallw" {
                    match a.get(&format!("{slot}s"))? {
                        Value::Array(t) => types.size(t.get(j)?),
                        _ => None,
                    }
                } else {
                    size_of(slot)
                }
            };
            let Some(counts) = a.ints(cs) else {
                return unresolved(e);
            };
            let mut to = Vec::new();
            for (j, c) in counts.iter().enumerate() {
                if j as i64 == mine {
                    continue;
                }
                let Some(s) = per_type(ts, j) else {
                    return unresolved(e);
                };
                to.push((j as i64, c * s));
            }
            if let Some(rc) = a.ints("recvcounts") {
                for (j, c) in rc.iter().enumerate() {
                    if j as i64 != mine {
                        e.received += c * per_type("recvtype", j).unwrap_or(0);
                    }
                }
            }
            e.size = Some(to.iter().map(|(_, b)| b).sum::<u64>() / u64::from(n.max(2) - 1));
            Pattern::To(to)
        }
        "Reduce_scatter" | "Reduce_scatter_block" => {
            let s = size_of("datatype");
            let Some(s) = s else { return unresolved(e) };
            let counts: Vec<u64> = if name == "Reduce_scatter" {
                match a.ints("recvcounts") {
                    Some(c) => c,
                    None => return unresolved(e),
                }
            } else {
                match a.int("recvcount") {
                    Some(c) => vec![c; n as usize],
                    None => return unresolved(e),
                }
            };
            let mine_count = counts.get(mine as usize).copied().unwrap_or(0);
            e.received += mine_count * s * u64::from(n - 1);
            e.size = Some(mine_count * s);
            Pattern::To(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j as i64 != mine)
                    .map(|(j, c)| (j as i64, c * s))
                    .collect(),
            )
        }
        "Scan" | "Exscan" => match bytes("count", "datatype") {
            Some(b) => {
                e.size = Some(b);
                e.received += b * mine as u64;
                Pattern::To(((mine + 1)..i64::from(n)).map(|j| (j, b)).collect())
            }
            None => return unresolved(e),
        },
        _ => Pattern::Nothing,
    };
    let Some(c) = comm else { return };
    match pattern {
        Pattern::To(list) => {
            for (j, b) in list {
                e.sent += b;
                e.link(caller.member(c, j).map(|to| (me, to)), b, Kind::Coll);
            }
        }
        // Without edges (the simulator asks for sizes only) a rank's collective costs O(1),
        // not O(communicator size): 10⁵ ranks' allreduces would otherwise be quadratic.
        Pattern::ToOthers(b) if !caller.edges_wanted() => e.sent += b * u64::from(n - 1),
        Pattern::ToOthers(b) => {
            for j in (0..i64::from(n)).filter(|&j| j != mine) {
                e.sent += b;
                e.link(caller.member(c, j).map(|to| (me, to)), b, Kind::Coll);
            }
        }
        Pattern::From(j, b) => {
            e.received += b;
            e.link(caller.member(c, j).map(|from| (from, me)), b, Kind::Coll);
        }
        Pattern::Nothing => {}
    }
}

/// The blocking collective a non-blocking (`Ibcast`) or persistent (`Bcast_init`) one starts,
/// else `name`.
fn canonical_collective(name: &str) -> String {
    let name = name.strip_suffix("_init").unwrap_or(name);
    if let Some(rest) = name.strip_prefix('I') {
        let mut c = rest.chars();
        if let Some(first) = c.next().filter(char::is_ascii_lowercase) {
            let up: String = first.to_ascii_uppercase().to_string() + c.as_str();
            if is_collective(&up) {
                return up;
            }
        }
    }
    name.to_string()
}

/// Marks `e` unresolved.
fn unresolved(e: &mut Effect) {
    e.unresolved = true;
}

/// Collectives that move data (the ones the rule attributes).
fn is_collective(name: &str) -> bool {
    matches!(
        name,
        "Bcast"
            | "Reduce"
            | "Allreduce"
            | "Gather"
            | "Gatherv"
            | "Scatter"
            | "Scatterv"
            | "Allgather"
            | "Allgatherv"
            | "Alltoall"
            | "Alltoallv"
            | "Alltoallw"
            | "Reduce_scatter"
            | "Reduce_scatter_block"
            | "Scan"
            | "Exscan"
    )
}

/// True when `v` is `MPI_IN_PLACE`.
fn is_in_place(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Buffer(Buffer::InPlace)))
}
