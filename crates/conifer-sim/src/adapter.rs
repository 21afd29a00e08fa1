//! From decoded calls to simulator actions. One [`TraceProgram`] per rank reads the rank's
//! calls lazily (`Trace::calls`), turns each into message-level ops with the export crate's
//! [`Messages`] (world ranks, tags, communicators, bytes, request numbers, which requests a
//! wait or a successful test completed) and those into [`Action`]s:
//!
//! - the computation before the call: the call's own interval with lossless timing, else
//!   its timing family's mean interval (pooled over ranks) times the rank's
//!   [`interval_scale`], so each rank computes its own recorded total;
//! - sends and receives are posted (blocking ones as a post and a wait; synchronous sends,
//!   `MPI_Ssend` and `MPI_Issend`, go by rendezvous whatever their size); a receive posted
//!   with `MPI_ANY_SOURCE` or `MPI_ANY_TAG` matches as a wildcard (a blocking receive
//!   whose status was recorded uses the recorded source and tag);
//! - `Wait*` and tests that succeeded wait for the requests the trace says they completed;
//!   a test that completed nothing (or an `Iprobe`/`Probe`) is an iteration of a polling
//!   loop ([`crate::engine::SPIN_ITERATION_NS`]);
//! - collectives become the point-to-point rounds of their algorithm
//!   ([`crate::collectives`]) on a matching context of their own; non-blocking ones run
//!   at the call that starts them.
//!
//! Only the main thread (thread 0) of each rank is simulated.

use crate::collectives::{self, Collective, Rule};
use crate::engine::{Action, Program};
use crate::keys::KeyTable;
use conifer_analyze::context::{CommGroup, CommTable};
use conifer_analyze::messages::{Comm, Messages, Op, PlanCache};
use conifer_trace::decode::{Call, CallReader, DecodeError};
use conifer_trace::fast_hash::FastMap;
use conifer_trace::forest::NO_TREE;
use conifer_trace::small_map::SmallMap;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// What every rank's program shares: communicator members, matching contexts, call keys,
/// the collective rule.
pub struct Shared {
    members: HashMap<CommGroup, Vec<u32>>,
    /// Per group, each world rank's position in it (a linear search per collective call
    /// made 10⁵ ranks' allreduces quadratic).
    positions: HashMap<CommGroup, FastMap<u32, u32>>,
    contexts: RefCell<FastMap<Comm, u32>>,
    /// The communicator looked up last, with its context (most ops name the same one).
    last_context: RefCell<Option<(Comm, u32)>>,
    /// The call keys met so far.
    pub keys: RefCell<KeyTable>,
    /// Per terminal met (not filled from streams), indexed by terminal: what its calls share
    /// on every rank.
    terminals: RefCell<Vec<Option<Terminal>>>,
    /// The message plans of every rank, in rank-relative form: one copy of each distinct
    /// one.
    pub plans: Rc<PlanCache>,
    /// The current call's ops (one allocation for all ranks: one rank runs at a time).
    ops: RefCell<Vec<Op>>,
    rule: Rule,
}

impl Shared {
    /// From the trace's communicator table and the collective rule.
    pub fn new(table: &CommTable, rule: Rule) -> Shared {
        // Groups of one member (every rank's MPI_COMM_SELF) run no collective messages.
        let members: HashMap<CommGroup, Vec<u32>> = table
            .groups()
            .into_iter()
            .filter(|(_, m)| m.len() > 1)
            .filter_map(|(g, m)| Some((g, m.iter().copied().collect::<Option<Vec<u32>>>()?)))
            .collect();
        let positions = members
            .iter()
            .map(|(g, m)| {
                let at = m.iter().enumerate().map(|(i, &w)| (w, i as u32)).collect();
                (g.clone(), at)
            })
            .collect();
        Shared {
            members,
            positions,
            contexts: RefCell::new(FastMap::default()),
            last_context: RefCell::new(None),
            keys: RefCell::new(KeyTable::default()),
            terminals: RefCell::new(Vec::new()),
            plans: Rc::default(),
            ops: RefCell::default(),
            rule,
        }
    }

    /// The matching context of communicator `comm`: point-to-point or collective traffic.
    fn context(&self, comm: &Comm, collective: bool) -> u32 {
        let mut last = self.last_context.borrow_mut();
        let id = match &*last {
            Some((c, id)) if c == comm => *id,
            _ => {
                let mut contexts = self.contexts.borrow_mut();
                let next = contexts.len() as u32;
                let id = *contexts.entry(comm.clone()).or_insert(next);
                *last = Some((comm.clone(), id));
                id
            }
        };
        2 * id + u32::from(collective)
    }
}

/// What the calls of one terminal share: the call key (when the trace has no structure-tree
/// sites, which vary per call), the computation before it (without lossless timing), whether
/// it is a poll and whether its sends are synchronous.
#[derive(Clone, Copy)]
struct Terminal {
    key: Option<u32>,
    compute: Option<f64>,
    poll: bool,
    sync: bool,
}

