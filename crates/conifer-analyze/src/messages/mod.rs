//! What each call does in the terms trace formats use: messages sent and received between
//! world ranks (with communicator, tag and bytes), non-blocking requests posted and completed,
//! and collectives with their root and bytes. One [`Messages`] follows one rank's calls in
//! order, tracking its pending requests (the trace names a request by a symbolic handle that
//! is reused once the request completes; exports number requests uniquely per rank).
//!
//! What a call does apart from that state (its peers, bytes, communicator, which handles it
//! posts or completes: its plan, `plan.rs`) depends on its signature alone, so it is worked out
//! once per terminal and reused by the terminal's repeated calls.

mod ops;
mod plan;

pub use ops::{Comm, Op, COLLECTIVES};

use crate::context::CommTable;
use crate::types::TypeSizes;
use conifer_trace::decode::{Call, CallReader};
use conifer_trace::fast_hash::FastMap;
use conifer_trace::value::{HandleRef, Value};
use plan::{Planner, Posted, Step};
use std::rc::Rc;

/// One rank's calls turned into [`Op`]s.
pub struct Messages<'t> {
    /// What planning the rank's calls needs.
    planner: Planner<'t>,
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
            planner: Planner::new(reader, table, rank)?,
            next_request: 0,
            pending: FastMap::default(),
            persistent: FastMap::default(),
            plans: Vec::new(),
        })
    }

    /// The rank's datatype sizes.
    pub fn types(&self) -> &TypeSizes {
        self.planner.types()
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
                let plan: Rc<[Step]> = self.planner.plan(call).into();
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
                Step::Cancel(h) => self.cancel(*h, ops),
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

    /// Cancels the request handle `h`, if it is a pending receive: the receive is withdrawn
    /// (a receive a program cancels is one no message matched: HPCC's RandomAccess cancels
    /// its last `MPI_ANY_SOURCE` receive), and its completion moves no message.
    fn cancel(&mut self, h: HandleRef, ops: &mut Vec<Op>) {
        if let Some((request, p)) = self.pending.get(&h) {
            if !p.send {
                ops.push(Op::IrecvCancel { request: *request });
                self.pending.remove(&h);
            }
        }
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
            ops.extend(self.planner.received(&p, status, Some(request)));
        }
    }
}
