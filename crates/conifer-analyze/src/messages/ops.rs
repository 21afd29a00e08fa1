//! The message-level events ([`Op`]s) exports are written from, and the communicators
//! ([`Comm`]) and collectives ([`COLLECTIVES`]) they name.

use crate::context::CommGroup;

/// A communicator as an export names it: one of the trace's communicator groups, an
/// inter-communicator, or the caller's `MPI_COMM_SELF`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Comm {
    /// An intra-communicator all its members know (see [`CommGroup`]).
    Group(CommGroup),
    /// An inter-communicator, by its id in the trace (both groups know it by that id; each
    /// group is a [`CommGroup`] of that id).
    Inter(Vec<u8>),
    /// `MPI_COMM_SELF`, or a communicator the trace does not describe.
    Own,
}

/// One message-level event of a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A blocking send (or the send half of `MPI_Sendrecv`).
    Send {
        /// Receiver, world rank.
        to: u32,
        /// Receiver, rank in the communicator (in the remote group of an
        /// inter-communicator).
        to_rank: u32,
        /// Tag.
        tag: i64,
        /// Communicator.
        comm: Comm,
        /// Bytes.
        bytes: u64,
    },
    /// A non-blocking send posted (`MPI_Isend`, a started persistent send).
    Isend {
        /// Receiver, world rank.
        to: u32,
        /// Receiver, rank in the communicator.
        to_rank: u32,
        /// Tag.
        tag: i64,
        /// Communicator.
        comm: Comm,
        /// Bytes.
        bytes: u64,
        /// Request number, unique in the rank.
        request: u64,
    },
    /// A non-blocking send completed.
    IsendComplete {
        /// Request number.
        request: u64,
    },
    /// A non-blocking receive cancelled before any message matched it (`MPI_Cancel`): its
    /// completion moves nothing.
    IrecvCancel {
        /// Request number.
        request: u64,
    },
    /// A non-blocking receive posted.
    IrecvRequest {
        /// Sender as posted, world rank (`None` for `MPI_ANY_SOURCE`; the completion's
        /// [`Op::IrecvComplete`] names the actual sender when the status was recorded).
        from: Option<u32>,
        /// Tag as posted (negative for `MPI_ANY_TAG`).
        tag: i64,
        /// Communicator.
        comm: Comm,
        /// Bytes the receive buffer holds.
        bytes: u64,
        /// Request number, unique in the rank.
        request: u64,
    },
    /// A blocking receive (or the receive half of `MPI_Sendrecv`) completed.
    Recv {
        /// Sender, world rank and rank in the communicator (`None` when the trace cannot
        /// tell: `MPI_ANY_SOURCE` with the status ignored).
        from: Option<(u32, u32)>,
        /// Tag.
        tag: i64,
        /// Communicator.
        comm: Comm,
        /// Bytes.
        bytes: u64,
    },
    /// A non-blocking receive completed.
    IrecvComplete {
        /// Sender, world rank and rank in the communicator, when known.
        from: Option<(u32, u32)>,
        /// Tag.
        tag: i64,
        /// Communicator.
        comm: Comm,
        /// Bytes.
        bytes: u64,
        /// Request number.
        request: u64,
    },
    /// A collective operation (blocking, or non-blocking at the call that starts it).
    Collective {
        /// The operation without `MPI_`, `I` and `_c` (`Allreduce`).
        operation: String,
        /// Communicator.
        comm: Comm,
        /// Root, rank in the communicator, for rooted collectives.
        root: Option<u32>,
        /// Bytes the caller sends.
        sent: u64,
        /// Bytes the caller receives.
        received: u64,
    },
}

/// The collectives, as [`Op::Collective::operation`] names them.
pub const COLLECTIVES: &[&str] = &[
    "Barrier",
    "Bcast",
    "Gather",
    "Gatherv",
    "Scatter",
    "Scatterv",
    "Allgather",
    "Allgatherv",
    "Alltoall",
    "Alltoallv",
    "Alltoallw",
    "Reduce",
    "Allreduce",
    "Reduce_scatter",
    "Reduce_scatter_block",
    "Scan",
    "Exscan",
];
