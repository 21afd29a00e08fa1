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
//! | Allgather(v) | me → j for every j ≠ me, sendcount (recvcount(s)[me] in place) |
//! | Alltoall | me → j, sendcount (recvcount in place) |
//! | Alltoallv / Alltoallw | me → j, sendcounts[j] (× sendtypes[j]) |
//! | Reduce_scatter(_block) | me → j, recvcounts[j] (recvcount) |
//! | Scan / Exscan | me → j for every j > me, count |
//! | Barrier, others | nothing |
//!
//! Non-blocking (`I…`) and persistent (`…_init`) collectives count like the blocking ones,
//! at the call that starts them. A *message* is one matrix entry of one call; a
//! point-to-point message of 0 bytes is still one, a collective's entry of 0 bytes is not.

mod collective;
mod p2p;
#[cfg(test)]
mod tests;

use crate::call::Args;
use crate::types::TypeSizes;
use conifer_trace::value::{Buffer, Position, Rank, Value};
use serde::Serialize;

/// Point-to-point (including one-sided) or collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Sends, receives, `MPI_Put`/`MPI_Get`/accumulates.
    P2p,
    /// Collectives.
    Coll,
}

/// One matrix entry a call adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// Sender (world rank).
    pub from: u32,
    /// Receiver (world rank).
    pub to: u32,
    /// Bytes.
    pub bytes: u64,
    /// Kind of call.
    pub kind: Kind,
}

/// What one call does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Effect {
    /// Bytes the caller sends (all destinations).
    pub sent: u64,
    /// Bytes the caller receives (the posted receive sizes).
    pub received: u64,
    /// Matrix entries.
    pub edges: Vec<Edge>,
    /// The call's message size (bytes of its send buffer, else of its receive buffer), for
    /// histograms; `None` for calls that move no data.
    pub size: Option<u64>,
    /// True when the call moves data to or from peers the analysis could not name (an
    /// inter-communicator, an unknown communicator or datatype): its bytes are counted as
    /// far as known, its matrix entries are missing.
    pub unresolved: bool,
    /// The communicator the call names, as the decoder prints it.
    pub comm: Option<String>,
}

impl Effect {
    /// Adds the matrix entry `ends` (sender, receiver) of `bytes`, or marks the call
    /// unresolved when the ends are unknown.
    fn link(&mut self, ends: Option<(u32, u32)>, bytes: u64, kind: Kind) {
        match ends {
            Some((from, to)) => self.edges.push(Edge {
                from,
                to,
                bytes,
                kind,
            }),
            None => self.unresolved = true,
        }
    }
}

/// What the analysis needs to know about the caller to evaluate its calls.
pub trait Caller {
    /// The caller's world rank.
    fn world(&self) -> u32;
    /// The caller's position in communicator `comm` and the communicator's size.
    fn position(&self, comm: &Value) -> Option<(Position<'_>, u32)>;
    /// World rank of the member `local` of communicator `comm` (as the caller knows it).
    fn member(&self, comm: &Value, local: i64) -> Option<u32>;
    /// The caller's datatype sizes.
    fn types(&self) -> &TypeSizes;
    /// The communicator window `win` was created over.
    fn window_comm(&self, win: &Value) -> Option<&Value>;
    /// The effects of the persistent operations request `req` starts.
    fn persistent(&self, req: &Value) -> Option<&Effect>;
    /// For inter-communicator `comm`: the caller's rank in its local group and the world
    /// ranks of the remote group, by rank, when known.
    fn remote(&self, _comm: &Value) -> Option<(i64, &[Option<u32>])> {
        None
    }
}

/// The peer a rank value names, as a rank of the communicator the caller stands in at `at`.
pub fn local_peer(rank: &Rank, at: Position) -> Option<i64> {
    match *rank {
        Rank::Grid(d) => at.grid?.displaced(at.rank, d),
        Rank::Absolute(a) => Some(a),
        r => r.peer_of(at.rank),
    }
}

/// The world rank of the peer rank value `r` names in communicator `comm`, for `caller`: a
/// member of `comm` for an intra-communicator, of its remote group for an
/// inter-communicator (whose peers are stored absolute or relative to the caller's rank in
/// its local group). `None` for special ranks and unknown communicators.
pub fn world_peer(caller: &dyn Caller, comm: &Value, r: &Rank) -> Option<u32> {
    if r.is_special() {
        return None;
    }
    if let Some((p, _)) = caller.position(comm) {
        return local_peer(r, p).and_then(|l| caller.member(comm, l));
    }
    let (my, group) = caller.remote(comm)?;
    let peer = local_peer(
        r,
        Position {
            rank: my,
            grid: None,
        },
    )?;
    group.get(usize::try_from(peer).ok()?).copied().flatten()
}

/// True when `v` is `MPI_IN_PLACE`.
fn is_in_place(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Buffer(Buffer::InPlace)))
}

/// Base name without `MPI_`, `P`-less, without the large-count `_c` suffix.
pub(crate) fn base(name: &str) -> &str {
    let n = name.strip_prefix("MPI_").unwrap_or(name);
    n.strip_suffix("_c").unwrap_or(n)
}

/// Evaluates one call of `caller`.
pub fn evaluate(a: &Args, caller: &dyn Caller) -> Effect {
    let mut e = Effect {
        comm: a
            .get("comm")
            .or_else(|| a.get("local_comm"))
            .map(|c| c.display(None).to_string()),
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
    e.edges.extend_from_slice(&p.edges);
    e.size = e.size.or(p.size);
    e.unresolved |= p.unresolved;
    if e.comm.is_none() {
        e.comm.clone_from(&p.comm);
    }
}
