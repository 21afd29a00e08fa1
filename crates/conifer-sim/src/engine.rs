//! The discrete-event engine: ranks run their actions (computation, posted sends and
//! receives, waits) against one clock each; messages travel as timed arrival events; MPI
//! matching happens at the receiver.
//!
//! A rank runs ahead until it must wait for something another rank determines; events are
//! processed in time order (ties in creation order), which keeps MPI's matching outcome:
//! a receive takes the earliest-arriving matching message, a message the earliest-posted
//! matching receive, and messages between one pair of ranks arrive in the order they were
//! sent (arrival times are made monotone per pair, so none overtakes another).
//!
//! Timing of a message of m bytes posted by the sender at time t (LogGP + LogGPO's O):
//! - it departs at `d = max(t, sender's NIC free)`;
//! - eager (m ≤ eager limit): the sender's CPU is busy `o_s + m·O` (the send request is
//!   then complete), its NIC is busy `max(g, m·G)`, the message arrives at
//!   `d + o_s + m·G + L`; the receive is ready at `max(arrival, posted)` and costs the
//!   receiver `o_r + m·O` when it completes;
//! - rendezvous (larger messages, and synchronous sends of any size): the sender pays `o_s` and its NIC `g` for a request-to-send arriving at
//!   `d + o_s + L`; once matched at `M = max(arrival, posted)`, the clear-to-send comes back
//!   (`L`), after the handshake time `R` the sender pushes the data (`o_s + m·G`; its
//!   request completes at `S = M + L + R + o_s + m·G`), the data lands at `S + L` and
//!   costs the receiver `o_r`;
//! - to itself (a copy, no network, never rendezvous): the sender's CPU is busy
//!   `(self + m·selfG)/2`, the message is there at once, and the receive costs the same.
//!
//! Each rank also carries its *critical-path profile*: for the longest chain of
//! dependencies ending at its clock, the time each call key contributed (the sum equals the
//! clock). Time a rank spends blocked is charged to its cause, the peer that was late: when
//! a wait is ended by a message, the receiver's profile becomes the sender's profile at the
//! send plus the transfer, attributed to the waiting call; when a rendezvous send waits for a
//! receive posted after its request-to-send arrived (a late receiver), the sender's profile
//! becomes the receiver's at the post plus the handshake and transfer, attributed to the
//! send, and the late receiver keeps its own profile (its wait is only the handshake).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::rc::Rc;

use crate::params::Params;
use conifer_trace::small_map::SmallMap;

/// A critical-path profile: time (ns) per call key.
type Profile = Rc<[f64]>;

/// The call key computation is attributed to.
pub const COMPUTE_KEY: u32 = 0;

/// One thing a rank does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A call begins after `compute` ns of computation (before scaling) since the previous
    /// call; what follows until the next `Call` is attributed to `key`.
    Call {
        /// The call's key (see [`crate::keys::KeyTable`]).
        key: u32,
        /// Computation before the call, ns.
        compute: f64,
    },
    /// Posts a send as request `req`.
    Send {
        /// Request number, unique among the rank's pending requests.
        req: u64,
        /// Receiver, world rank.
        to: u32,
        /// Matching context (communicator, point-to-point or collective).
        ctx: u32,
        /// Tag.
        tag: i64,
        /// Bytes.
        bytes: u64,
        /// A synchronous send (`MPI_Ssend`, `MPI_Issend`): it completes only once matched,
        /// so it goes by rendezvous whatever its size.
        sync: bool,
    },
    /// Posts a receive as request `req`.
    Recv {
        /// Request number.
        req: u64,
        /// Sender, world rank; `None` for any source.
        from: Option<u32>,
        /// Matching context.
        ctx: u32,
        /// Tag; `None` for any tag.
        tag: Option<i64>,
    },
    /// Waits until every listed request completed (unknown numbers are ignored).
    Wait(Vec<u64>),
    /// Withdraws the posted receive `req` if no message matched it yet (`MPI_Cancel`).
    Cancel(u64),
    /// A poll that found nothing (a failed test or probe) after `compute` ns of computation
    /// (before scaling) since the previous call: an iteration of a polling loop (see
    /// [`SPIN_ITERATION_NS`]).
    Poll {
        /// Computation before the poll, ns.
        compute: f64,
    },
}