/// One rank's calls as simulator actions.
pub struct TraceProgram<'t, I> {
    calls: I,
    messages: Messages<'t>,
    shared: &'t Shared,
    rank: u32,
    next_req: u64,
    collectives: SmallMap<u32, i64>,
    /// The collective the rank is in, whose later rounds are handed out one per
    /// [`Program::next_call`] (a rank holds one round's actions at a time, not the whole
    /// algorithm's).
    running: Option<Running<'t>>,
    /// Factor on family mean intervals ([`interval_scale`]).
    interval_scale: f64,
}

/// A collective under way: its rounds, the next one to run, and where its messages go.
struct Running<'t> {
    rounds: Vec<Vec<collectives::Step>>,
    next: usize,
    members: &'t [u32],
    ctx: u32,
    tag: i64,
}

/// Request numbers of blocking operations and collective steps (the trace's own requests
/// are numbered from 0).
const INTERNAL_REQUESTS: u64 = 1 << 62;

/// The program of world rank `rank` of `trace`.
pub fn program<'t>(
    reader: &CallReader<'t>,
    table: &'t CommTable,
    shared: &'t Shared,
    rank: u32,
) -> Result<TraceProgram<'t, impl Iterator<Item = Result<Call<'t>, DecodeError>> + 't>, String> {
    Ok(TraceProgram {
        calls: reader.calls(rank),
        messages: Messages::sharing(reader, table, rank, Rc::clone(&shared.plans))?,
        shared,
        rank,
        next_req: INTERNAL_REQUESTS,
        collectives: SmallMap::default(),
        running: None,
        interval_scale: interval_scale(reader, rank),
    })
}

/// The factor that makes rank `rank`'s mean intervals add up to the computation time the
/// rank recorded. Family statistics are pooled over ranks, so a rank that computes more than
/// others between the same calls (a root, a load imbalance) would get the average; the
/// rank's own total (stored per rank beside them) restores its share. The sum of means is
/// computed on the compressed form: each terminal's count in the rank's grammar and trace
/// tree times its family's mean. 1 for ranks with several threads (the total covers them
/// all) or without totals.
pub fn interval_scale(reader: &CallReader, rank: u32) -> f64 {
    let record = &reader.trace().record;
    let Some(entry) = record.ranks.get(rank as usize) else {
        return 1.0;
    };
    if entry.threads.len() != 1 {
        return 1.0;
    }
    let mut counts = record.grammars[entry.threads[0] as usize].terminal_counts();
    let tree = entry.trees.first().copied().filter(|&t| t != NO_TREE);
    if let (Some(tree), Some(forest)) = (tree, record.forest.as_ref()) {
        for (t, n) in forest.terminal_counts(tree) {
            *counts.entry(t).or_default() += n;
        }
    }
    let modelled: f64 = counts
        .iter()
        .filter_map(|(&t, &n)| Some(n as f64 * reader.family_timing(t)?.interval.mean()))
        .sum();
    let recorded = entry.time.compute_ns;
    if modelled > 0.0 && recorded > 0.0 {
        recorded / modelled
    } else {
        1.0
    }
}

impl<'t, I: Iterator<Item = Result<Call<'t>, DecodeError>>> Program for TraceProgram<'t, I> {
    fn next_call(&mut self, out: &mut VecDeque<Action>) -> Result<bool, String> {
        if let Some(mut running) = self.running.take() {
            let round = &running.rounds[running.next..=running.next];
            collectives::expand(
                round,
                running.members,
                running.ctx,
                running.tag,
                &mut self.next_req,
                out,
            );
            running.next += 1;
            if running.next < running.rounds.len() {
                self.running = Some(running);
            }
            return Ok(true);
        }
        let Some(call) = self.calls.next() else {
            return Ok(false);
        };
        let call = call.map_err(|e| format!("rank {}: {}", self.rank, e.0))?;
        if call.signature.thread != 0 {
            // Threads come one after the other: the main thread is over.
            return Ok(false);
        }
        let slot = call.terminal as usize;
        let known = self.shared.terminals.borrow().get(slot).copied().flatten();
        let terminal = match known {
            Some(t) if !call.streamed => t,
            _ => {
                let t = self.terminal(&call);
                if !call.streamed {
                    let mut terminals = self.shared.terminals.borrow_mut();
                    if terminals.len() <= slot {
                        terminals.resize(slot + 1, None);
                    }
                    terminals[slot] = Some(t);
                }
                t
            }
        };
        let compute = match call.time {
            Some(t) => t.interval_ns as f64,
            None => terminal.compute.unwrap_or(0.0) * self.interval_scale,
        };
        let key = match terminal.key {
            Some(k) => k,
            None => self.shared.keys.borrow_mut().key(&call),
        };
        let mut ops = self.shared.ops.take();
        self.messages.ops_into(&call, &mut ops);
        let failed_poll = terminal.poll && !ops.iter().any(completes);
        if failed_poll {
            out.push_back(Action::Call { key, compute: 0.0 });
            out.push_back(Action::Poll { compute });
            ops.clear();
        } else {
            out.push_back(Action::Call { key, compute });
            self.translate(&mut ops, terminal.sync, out);
        }
        *self.shared.ops.borrow_mut() = ops;
        Ok(true)
    }
}

