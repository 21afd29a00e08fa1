//! What one call does in data terms: bytes it sends and receives, the (sender, receiver,
//! bytes) entries it adds to the rank × rank matrix, and its message size for histograms.
//!
//! The matrix rule for collectives (also in docs/guide/analysis.md and `conifer matrix --help`): a
//! collective adds, for each ordered pair of distinct members (i, j), the bytes member i
//! contributes to member j under the collective's standard definition, whatever algorithm the
//! MPI library used. Each rank adds only the entries its own arguments determine:
//!
//! | collective | entries the caller `me` adds (`n` members, root `ρ`, sizes in bytes) |
//! |---|---|
//! | Bcast | non-root: ρ → me, count |
//! | Reduce | non-root: me → ρ, count |
//! | Allreduce | me → j for every j ≠ me, count |
//! | Gather(v) | non-root: me → ρ, sendcount |
//! | Scatter(v) | non-root: ρ → me, recvcount |
//! | Allgather(v) | me → j for every j ≠ me, sendcount (`recvcount(s)[me]` in place) |
//! | Alltoall | me → j, sendcount (recvcount in place) |
//! | Alltoallv / Alltoallw | me → j, `sendcounts[j]` (× `sendtypes[j]`) |
//! | Reduce_scatter(_block) | me → j, `recvcounts[j]` (recvcount) |
//! | Scan / Exscan | me → j for every j > me, count |
//! | Barrier, others | nothing |
//!
//! Non-blocking (`I…`) and persistent (`…_init`) collectives count like the blocking ones,
//! at the call that starts them. A *message* is one matrix entry of one call; a
//! point-to-point message of 0 bytes is still one, a collective's entry of 0 bytes is not.

mod collective;
mod kinds;
mod p2p;
mod peer;
#[cfg(test)]
mod tests;

pub use kinds::{Caller, Edge, Effect, Kind};
pub use peer::{local_peer, world_peer};

use crate::call::Args;
use conifer_trace::value::Value;

/// Base name without `MPI_`, `P`-less, without the large-count `_c` suffix.
pub(crate) fn base(name: &str) -> &str {
    let n = name.strip_prefix("MPI_").unwrap_or(name);
    n.strip_suffix("_c").unwrap_or(n)
}

/// Evaluates one call of `caller` for its byte counts only: a collective's edges to every
/// member are not listed (O(1) instead of O(communicator size) per call).
pub fn evaluate_sizes(a: &Args, caller: &dyn Caller) -> Effect {
    evaluate(a, &kinds::SizesOnly(caller))
}

/// Evaluates one call of `caller`.
pub fn evaluate(a: &Args, caller: &dyn Caller) -> Effect {
    let mut e = Effect {
        comm: a
            .get("comm")
            .or_else(|| a.get("local_comm"))
            .map(|c| caller.comm_name(c)),
        ..Effect::default()
    };
    let name = base(a.name);
    let comm = a.get("comm");
    let at = comm.and_then(|c| caller.position(c));
    let peers = p2p::Peers { a, caller, comm };
    match name {
        "Send" | "Isend" | "Ssend" | "Issend" | "Bsend" | "Ibsend" | "Rsend" | "Irsend" => {
            peers.send(&mut e, "count", "datatype", "dest");
        }
        "Recv" | "Irecv" | "Mrecv" | "Imrecv" => peers.recv(&mut e, "count", "datatype", "source"),
        "Sendrecv" | "Isendrecv" => {
            peers.send(&mut e, "sendcount", "sendtype", "dest");
            peers.recv(&mut e, "recvcount", "recvtype", "source");
        }
        "Sendrecv_replace" | "Isendrecv_replace" => {
            peers.send(&mut e, "count", "datatype", "dest");
            peers.recv(&mut e, "count", "datatype", "source");
        }
        "Start" => {
            if let Some(p) = a.get("request").and_then(|r| caller.persistent(r)) {
                add(&mut e, p);
            }
        }
        "Startall" => {
            if let Some(Value::Array(reqs)) = a.get("array_of_requests") {
                for r in reqs {
                    if let Some(p) = caller.persistent(r) {
                        add(&mut e, p);
                    }
                }
            }
        }
        "Put" | "Get" | "Accumulate" | "Rput" | "Rget" | "Raccumulate" | "Get_accumulate"
        | "Rget_accumulate" | "Fetch_and_op" | "Compare_and_swap" => {
            p2p::rma(&mut e, a, name, caller);
        }
        _ => collective::collective(&mut e, a, name, caller, comm, at),
    }
    e
}

/// Adds `p`'s data to `e` (a persistent operation started).
fn add(e: &mut Effect, p: &Effect) {
    e.sent += p.sent;
    e.received += p.received;
    e.posted += p.posted;
    e.edges.extend_from_slice(&p.edges);
    e.size = e.size.or(p.size);
    e.unresolved |= p.unresolved;
    if e.comm.is_none() {
        e.comm.clone_from(&p.comm);
    }
}
