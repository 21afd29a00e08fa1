//! What each call does in the terms trace formats use: messages sent and received between
//! world ranks (with communicator, tag and bytes), non-blocking requests posted and completed,
//! and collectives with their root and bytes. One [`Messages`] follows one rank's calls in
//! order, tracking its pending requests (the trace names a request by a symbolic handle that
//! is reused once the request completes; exports number requests uniquely per rank).
//!
//! What a call does apart from that state (its peers, bytes, communicator, which handles it
//! posts or completes: its [`plan`]) depends on its signature alone, so it is worked out
//! once per terminal and reused by the terminal's repeated calls.

mod plan;

use crate::context::{CommGroup, CommTable, RankContext};
use crate::effect::Caller;
use crate::types::TypeSizes;
use conifer_trace::decode::{Call, CallReader};
use conifer_trace::fast_hash::FastMap;
use conifer_trace::value::{HandleRef, Value};
use conifer_trace::Trace;
use plan::Step;
use std::rc::Rc;

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

/// A posted point-to-point operation.
#[derive(Debug, Clone)]
struct Posted {
    send: bool,
    /// The peer, world rank and rank in the communicator (resolved at completion for
    /// receives, from their status).
    peer: Option<(u32, u32)>,
    tag: i64,
    comm_value: Option<Value>,
    comm: Comm,
    bytes: u64,
}

/// One rank's calls turned into [`Op`]s.
pub struct Messages<'t> {
    trace: &'t Trace,
    table: &'t CommTable,
    ctx: RankContext<'t>,
    rank: u32,
    next_request: u64,
    /// Pending requests: symbolic handle → (request number, what was posted).
    pending: FastMap<HandleRef, (u64, Rc<Posted>)>,
    /// Persistent requests: symbolic handle → what each start posts.
    persistent: FastMap<HandleRef, Rc<Posted>>,
    /// The plan of each terminal met, indexed by terminal (calls filled from value streams
    /// are planned anew).
    plans: Vec<Option<Rc<[Step]>>>,
}

impl<'t> Messages<'t> {
    /// A follower for world rank `rank` (runs a first pass over its calls for datatypes and
    /// other state later calls refer to).
    pub fn new(reader: &CallReader<'t>, table: &'t CommTable, rank: u32) -> Result<Self, String> {
        Ok(Messages {
            trace: reader.trace(),
            table,
            ctx: RankContext::of_rank(reader, table, rank).map_err(|e| e.0)?,
            rank,
            next_request: 0,
            pending: FastMap::default(),
            persistent: FastMap::default(),
            plans: Vec::new(),
        })
    }

    /// The rank's datatype sizes.
    pub fn types(&self) -> &TypeSizes {
        self.ctx.types()
    }

    /// The ops of the rank's next call.
    pub fn ops(&mut self, call: &Call) -> Vec<Op> {
        let mut ops = Vec::new();
        self.ops_into(call, &mut ops);
        ops
    }

    /// Appends the ops of the rank's next call to `ops`.
    pub fn ops_into(&mut self, call: &Call, ops: &mut Vec<Op>) {
        let slot = call.terminal as usize;
        let plan = match self.plans.get(slot).and_then(Option::as_ref) {
            Some(plan) if !call.streamed => Rc::clone(plan),
            _ => {
                let plan: Rc<[Step]> = self.plan(call).into();
                if !call.streamed {
                    if self.plans.len() <= slot {
                        self.plans.resize(slot + 1, None);
                    }
                    self.plans[slot] = Some(Rc::clone(&plan));
                }
                plan
            }
        };
        for step in plan.iter() {
            match step {
                Step::Op(op) => ops.push(op.clone()),
                Step::Post(h, p) => self.post(*h, Rc::clone(p), ops),
                Step::Persist(h, p) => {
                    self.persistent.insert(*h, Rc::clone(p));
                }
                Step::Start(h) => {
                    if let Some(p) = self.persistent.get(h).cloned() {
                        self.post(*h, p, ops);
                    }
                }
                Step::Free(h) => {
                    self.persistent.remove(h);
                }
                Step::Complete(h, status) => self.complete(*h, status.as_ref(), ops),
            }
        }
    }

    /// Posts `p` under request handle `h`.
    fn post(&mut self, h: HandleRef, p: Rc<Posted>, ops: &mut Vec<Op>) {
        let request = self.next_request;
        self.next_request += 1;
        if p.send {
            if let Some((to, to_rank)) = p.peer {
                ops.push(Op::Isend {
                    to,
                    to_rank,
                    tag: p.tag,
                    comm: p.comm.clone(),
                    bytes: p.bytes,
                    request,
                });
            }
        } else {
            ops.push(Op::IrecvRequest {
                from: p.peer.map(|(world, _)| world),
                tag: p.tag,
                comm: p.comm.clone(),
                bytes: p.bytes,
                request,
            });
        }
        self.pending.insert(h, (request, p));
    }

    /// Completes the request handle `h`, if it is pending, with its `status` when recorded.
    fn complete(&mut self, h: HandleRef, status: Option<&Value>, ops: &mut Vec<Op>) {
        let Some((request, p)) = self.pending.remove(&h) else {
            return;
        };
        if p.send {
            if p.peer.is_some() {
                ops.push(Op::IsendComplete { request });
            }
        } else {
            ops.extend(self.received(&p, status, Some(request)));
        }
    }
}
