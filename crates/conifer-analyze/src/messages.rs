//! What each call does in the terms trace formats use: messages sent and received between
//! world ranks (with communicator, tag and bytes), non-blocking requests posted and completed,
//! and collectives with their root and bytes. One [`Messages`] follows one rank's calls in
//! order, tracking its pending requests (the trace names a request by a symbolic handle that
//! is reused once the request completes; exports number requests uniquely per rank).

use crate::call::Args;
use crate::context::{CommGroup, CommTable, RankContext};
use crate::effect::{self, base, local_peer, world_peer, Caller};
use crate::types::TypeSizes;
use conifer_trace::decode::{Call, CallReader};
use conifer_trace::value::{HandleKind, HandleRef, Position, Rank, Status, Value};
use conifer_trace::{Language, Trace};
use std::collections::HashMap;

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
    pending: HashMap<HandleRef, (u64, Posted)>,
    /// Persistent requests: symbolic handle → what each start posts.
    persistent: HashMap<HandleRef, Posted>,
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
            pending: HashMap::new(),
            persistent: HashMap::new(),
        })
    }

    /// The rank's datatype sizes.
    pub fn types(&self) -> &TypeSizes {
        self.ctx.types()
    }

    /// The ops of the rank's next call.
    pub fn ops(&mut self, call: &Call) -> Vec<Op> {
        let a = Args {
            name: call.name,
            slots: call.slots,
            values: &call.signature.values,
        };
        let fortran = self
            .trace
            .catalog
            .iter()
            .any(|f| f.id == call.signature.function && f.language == Language::Fortran);
        let name = base(call.name);
        let mut ops = Vec::new();
        match name {
            "Send" | "Ssend" | "Bsend" | "Rsend" => {
                if let Some(p) = self.posted(&a, true, "count", "datatype", "dest", "tag") {
                    ops.extend(send_op(&p));
                }
            }
            "Isend" | "Issend" | "Ibsend" | "Irsend" => {
                if let Some(p) = self.posted(&a, true, "count", "datatype", "dest", "tag") {
                    self.post(&a, "request", p, &mut ops);
                }
            }
            "Recv" => {
                if let Some(p) = self.posted(&a, false, "count", "datatype", "source", "tag") {
                    ops.extend(self.received(&p, a.get("status"), None));
                }
            }
            "Irecv" => {
                if let Some(p) = self.posted(&a, false, "count", "datatype", "source", "tag") {
                    self.post(&a, "request", p, &mut ops);
                }
            }
            "Sendrecv" | "Sendrecv_replace" => {
                let (sc, st, rc, rt) = if name == "Sendrecv" {
                    ("sendcount", "sendtype", "recvcount", "recvtype")
                } else {
                    ("count", "datatype", "count", "datatype")
                };
                if let Some(p) = self.posted(&a, true, sc, st, "dest", "sendtag") {
                    ops.extend(send_op(&p));
                }
                if let Some(p) = self.posted(&a, false, rc, rt, "source", "recvtag") {
                    ops.extend(self.received(&p, a.get("status"), None));
                }
            }
            "Send_init" | "Ssend_init" | "Bsend_init" | "Rsend_init" | "Recv_init" => {
                let send = name != "Recv_init";
                let (peer, tag) = if send {
                    ("dest", "tag")
                } else {
                    ("source", "tag")
                };
                if let (Some(p), Some(Value::Handle(HandleKind::Request, h))) = (
                    self.posted(&a, send, "count", "datatype", peer, tag),
                    a.get("request"),
                ) {
                    self.persistent.insert(*h, p);
                }
            }
            "Start" => {
                if let Some(Value::Handle(HandleKind::Request, h)) = a.get("request") {
                    self.start(*h, &mut ops);
                }
            }
            "Startall" => {
                if let Some(Value::Array(reqs)) = a.get("array_of_requests") {
                    for r in reqs {
                        if let Value::Handle(HandleKind::Request, h) = r {
                            self.start(*h, &mut ops);
                        }
                    }
                }
            }
            "Request_free" => {
                if let Some(Value::Handle(HandleKind::Request, h)) = a.get("request") {
                    self.persistent.remove(h);
                }
            }
            "Wait" | "Test" => {
                let done = name == "Wait" || flag(&a);
                if let (true, Some(r)) = (done, a.get("request")) {
                    self.complete(r, a.get("status"), &mut ops);
                }
            }
            "Waitall" | "Testall" => {
                let done = name == "Waitall" || flag(&a);
                if let (true, Some(Value::Array(reqs))) = (done, a.get("array_of_requests")) {
                    let statuses = a.get("array_of_statuses");
                    for (i, r) in reqs.iter().enumerate() {
                        self.complete(r, nth(statuses, i), &mut ops);
                    }
                }
            }
            "Waitany" | "Testany" => {
                let done = name == "Waitany" || flag(&a);
                let index = index_of(a.get("index"), fortran);
                if let (true, Some(i), Some(Value::Array(reqs))) =
                    (done, index, a.get("array_of_requests"))
                {
                    if let Some(r) = reqs.get(i) {
                        self.complete(r, a.get("status"), &mut ops);
                    }
                }
            }
            "Waitsome" | "Testsome" => {
                let reqs = a.get("array_of_requests");
                let statuses = a.get("array_of_statuses");
                let outcount = a.int("outcount").unwrap_or(0) as usize;
                if let (Some(Value::Array(reqs)), Some(Value::Array(indices))) =
                    (reqs, a.get("array_of_indices"))
                {
                    for (k, index) in indices.iter().take(outcount).enumerate() {
                        if let Some(r) = index_of(Some(index), fortran).and_then(|i| reqs.get(i)) {
                            self.complete(r, nth(statuses, k), &mut ops);
                        }
                    }
                }
            }
            _ => {
                if let Some(operation) = collective_operation(name) {
                    ops.push(self.collective(&a, &operation));
                }
            }
        }
        ops
    }

    /// What a send or receive posts: peer in parameter `peer`, `count` × `dt` bytes.
    fn posted(
        &self,
        a: &Args,
        send: bool,
        count: &str,
        dt: &str,
        peer: &str,
        tag: &str,
    ) -> Option<Posted> {
        let rank = match a.get(peer) {
            Some(Value::Rank(r)) => *r,
            _ => return None,
        };
        if rank == Rank::ProcNull {
            return None;
        }
        let comm_value = a.get("comm").cloned();
        let peer = comm_value.as_ref().and_then(|c| self.peer(c, &rank));
        let size = a
            .get(dt)
            .and_then(|t| self.ctx.types().size(t))
            .unwrap_or(0);
        Some(Posted {
            send,
            peer,
            tag: match a.get(tag) {
                Some(Value::Int(t)) => *t,
                _ => -1,
            },
            comm: self.comm(comm_value.as_ref()),
            comm_value,
            bytes: a.int(count).unwrap_or(0).saturating_mul(size),
        })
    }

    /// The peer rank value `r` names in `comm`: its world rank and its rank in `comm` (in the
    /// remote group of an inter-communicator).
    fn peer(&self, comm: &Value, r: &Rank) -> Option<(u32, u32)> {
        let world = world_peer(&self.ctx, comm, r)?;
        let local = match self.ctx.position(comm) {
            Some((at, _)) => local_peer(r, at)?,
            None => {
                let (my, _) = self.ctx.remote(comm)?;
                local_peer(
                    r,
                    Position {
                        rank: my,
                        grid: None,
                    },
                )?
            }
        };
        Some((world, u32::try_from(local).ok()?))
    }

    /// The export's name of communicator `comm`.
    fn comm(&self, comm: Option<&Value>) -> Comm {
        let Some(c) = comm.filter(|c| !crate::context::is_comm_self(c)) else {
            return Comm::Own;
        };
        if self.ctx.position(c).is_none() && self.ctx.remote(c).is_some() {
            let mut id = Vec::new();
            c.encode(&mut id);
            return Comm::Inter(id);
        }
        self.table
            .group_of(c, self.rank)
            .map_or(Comm::Own, Comm::Group)
    }

    /// Posts `p` under the request in parameter `slot`.
    fn post(&mut self, a: &Args, slot: &str, p: Posted, ops: &mut Vec<Op>) {
        if let Some(Value::Handle(HandleKind::Request, h)) = a.get(slot) {
            self.post_handle(*h, p, ops);
        }
    }

    fn post_handle(&mut self, h: HandleRef, p: Posted, ops: &mut Vec<Op>) {
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

    /// Starts persistent request `h`.
    fn start(&mut self, h: HandleRef, ops: &mut Vec<Op>) {
        if let Some(p) = self.persistent.get(&h).cloned() {
            self.post_handle(h, p, ops);
        }
    }

    /// Completes the request `r` names, if it is pending, with its `status` when recorded.
    fn complete(&mut self, r: &Value, status: Option<&Value>, ops: &mut Vec<Op>) {
        let Value::Handle(HandleKind::Request, h) = r else {
            return;
        };
        let Some((request, p)) = self.pending.remove(h) else {
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

    /// The receive `p` completed, with its status when recorded.
    fn received(&self, p: &Posted, status: Option<&Value>, request: Option<u64>) -> Option<Op> {
        let mut from = p.peer;
        let (mut tag, mut bytes) = (p.tag, p.bytes);
        if let Some(Value::Status(Status {
            source,
            tag: t,
            bytes: b,
            ..
        })) = status
        {
            if *source == Rank::ProcNull {
                return None;
            }
            // Statuses name the sender as other ranks are recorded.
            from = p
                .comm_value
                .as_ref()
                .and_then(|c| self.peer(c, source))
                .or(from);
            tag = *t;
            bytes = u64::try_from(*b).unwrap_or(bytes);
        }
        let comm = p.comm.clone();
        Some(match request {
            Some(request) => Op::IrecvComplete {
                from,
                tag,
                comm,
                bytes,
                request,
            },
            None => Op::Recv {
                from,
                tag,
                comm,
                bytes,
            },
        })
    }

    fn collective(&self, a: &Args, operation: &str) -> Op {
        let e = effect::evaluate(a, &self.ctx);
        let comm_value = a.get("comm");
        let root = match (a.get("root"), comm_value) {
            (Some(Value::Rank(r)), Some(c)) => self.peer(c, r).map(|(_, local)| local),
            (Some(Value::Int(r)), _) => u32::try_from(*r).ok(),
            _ => None,
        };
        Op::Collective {
            operation: operation.to_string(),
            comm: self.comm(comm_value),
            root,
            sent: e.sent,
            received: e.received,
        }
    }
}

/// The [`Op::Send`] of a blocking send posted as `p`.
fn send_op(p: &Posted) -> Option<Op> {
    let (to, to_rank) = p.peer?;
    Some(Op::Send {
        to,
        to_rank,
        tag: p.tag,
        comm: p.comm.clone(),
        bytes: p.bytes,
    })
}

/// The [`COLLECTIVES`] entry a base name starts (`Allreduce` for `Allreduce` and the
/// non-blocking `Iallreduce`), if any.
fn collective_operation(name: &str) -> Option<String> {
    if COLLECTIVES.contains(&name) {
        return Some(name.to_string());
    }
    let mut rest = name.strip_prefix('I')?.chars();
    let first = rest.next()?.to_ascii_uppercase();
    let operation = format!("{first}{}", rest.as_str());
    COLLECTIVES
        .contains(&operation.as_str())
        .then_some(operation)
}

/// True when the call's `flag` output is set.
fn flag(a: &Args) -> bool {
    matches!(a.get("flag"), Some(Value::Int(f)) if *f != 0)
}

/// The `i`th element of an array of statuses.
fn nth(statuses: Option<&Value>, i: usize) -> Option<&Value> {
    match statuses {
        Some(Value::Array(items)) => items.get(i),
        _ => None,
    }
}

/// An index output as a 0-based position (Fortran's are 1-based); `None` for
/// `MPI_UNDEFINED` and other negative values.
fn index_of(v: Option<&Value>, fortran: bool) -> Option<usize> {
    let Some(Value::Int(i)) = v else {
        return None;
    };
    let i = if fortran { *i - 1 } else { *i };
    usize::try_from(i).ok()
}
