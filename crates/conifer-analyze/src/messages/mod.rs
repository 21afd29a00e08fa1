//! What each call does in the terms trace formats use: messages sent and received between
//! world ranks (with communicator, tag and bytes), non-blocking requests posted and completed,
//! and collectives with their root and bytes. One [`Messages`] follows one rank's calls in
//! order, tracking its pending requests (the trace names a request by a symbolic handle that
//! is reused once the request completes; exports number requests uniquely per rank).
//!
//! What a call does apart from that state (its peers, bytes, communicator, which handles it
//! posts or completes: its plan, `plan.rs`) depends on its signature alone, so it is worked out
//! once per terminal and reused by the terminal's repeated calls; in rank-relative form
//! (`relative.rs`), so ranks given one [`PlanCache`] share the plans they agree on.

mod ops;
mod plan;
mod relative;

pub use ops::{Comm, Op, COLLECTIVES};
pub use relative::PlanCache;

use crate::context::CommTable;
use crate::types::TypeSizes;
use conifer_trace::decode::{Call, CallReader};
use conifer_trace::fast_hash::FastMap;
use conifer_trace::small_map::SmallMap;
use conifer_trace::value::{HandleRef, Value};
use plan::{Planner, Posted, Step};
use relative::{absolute_op, absolute_posted, relative};
use std::rc::Rc;

/// One rank's calls turned into [`Op`]s.
pub struct Messages<'t> {
    /// What planning the rank's calls needs.
    planner: Planner<'t>,
    next_request: u64,
    /// Pending requests: symbolic handle → (request number, what was posted).
    pending: SmallMap<HandleRef, (u64, Rc<Posted>)>,
    /// Persistent requests: symbolic handle → what each start posts.
    persistent: FastMap<HandleRef, Rc<Posted>>,
    /// Per terminal met (calls filled from value streams are planned anew), its plan's
    /// number in `cache` (0: not met yet).
    plans: Vec<u8>,
    /// The plans of terminals with too many variants to share.
    own_plans: FastMap<u32, Rc<[Step]>>,
    /// The relative plans, shared with other ranks' followers.
    cache: Rc<PlanCache>,
    rank: u32,
}

impl<'t> Messages<'t> {
    /// A follower for world rank `rank` (runs a first pass over its calls for datatypes and
    /// other state later calls refer to).
    pub fn new(reader: &CallReader<'t>, table: &'t CommTable, rank: u32) -> Result<Self, String> {
        Self::sharing(reader, table, rank, Rc::default())
    }

    /// A follower for world rank `rank` that keeps its plans in `cache` (shared with other
    /// ranks' followers of the same trace).
    pub fn sharing(
        reader: &CallReader<'t>,
        table: &'t CommTable,
        rank: u32,
        cache: Rc<PlanCache>,
    ) -> Result<Self, String> {
        Ok(Messages {
            planner: Planner::new(reader, table, rank)?,
            next_request: 0,
            pending: SmallMap::default(),
            persistent: FastMap::default(),
            plans: Vec::new(),
            own_plans: FastMap::default(),
            cache,
            rank,
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
        let known = self.plans.get(slot).copied().unwrap_or(0);
        let plan = match known {
            _ if call.streamed => relative(self.rank, self.planner.plan(call)).into(),
            0 => {
                let plan = relative(self.rank, self.planner.plan(call));
                let n = match self.cache.intern(call.terminal, plan) {
                    Ok(n) => n,
                    Err(own) => {
                        self.own_plans.insert(call.terminal, own);
                        u8::MAX
                    }
                };
                if self.plans.len() <= slot {
                    self.plans.resize(slot + 1, 0);
                }
                self.plans[slot] = n;
                self.plan_of(call.terminal, n)
            }
            n => self.plan_of(call.terminal, n),
        };
        for step in plan.iter() {
            match step {
                Step::Op(op) => ops.push(absolute_op(self.rank, op)),
                Step::Post(h, p) => self.post(*h, absolute_posted(self.rank, p), ops),
                Step::Persist(h, p) => {
                    self.persistent.insert(*h, absolute_posted(self.rank, p));
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

    /// Plan number `n` of `terminal` (`u8::MAX`: the rank's own).
    fn plan_of(&self, terminal: u32, n: u8) -> Rc<[Step]> {
        match self.own_plans.get(&terminal) {
            Some(own) if n == u8::MAX => Rc::clone(own),
            _ => self.cache.get(terminal, n),
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