/// A failed poll's preceding computation below this (ns, before scaling) is taken as the
/// polling loop spinning, and costs nothing: the loop runs until what it polls for is there,
/// so in the run being predicted it spins exactly as long as the wait that follows it, as
/// often as that allows. (The trace's number of polls belongs to the recorded run's timing,
/// not the predicted one's.) Computation at least this long between polls is work the loop
/// overlaps with communication, and is spent.
pub const SPIN_ITERATION_NS: f64 = 1000.0;

/// Where a rank's actions come from, one call at a time.
pub trait Program {
    /// Appends the actions of the rank's next call to `out`; `false` when there are no more.
    fn next_call(&mut self, out: &mut VecDeque<Action>) -> Result<bool, String>;
}

/// Time split of one rank.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RankTimes {
    /// When the rank ended, ns.
    pub end: f64,
    /// Computation, ns.
    pub compute: f64,
    /// Communication overheads the rank's CPU paid (o, m·O, NIC stalls), ns.
    pub comm: f64,
    /// Waiting for other ranks or the network, ns.
    pub wait: f64,
}

/// What a simulation produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Per rank.
    pub ranks: Vec<RankTimes>,
    /// The critical path (the profile of the rank that ended last): ns per call key.
    pub critical: Vec<f64>,
    /// Actions and message arrivals processed.
    pub events: u64,
    /// Messages sent (collectives' included).
    pub messages: u64,
}

/// The simulation could not finish: a rank waits for something that never happens.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    /// The rank.
    pub rank: u32,
    /// The key of the call it waits in.
    pub key: u32,
}

/// A pending request.
struct Req {
    /// When it completes (receives: when the data is there), once known.
    done: Option<f64>,
    /// CPU cost paid when a wait completes it.
    cost: f64,
    /// The sender's profile and its time, when a remote rank determined `done`.
    dep: Option<(Profile, f64)>,
    /// True while the rank is blocked waiting for it.
    waited: bool,
}

/// A message (or rendezvous request-to-send) in flight or unexpected.
struct Msg {
    from: u32,
    ctx: u32,
    tag: i64,
    bytes: u64,
    send_req: u64,
    rendezvous: bool,
    arrival: f64,
    snapshot: Profile,
    snapshot_at: f64,
}

/// A posted receive no message matched yet.
struct Posted {
    req: u64,
    from: Option<u32>,
    ctx: u32,
    tag: Option<i64>,
    at: f64,
    /// The receiver's profile at the post: what a rendezvous sender waiting for this
    /// receive inherits.
    snapshot: Profile,
}

/// The CPU time each end pays for a message of `m` bytes a rank sends itself.
fn self_cost(p: &Params, m: f64) -> f64 {
    (p.self_overhead + m * p.self_per_byte) / 2.0
}

fn matches(p: &Posted, m: &Msg) -> bool {
    p.ctx == m.ctx && p.from.is_none_or(|f| f == m.from) && p.tag.is_none_or(|t| t == m.tag)
}

struct Rank<P> {
    program: P,
    actions: VecDeque<Action>,
    clock: f64,
    key: u32,
    nic_free: f64,
    profile: Profile,
    /// Unshared profiles no longer used, to copy into instead of allocating.
    spare: Vec<Profile>,
    requests: SmallMap<u64, Req>,
    posted: VecDeque<Posted>,
    unexpected: VecDeque<Msg>,
    last_arrival: SmallMap<u32, f64>,
    /// Requests of the current wait not yet determined.
    blocked: usize,
    finished: bool,
    times: RankTimes,
}

impl<P> Rank<P> {
    /// Spends `d` ns of the current call's CPU time (or waiting, when `wait`).
    fn spend(&mut self, d: f64, wait: bool) {
        if d <= 0.0 {
            return;
        }
        self.clock += d;
        if wait {
            self.times.wait += d;
        } else {
            self.times.comm += d;
        }
        self.add(self.key, d);
    }

    /// Adds `d` ns to key `key` of the rank's profile (copying it first when a message
    /// snapshot shares it, into a recycled profile when one is spare).
    fn add(&mut self, key: u32, d: f64) {
        let k = key as usize;
        if self.profile.len() <= k {
            let mut v = self.profile.to_vec();
            v.resize(k + 1, 0.0);
            self.profile = v.into();
        }
        if Rc::get_mut(&mut self.profile).is_none() {
            let copy = match self.spare.pop() {
                Some(mut spare) if spare.len() == self.profile.len() => {
                    Rc::get_mut(&mut spare)
                        .expect("spare profiles are unshared")
                        .copy_from_slice(&self.profile);
                    spare
                }
                _ => Rc::from(&self.profile[..]),
            };
            self.profile = copy;
        }
        Rc::get_mut(&mut self.profile).expect("unshared")[k] += d;
    }

