//! What evaluating a call works with: the [`Caller`] it is evaluated for, and what it finds,
//! its [`Effect`] (bytes, and the matrix [`Edge`]s of each [`Kind`] it adds).

use crate::types::TypeSizes;
use conifer_trace::value::{Position, Value};
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
    /// Bytes the caller receives, as far as the call itself tells: collectives and
    /// one-sided gets. What arrives for a point-to-point receive is known only from its
    /// status or its matching send (`crate::arrivals`), so it is not counted here.
    pub received: u64,
    /// Receive capacity the caller posts: `count` × type size of point-to-point receives
    /// (more than arrives when the buffer is larger than the message).
    pub posted: u64,
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
    pub(super) fn link(&mut self, ends: Option<(u32, u32)>, bytes: u64, kind: Kind) {
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
    /// False when only the byte counts of an effect are wanted, not its edges (see
    /// [`super::evaluate_sizes`]).
    fn edges_wanted(&self) -> bool {
        true
    }
    /// The name of communicator `comm` as the caller knows it: the id `decode` shows, or where
    /// several communicators share that id, the one naming the caller's (`comm5@4`).
    fn comm_name(&self, comm: &Value) -> String {
        comm.display(None).to_string()
    }
}

/// A caller whose effects are wanted for their byte counts only.
pub(super) struct SizesOnly<'a>(pub(super) &'a dyn Caller);

impl Caller for SizesOnly<'_> {
    fn world(&self) -> u32 {
        self.0.world()
    }
    fn position(&self, comm: &Value) -> Option<(Position<'_>, u32)> {
        self.0.position(comm)
    }
    fn member(&self, comm: &Value, local: i64) -> Option<u32> {
        self.0.member(comm, local)
    }
    fn types(&self) -> &TypeSizes {
        self.0.types()
    }
    fn window_comm(&self, win: &Value) -> Option<&Value> {
        self.0.window_comm(win)
    }
    fn persistent(&self, req: &Value) -> Option<&Effect> {
        self.0.persistent(req)
    }
    fn remote(&self, comm: &Value) -> Option<(i64, &[Option<u32>])> {
        self.0.remote(comm)
    }
    fn edges_wanted(&self) -> bool {
        false
    }
    fn comm_name(&self, comm: &Value) -> String {
        self.0.comm_name(comm)
    }
}
