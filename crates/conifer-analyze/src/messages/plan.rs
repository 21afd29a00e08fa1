//! A call's plan: what it does as far as its signature alone tells — the ops it makes
//! whole, the requests it posts (with what they post) and the handles it completes —
//! leaving request numbering and pending requests to [`Messages`](super::Messages).

use super::ops::{Comm, Op, COLLECTIVES};
use crate::call::Args;
use crate::context::{CommTable, RankContext};
use crate::effect::{self, base, local_peer, world_peer, Caller};
use crate::types::TypeSizes;
use conifer_trace::decode::{Call, CallReader};
use conifer_trace::value::{HandleKind, HandleRef, Position, Rank, Status, Value};
use conifer_trace::Language;
use conifer_trace::Trace;
use std::rc::Rc;

/// A posted point-to-point operation.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Posted {
    /// A send (else a receive).
    pub(super) send: bool,
    /// The peer, world rank and rank in the communicator (resolved at completion for
    /// receives, from their status).
    pub(super) peer: Option<(u32, u32)>,
    /// The tag (negative for `MPI_ANY_TAG`, or when not recorded).
    pub(super) tag: i64,
    /// The communicator argument.
    pub(super) comm_value: Option<Value>,
    /// The communicator as exports name it.
    pub(super) comm: Comm,
    /// Bytes.
    pub(super) bytes: u64,
}

/// One step of a call's plan.
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    /// An op the signature makes whole (blocking sends and receives, collectives).
    Op(Op),
    /// Posts a non-blocking request under a handle.
    Post(HandleRef, Rc<Posted>),
    /// Makes a persistent request under a handle.
    Persist(HandleRef, Rc<Posted>),
    /// Starts a persistent request.
    Start(HandleRef),
    /// Frees a persistent request.
    Free(HandleRef),
    /// Completes the request under a handle, with its status when recorded.
    Complete(HandleRef, Option<Value>),
    /// Cancels the request under a handle (`MPI_Cancel`).
    Cancel(HandleRef),
}

/// What planning one rank's calls needs: the trace, its communicators and the rank's
/// context.
pub(super) struct Planner<'t> {
    trace: &'t Trace,
    table: &'t CommTable,
    ctx: RankContext<'t>,
    rank: u32,
}

impl<'t> Planner<'t> {
    /// The planner of world rank `rank` (runs a first pass over its calls for datatypes and
    /// other state later calls refer to).
    pub(super) fn new(
        reader: &CallReader<'t>,
        table: &'t CommTable,
        rank: u32,
    ) -> Result<Self, String> {
        Ok(Planner {
            trace: reader.trace(),
            table,
            ctx: RankContext::of_rank(reader, table, rank).map_err(|e| e.0)?,
            rank,
        })
    }

    /// The rank's datatype sizes.
    pub(super) fn types(&self) -> &TypeSizes {
        self.ctx.types()
    }

    /// The plan of `call`.
    pub(super) fn plan(&self, call: &Call) -> Vec<Step> {
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
        let mut steps = Vec::new();
        match name {
            "Send" | "Ssend" | "Bsend" | "Rsend" => {
                if let Some(p) = self.posted(&a, true, "count", "datatype", "dest", "tag") {
                    steps.extend(send_op(&p).map(Step::Op));
                }
            }
            "Isend" | "Issend" | "Ibsend" | "Irsend" => {
                if let Some(p) = self.posted(&a, true, "count", "datatype", "dest", "tag") {
                    if let Some(Value::Handle(HandleKind::Request, h)) = a.get("request") {
                        steps.push(Step::Post(*h, Rc::new(p)));
                    }
                }
            }
            "Recv" => {
                if let Some(p) = self.posted(&a, false, "count", "datatype", "source", "tag") {
                    steps.extend(self.received(&p, a.get("status"), None).map(Step::Op));
                }
            }
            "Irecv" => {
                if let Some(p) = self.posted(&a, false, "count", "datatype", "source", "tag") {
                    if let Some(Value::Handle(HandleKind::Request, h)) = a.get("request") {
                        steps.push(Step::Post(*h, Rc::new(p)));
                    }
                }
            }
            "Sendrecv" | "Sendrecv_replace" => {
                let (sc, st, rc, rt) = if name == "Sendrecv" {
                    ("sendcount", "sendtype", "recvcount", "recvtype")
                } else {
                    ("count", "datatype", "count", "datatype")
                };
                if let Some(p) = self.posted(&a, true, sc, st, "dest", "sendtag") {
                    steps.extend(send_op(&p).map(Step::Op));
                }
                if let Some(p) = self.posted(&a, false, rc, rt, "source", "recvtag") {
                    steps.extend(self.received(&p, a.get("status"), None).map(Step::Op));
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
                    steps.push(Step::Persist(*h, Rc::new(p)));
                }
            }
            "Start" => {
                if let Some(Value::Handle(HandleKind::Request, h)) = a.get("request") {
                    steps.push(Step::Start(*h));
                }
            }
            "Startall" => {
                if let Some(Value::Array(reqs)) = a.get("array_of_requests") {
                    for r in reqs {
                        if let Value::Handle(HandleKind::Request, h) = r {
                            steps.push(Step::Start(*h));
                        }
                    }
                }
            }
            "Request_free" => {
                if let Some(Value::Handle(HandleKind::Request, h)) = a.get("request") {
                    steps.push(Step::Free(*h));
                }
            }
            "Cancel" => {
                if let Some(Value::Handle(HandleKind::Request, h)) = a.get("request") {
                    steps.push(Step::Cancel(*h));
                }
            }
            "Wait" | "Test" | "Waitall" | "Testall" | "Waitany" | "Testany" | "Waitsome"
            | "Testsome" => {
                for (r, status) in crate::completions::completed(&a, fortran) {
                    steps.extend(complete(r, status));
                }
            }
            _ => {
                if let Some(operation) = collective_operation(name) {
                    steps.push(Step::Op(self.collective(&a, &operation)));
                }
            }
        }
        steps
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

    /// The receive `p` completed, with its status when recorded.
    pub(super) fn received(
        &self,
        p: &Posted,
        status: Option<&Value>,
        request: Option<u64>,
    ) -> Option<Op> {
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
        let e = effect::evaluate_sizes(a, &self.ctx);
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

/// The [`Step::Complete`] of request value `r` (nothing when it is not a request handle).
fn complete(r: &Value, status: Option<&Value>) -> Option<Step> {
    match r {
        Value::Handle(HandleKind::Request, h) => Some(Step::Complete(*h, status.cloned())),
        _ => None,
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