    /// Keeps `p` for reuse when nothing else holds it.
    fn recycle(&mut self, p: Profile) {
        if Rc::strong_count(&p) == 1 && self.spare.len() < SPARE_PROFILES {
            self.spare.push(p);
        }
    }
}

/// Profiles a rank keeps for reuse.
const SPARE_PROFILES: usize = 1;

/// Receivers whose last arrival a rank keeps before dropping the ones that no longer
/// order anything.
const PAIRS_KEPT: usize = 8;

enum Event {
    Run(u32),
    /// A message (its slot in [`Engine::in_flight`]) reaches a rank.
    Arrive(u32, usize),
}

struct Entry {
    time: f64,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the heap pops the earliest (then the first created).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then(other.seq.cmp(&self.seq))
    }
}

/// The simulation of one run.
pub struct Engine<P> {
    params: Params,
    ranks: Vec<Rank<P>>,
    heap: BinaryHeap<Entry>,
    /// Messages travelling, by slot (reused once a message arrived: no allocation per
    /// message).
    in_flight: Vec<Option<Msg>>,
    /// Free slots of `in_flight`.
    free_slots: Vec<usize>,
    seq: u64,
    now: f64,
    events: u64,
    messages: u64,
}

impl<P: Program> Engine<P> {
    /// An engine over one program per rank (index = world rank).
    pub fn new(params: Params, programs: Vec<P>) -> Self {
        let ranks = programs
            .into_iter()
            .map(|program| Rank {
                program,
                actions: VecDeque::new(),
                clock: 0.0,
                key: COMPUTE_KEY,
                nic_free: 0.0,
                profile: Rc::from([]),
                spare: Vec::new(),
                requests: SmallMap::default(),
                posted: VecDeque::new(),
                unexpected: VecDeque::new(),
                last_arrival: SmallMap::default(),
                blocked: 0,
                finished: false,
                times: RankTimes::default(),
            })
            .collect();
        Engine {
            params,
            ranks,
            heap: BinaryHeap::new(),
            in_flight: Vec::new(),
            free_slots: Vec::new(),
            seq: 0,
            now: 0.0,
            events: 0,
            messages: 0,
        }
    }

    fn push(&mut self, time: f64, event: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }

    /// Runs every rank to its end. `Err(Ok(stall))` when a rank waits forever,
    /// `Err(Err(message))` when a program failed.
    pub fn run(mut self) -> Result<Outcome, Result<Stall, String>> {
        for r in 0..self.ranks.len() as u32 {
            self.push(0.0, Event::Run(r));
        }
        while let Some(e) = self.heap.pop() {
            self.now = e.time;
            match e.event {
                Event::Run(r) => self.run_rank(r).map_err(Err)?,
                Event::Arrive(to, slot) => {
                    self.events += 1;
                    let msg = self.in_flight[slot].take().expect("a message in flight");
                    self.free_slots.push(slot);
                    self.arrive(to, msg);
                }
            }
        }
        if let Some(r) = self.ranks.iter().position(|r| !r.finished) {
            return Err(Ok(Stall {
                rank: r as u32,
                key: self.ranks[r].key,
            }));
        }
        let last = (0..self.ranks.len())
            .max_by(|&a, &b| self.ranks[a].clock.total_cmp(&self.ranks[b].clock));
        Ok(Outcome {
            critical: last.map_or_else(Vec::new, |r| self.ranks[r].profile.to_vec()),
            ranks: self.ranks.iter().map(|r| r.times).collect(),
            events: self.events,
            messages: self.messages,
        })
    }