/// True when `op` completes a request or a message: a test or probe that does so succeeded.
fn completes(op: &Op) -> bool {
    matches!(
        op,
        Op::Send { .. } | Op::Recv { .. } | Op::IsendComplete { .. } | Op::IrecvComplete { .. }
    )
}

impl<I> TraceProgram<'_, I> {
    /// What the calls of `call`'s terminal share.
    fn terminal(&self, call: &Call) -> Terminal {
        let name = call.name.strip_prefix("MPI_").unwrap_or(call.name);
        Terminal {
            key: call
                .site
                .is_none()
                .then(|| self.shared.keys.borrow_mut().key(call)),
            compute: call.timing.map(|t| t.interval.mean()),
            poll: name.starts_with("Test") || name.starts_with("Iprobe") || name == "Probe",
            sync: matches!(name, "Ssend" | "Issend" | "Ssend_c" | "Issend_c"),
        }
    }

    fn fresh(&mut self) -> u64 {
        self.next_req += 1;
        self.next_req
    }

    /// Appends the actions of one call's `ops` (emptied); its sends are synchronous when
    /// `sync`.
    fn translate(&mut self, ops: &mut Vec<Op>, sync: bool, out: &mut VecDeque<Action>) {
        let mut waits = Vec::new();
        // A call that is one collective runs its rounds one at a time.
        let alone = ops.len() == 1;
        for op in ops.drain(..) {
            match op {
                Op::Send {
                    to,
                    tag,
                    comm,
                    bytes,
                    ..
                } => {
                    let req = self.fresh();
                    let ctx = self.shared.context(&comm, false);
                    out.push_back(Action::Send {
                        req,
                        to,
                        ctx,
                        tag,
                        bytes,
                        sync,
                    });
                    waits.push(req);
                }
                Op::Isend {
                    to,
                    tag,
                    comm,
                    bytes,
                    request,
                    ..
                } => {
                    let ctx = self.shared.context(&comm, false);
                    out.push_back(Action::Send {
                        req: request,
                        to,
                        ctx,
                        tag,
                        bytes,
                        sync,
                    });
                }
                Op::IrecvRequest {
                    request,
                    from,
                    tag,
                    comm,
                    ..
                } => out.push_back(Action::Recv {
                    req: request,
                    from,
                    ctx: self.shared.context(&comm, false),
                    tag: (tag != -1).then_some(tag),
                }),
                Op::Recv {
                    from, tag, comm, ..
                } => {
                    let req = self.fresh();
                    out.push_back(Action::Recv {
                        req,
                        from: from.map(|(world, _)| world),
                        ctx: self.shared.context(&comm, false),
                        tag: (tag != -1).then_some(tag),
                    });
                    waits.push(req);
                }
                Op::IsendComplete { request } | Op::IrecvComplete { request, .. } => {
                    waits.push(request)
                }
                Op::IrecvCancel { request } => out.push_back(Action::Cancel(request)),
                Op::Collective {
                    operation,
                    comm,
                    root,
                    sent,
                    received,
                } => self.collective(&operation, &comm, (root, sent, received), alone, out),
            }
        }
        if !waits.is_empty() {
            out.push_back(Action::Wait(waits));
        }
    }

    /// Appends the rounds of a collective (nothing on `MPI_COMM_SELF`, on
    /// inter-communicators, or on communicators whose members the trace does not name):
    /// with `lazily`, the first round only, the others kept for the following
    /// [`Program::next_call`]s.
    fn collective(
        &mut self,
        operation: &str,
        comm: &Comm,
        (root, sent, received): (Option<u32>, u64, u64),
        lazily: bool,
        out: &mut VecDeque<Action>,
    ) {
        let shared = self.shared;
        let (Some(c), Comm::Group(g)) = (Collective::of_operation(operation), comm) else {
            return;
        };
        let Some(members) = shared.members.get(g) else {
            return;
        };
        let n = members.len() as u32;
        let Some(&me) = shared.positions.get(g).and_then(|at| at.get(&self.rank)) else {
            return;
        };
        if n < 2 {
            return;
        }
        let others = u64::from(n - 1);
        let m = if c.rooted() && root != Some(me) {
            sent.max(received)
        } else if c == Collective::Scan {
            (sent + received) / others
        } else {
            sent.max(received) / others
        };
        let algorithm = shared.rule.choose(c, n, m);
        let rounds = collectives::schedule(c, algorithm, n, me, root.unwrap_or(0), m);
        let ctx = shared.context(comm, true);
        let tag = self.collectives.get(&ctx).copied().unwrap_or(0);
        self.collectives.insert(ctx, tag + 1);
        if !lazily || rounds.len() < 2 {
            collectives::expand(&rounds, members, ctx, tag, &mut self.next_req, out);
            return;
        }
        collectives::expand(&rounds[..1], members, ctx, tag, &mut self.next_req, out);
        self.running = Some(Running {
            rounds,
            next: 1,
            members,
            ctx,
            tag,
        });
    }
}