    /// Runs rank `r` until it waits for another rank or ends.
    fn run_rank(&mut self, r: u32) -> Result<(), String> {
        let ri = r as usize;
        if self.ranks[ri].finished || self.ranks[ri].blocked > 0 {
            return Ok(());
        }
        loop {
            let rank = &mut self.ranks[ri];
            let Some(action) = rank.actions.pop_front() else {
                if !rank.program.next_call(&mut rank.actions)? {
                    rank.finished = true;
                    rank.times.end = rank.clock;
                    return Ok(());
                }
                continue;
            };
            self.events += 1;
            match action {
                Action::Call { key, compute } => {
                    let d = compute.max(0.0) * self.params.compute_scale;
                    rank.clock += d;
                    rank.times.compute += d;
                    if d > 0.0 {
                        rank.add(COMPUTE_KEY, d);
                    }
                    rank.key = key;
                }
                Action::Send {
                    req,
                    to,
                    ctx,
                    tag,
                    bytes,
                    sync,
                } => self.send(r, req, to, ctx, tag, (bytes, sync)),
                Action::Recv {
                    req,
                    from,
                    ctx,
                    tag,
                } => self.post_recv(r, req, from, ctx, tag),
                Action::Poll { compute } => {
                    if compute >= SPIN_ITERATION_NS {
                        let d = compute * self.params.compute_scale;
                        rank.clock += d;
                        rank.times.compute += d;
                        rank.add(COMPUTE_KEY, d);
                    }
                }
                Action::Cancel(req) => {
                    if let Some(i) = rank.posted.iter().position(|p| p.req == req) {
                        rank.posted.remove(i);
                        rank.requests.remove(&req);
                    }
                }
                Action::Wait(reqs) => {
                    if !self.try_wait(ri, &reqs) {
                        self.ranks[ri].actions.push_front(Action::Wait(reqs));
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Completes the wait for `reqs` if every one's completion is known; else marks the
    /// rank blocked on the unknown ones.
    fn try_wait(&mut self, ri: usize, reqs: &[u64]) -> bool {
        let rank = &mut self.ranks[ri];
        let mut unknown = 0;
        let mut latest: Option<(f64, u64)> = None;
        for id in reqs {
            match rank.requests.get(id).map(|q| q.done) {
                None => {}
                Some(None) => unknown += 1,
                Some(Some(t)) if latest.is_none_or(|(l, _)| t > l) => latest = Some((t, *id)),
                Some(Some(_)) => {}
            }
        }
        if unknown > 0 {
            for id in reqs {
                if let Some(q) = rank.requests.get_mut(id).filter(|q| q.done.is_none()) {
                    q.waited = true;
                }
            }
            rank.blocked = unknown;
            return false;
        }
        if let Some((t, id)) = latest.filter(|(t, _)| *t > rank.clock) {
            let wait = t - rank.clock;
            match rank.requests.get_mut(&id).and_then(|q| q.dep.take()) {
                Some((snapshot, at)) => {
                    let old = std::mem::replace(&mut rank.profile, snapshot);
                    rank.recycle(old);
                    rank.add(rank.key, t - at);
                    rank.clock = t;
                    rank.times.wait += wait;
                }
                None => rank.spend(wait, true),
            }
        }
        let mut cost = 0.0;
        for id in reqs {
            if let Some(q) = rank.requests.remove(id) {
                cost += q.cost;
                if let Some((snapshot, _)) = q.dep {
                    rank.recycle(snapshot);
                }
            }
        }
        rank.spend(cost, false);
        true
    }

    /// Rank `r` posts a send of `bytes` (synchronous when `sync`).
    fn send(&mut self, r: u32, req: u64, to: u32, ctx: u32, tag: i64, (bytes, sync): (u64, bool)) {
        let p = self.params;
        let rank = &mut self.ranks[r as usize];
        let stall = rank.nic_free - rank.clock;
        rank.spend(stall, false);
        let depart = rank.clock;
        let (snapshot, snapshot_at) = (rank.profile.clone(), rank.clock);
        let m = bytes as f64;
        let rendezvous = (bytes > p.eager_limit || sync) && to != r;
        let (arrival, done) = if to == r {
            rank.spend(self_cost(&p, m), false);
            (rank.clock, Some(rank.clock))
        } else if rendezvous {
            rank.spend(p.send_overhead, false);
            rank.nic_free = depart + p.gap;
            (depart + p.send_overhead + p.latency, None)
        } else {
            rank.spend(p.send_overhead + m * p.copy_per_byte, false);
            rank.nic_free = depart + p.gap.max(m * p.gap_per_byte);
            (
                depart + p.send_overhead + m * p.gap_per_byte + p.latency,
                Some(rank.clock),
            )
        };
        let last = rank.last_arrival.get(&to).copied();
        if rank.last_arrival.len() >= PAIRS_KEPT && last.is_none() {
            // A later message departs at the rank's clock or after, and arrives later
            // still: an arrival time not past the clock no longer orders anything.
            let clock = rank.clock;
            rank.last_arrival.retain(|_, t| *t > clock);
        }
        let arrival = arrival.max(last.unwrap_or(0.0));
        rank.last_arrival.insert(to, arrival);
        rank.requests.insert(
            req,
            Req {
                done,
                cost: 0.0,
                dep: None,
                waited: false,
            },
        );
        self.messages += 1;
        let msg = Msg {
            from: r,
            ctx,
            tag,
            bytes,
            send_req: req,
            rendezvous,
            arrival,
            snapshot,
            snapshot_at,
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.in_flight[slot] = Some(msg);
                slot
            }
            None => {
                self.in_flight.push(Some(msg));
                self.in_flight.len() - 1
            }
        };
        self.push(arrival, Event::Arrive(to, slot));
    }

    /// Rank `r` posts a receive: it takes the first matching unexpected message, else
    /// waits in the posted queue.
    fn post_recv(&mut self, r: u32, req: u64, from: Option<u32>, ctx: u32, tag: Option<i64>) {
        let rank = &mut self.ranks[r as usize];
        rank.requests.insert(
            req,
            Req {
                done: None,
                cost: 0.0,
                dep: None,
                waited: false,
            },
        );
        let posted = Posted {
            req,
            from,
            ctx,
            tag,
            at: rank.clock,
            snapshot: rank.profile.clone(),
        };
        match rank.unexpected.iter().position(|m| matches(&posted, m)) {
            Some(i) => {
                let msg = rank.unexpected.remove(i).expect("index from position");
                self.matched(r, &posted, msg);
            }
            None => rank.posted.push_back(posted),
        }
    }

    /// A message arrives at rank `to`: it matches the first matching posted receive, else
    /// waits as unexpected.
    fn arrive(&mut self, to: u32, msg: Msg) {
        let rank = &mut self.ranks[to as usize];
        match rank.posted.iter().position(|p| matches(p, &msg)) {
            Some(i) => {
                let posted = rank.posted.remove(i).expect("index from position");
                self.matched(to, &posted, msg);
            }
            None => rank.unexpected.push_back(msg),
        }
    }

    /// Receive `posted` of rank `to` matched `msg`: the completion times follow.
    fn matched(&mut self, to: u32, posted: &Posted, msg: Msg) {
        let p = self.params;
        let m = msg.bytes as f64;
        let at = msg.arrival.max(posted.at);
        let dep = Some((msg.snapshot, msg.snapshot_at));
        if msg.from == to {
            self.resolve(to, posted.req, at, self_cost(&p, m), dep);
        } else if msg.rendezvous {
            let sent = at + p.latency + p.rendezvous + p.send_overhead + m * p.gap_per_byte;
            // Whoever came last to the handshake is what the other waited for: a receive
            // posted after the request-to-send arrived holds the sender up (the sender's
            // wait is charged to the receiver's chain), else the sender holds the receiver.
            let late_receiver = posted.at > msg.arrival;
            let (send_dep, recv_dep) = if late_receiver {
                (Some((Rc::clone(&posted.snapshot), posted.at)), None)
            } else {
                (None, dep)
            };
            self.resolve(msg.from, msg.send_req, sent, 0.0, send_dep);
            self.resolve(to, posted.req, sent + p.latency, p.recv_overhead, recv_dep);
        } else {
            let cost = p.recv_overhead + m * p.copy_per_byte;
            self.resolve(to, posted.req, at, cost, dep);
        }
    }

    /// Request `req` of rank `r` completes at `done`; wakes the rank when its wait is over.
    fn resolve(&mut self, r: u32, req: u64, done: f64, cost: f64, dep: Option<(Profile, f64)>) {
        let rank = &mut self.ranks[r as usize];
        let Some(q) = rank.requests.get_mut(&req) else {
            return;
        };
        q.done = Some(done);
        q.cost = cost;
        q.dep = dep;
        if q.waited {
            q.waited = false;
            rank.blocked -= 1;
            if rank.blocked == 0 {
                let at = done.max(self.now);
                self.push(at, Event::Run(r));
            }
        }
    }
}
