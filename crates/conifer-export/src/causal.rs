//! A causal timeline for traces without per-call timing (aggregate or histogram timing).
//!
//! Such a trace keeps, per timing family, only the pooled distribution of durations and
//! intervals, so [`Clock`](crate::timeline::Clock) rebuilds each thread's calls from the
//! means, thread by thread — and the threads' clocks know nothing of each other: a receive
//! may end before its send started. [`build`] replays the reconstructed calls of every rank
//! together and holds a call until what it waited for has happened:
//!
//! - a receive (`MPI_Recv`, the receive half of `MPI_Sendrecv`, the call completing an
//!   `MPI_Irecv`) ends no earlier than its send (matched FIFO per communicator, sender,
//!   receiver and tag, as MPI's non-overtaking rule pairs them) started plus
//!   [`LATENCY_NS`] and 1 ns (exports bind a receive's flow 1 ns inside its call);
//! - a blocking collective ends, on every member, no earlier than the last member entered it
//!   plus [`LATENCY_NS`].
//!
//! A call held so lasts longer, and every later call of its thread moves by as much
//! ([`Causal`] keeps, per thread, only the calls where that shift grows). Receives whose
//! sender the trace cannot tell (`MPI_ANY_SOURCE` with the status ignored), and calls that
//! could only be placed by ignoring a wait (a receive from another thread of the same rank
//! that comes later in the rank's order, a collective whose members never all arrive) are
//! counted in [`Causal::unconstrained`].
//!
//! Memory: every rank's reader is open at once; beyond them, the messages sent and not yet
//! received and one entry per lengthened call.

use crate::messages::{Comm, Op};
use crate::timeline::{timestamps, Timestamps};
use crate::{rank_events, Event, RankEvents};
use conifer_analyze::context::{CommGroup, CommTable};
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use std::collections::{HashMap, VecDeque};

pub use crate::shifts::{Causal, Cursor, LATENCY_NS};

/// Messages between two ranks on one communicator with one tag.
type Channel = (Comm, u32, u32, i64);

/// One collective instance.
#[derive(Default)]
struct Instance {
    /// Members.
    size: usize,
    /// Members that entered it so far.
    arrived: usize,
    /// Members whose call was placed.
    left: usize,
    /// The latest enter so far, ns.
    last_enter: u64,
    /// Placed before every member arrived (deadlock broken): nobody waits for it any more.
    forced: bool,
}

/// One rank in the replay.
struct Replayed<'t> {
    events: RankEvents<'t>,
    /// The event that could not be placed yet, with its collective instances.
    waiting: Option<(Event<'t>, Vec<(Comm, u64)>)>,
    /// Per thread: calls so far and the current shift.
    threads: HashMap<u32, (u64, u64)>,
    /// Per communicator: blocking collectives entered so far.
    collectives: HashMap<Comm, u64>,
    done: bool,
}

/// What the replay shares between ranks.
struct World {
    /// Start times of the messages sent and not yet received, per channel.
    sent: HashMap<Channel, VecDeque<u64>>,
    /// Receives placed before their send (deadlock broken): that many sends of the channel
    /// are dropped when they come.
    owed: HashMap<Channel, u64>,
    instances: HashMap<(Comm, u64), Instance>,
    /// Members of every intra-communicator.
    members: HashMap<CommGroup, usize>,
    causal: Causal,
}

/// Whether call `name` is the blocking form of collective `operation`.
fn blocking(name: &str, operation: &str) -> bool {
    let n = name.strip_prefix("MPI_").unwrap_or(name);
    n.strip_suffix("_c").unwrap_or(n) == operation
}

impl World {
    /// The communicator and size of `op` when it is a blocking collective of `event` with
    /// other members to wait for.
    fn collective<'o>(&self, event: &Event, op: &'o Op) -> Option<(&'o Comm, usize)> {
        let Op::Collective {
            operation, comm, ..
        } = op
        else {
            return None;
        };
        let Comm::Group(g) = comm else {
            return None;
        };
        let size = *self.members.get(g)?;
        (size > 1 && blocking(event.call.name, operation)).then_some((comm, size))
    }

    /// `event` of `rank` enters, at `start`: its sends leave, it arrives at its collectives
    /// (numbered by `counts`). Returns the collective instances it is in.
    fn enter(
        &mut self,
        rank: u32,
        event: &Event,
        start: u64,
        counts: &mut HashMap<Comm, u64>,
    ) -> Vec<(Comm, u64)> {
        let mut instances = Vec::new();
        for op in &event.ops {
            if let Op::Send { to, tag, comm, .. } | Op::Isend { to, tag, comm, .. } = op {
                let ch = (comm.clone(), rank, *to, *tag);
                match self.owed.get_mut(&ch).filter(|n| **n > 0) {
                    Some(n) => *n -= 1,
                    None => self.sent.entry(ch).or_default().push_back(start),
                }
            }
            if let Some((comm, size)) = self.collective(event, op) {
                let n = counts.entry(comm.clone()).or_default();
                let key = (comm.clone(), *n);
                *n += 1;
                let inst = self.instances.entry(key.clone()).or_default();
                inst.size = size;
                inst.arrived += 1;
                inst.last_enter = inst.last_enter.max(start);
                instances.push(key);
            }
        }
        instances
    }

    /// True when everything `event` of `rank` waits for has happened.
    fn ready(&self, rank: u32, event: &Event, instances: &[(Comm, u64)]) -> bool {
        let mut wanted: HashMap<Channel, usize> = HashMap::new();
        for op in &event.ops {
            if let Some(ch) = received(rank, op) {
                *wanted.entry(ch).or_default() += 1;
            }
        }
        let messages = wanted.into_iter().all(|(ch, n)| {
            self.owed.get(&ch).copied().unwrap_or(0) == 0
                && self.sent.get(&ch).map_or(0, VecDeque::len) >= n
        });
        messages
            && instances.iter().all(|k| {
                self.instances
                    .get(k)
                    .is_none_or(|i| i.forced || i.arrived >= i.size)
            })
    }

    /// Places `event` of `rank`, which entered at `start` and would end at `end`: the
    /// earliest end its receives and collectives allow (what is missing is counted as
    /// placed without its wait).
    fn place(
        &mut self,
        rank: u32,
        event: &Event,
        instances: &[(Comm, u64)],
        (start, mut end): (u64, u64),
    ) -> u64 {
        for op in &event.ops {
            if let Some(ch) = received(rank, op) {
                match self.sent.get_mut(&ch).and_then(VecDeque::pop_front) {
                    Some(sent) => end = end.max(sent + LATENCY_NS + 1),
                    None => {
                        *self.owed.entry(ch).or_default() += 1;
                        self.causal.unconstrained += 1;
                    }
                }
            } else if let Op::Recv { from: None, .. } | Op::IrecvComplete { from: None, .. } = op {
                self.causal.unconstrained += 1;
            }
        }
        for key in instances {
            let Some(inst) = self.instances.get_mut(key) else {
                continue;
            };
            if inst.arrived < inst.size && !inst.forced {
                inst.forced = true;
                self.causal.unconstrained += 1;
            }
            end = end.max(inst.last_enter + LATENCY_NS);
            inst.left += 1;
            if inst.left >= inst.size {
                self.instances.remove(key);
            }
        }
        end.max(start)
    }
}

/// The channel of a receive `op` of `rank`, when its sender and tag are known.
fn received(rank: u32, op: &Op) -> Option<Channel> {
    match op {
        Op::Recv {
            from: Some((from, _)),
            tag,
            comm,
            ..
        }
        | Op::IrecvComplete {
            from: Some((from, _)),
            tag,
            comm,
            ..
        } if *tag >= 0 => Some((comm.clone(), *from, rank, *tag)),
        _ => None,
    }
}

/// Replays `trace`'s reconstructed calls, every rank together, and returns the shifts that
/// make its timeline causal (see the module documentation).
pub fn build(trace: &Trace, table: &CommTable) -> Result<Causal, String> {
    let reader = trace.reader();
    let mut ranks: Vec<Replayed> = (0..trace.meta.ranks)
        .map(|r| {
            Ok(Replayed {
                events: rank_events(&reader, table, r)?,
                waiting: None,
                threads: HashMap::new(),
                collectives: HashMap::new(),
                done: false,
            })
        })
        .collect::<Result<_, String>>()?;
    let mut world = World {
        sent: HashMap::new(),
        owed: HashMap::new(),
        instances: HashMap::new(),
        members: table
            .groups()
            .into_iter()
            .map(|(g, m)| (g, m.len()))
            .collect(),
        causal: Causal::default(),
    };
    loop {
        let mut progressed = false;
        for (rank, r) in ranks.iter_mut().enumerate() {
            progressed |= advance(r, rank as u32, &mut world, false)?;
        }
        if ranks.iter().all(|r| r.done) {
            break;
        }
        if !progressed {
            // Every rank waits: place the first waiting call without its wait.
            if let Some(rank) = ranks.iter().position(|r| r.waiting.is_some()) {
                advance(&mut ranks[rank], rank as u32, &mut world, true)?;
            }
        }
    }
    Ok(world.causal)
}

/// Places `rank`'s calls until one must wait or the rank is done (`force`: the first call
/// is placed even if it must wait). True when a call was placed.
fn advance(
    r: &mut Replayed,
    rank: u32,
    world: &mut World,
    mut force: bool,
) -> Result<bool, String> {
    let mut placed = false;
    while !r.done {
        let (event, instances) = match r.waiting.take() {
            Some(w) => w,
            None => match r.events.next() {
                Some(e) => {
                    let e = e?;
                    let shift = r.threads.get(&e.call.signature.thread).map_or(0, |t| t.1);
                    let instances =
                        world.enter(rank, &e, e.span.start_ns + shift, &mut r.collectives);
                    (e, instances)
                }
                None => {
                    r.done = true;
                    break;
                }
            },
        };
        if !force && !world.ready(rank, &event, &instances) {
            r.waiting = Some((event, instances));
            break;
        }
        force = false;
        placed = true;
        let thread = event.call.signature.thread;
        let (calls, shift) = r.threads.get(&thread).copied().unwrap_or((0, 0));
        let span = (event.span.start_ns + shift, event.span.end_ns + shift);
        let end = world.place(rank, &event, &instances, span);
        let held = end - span.1;
        let shift = shift + held;
        if held > 0 {
            world.causal.held += 1;
            world.causal.grow(rank, thread, calls, shift);
        }
        r.threads.insert(thread, (calls + 1, shift));
    }
    Ok(placed)
}

/// The causal shifts of `trace` when its timestamps are reconstructed (no per-call timing),
/// else `None`: recorded times are used as they are.
pub fn when_reconstructed(trace: &Trace, table: &CommTable) -> Result<Option<Causal>, String> {
    match timestamps(trace) {
        Timestamps::Reconstructed => build(trace, table).map(Some),
        _ => Ok(None),
    }
}

/// How the exports' timestamps were obtained: [`Timestamps::describe`], and with
/// reconstructed times how they were made causal.
pub fn describe(trace: &Trace, causal: Option<&Causal>) -> String {
    let mut s = timestamps(trace).describe().to_string();
    if let Some(c) = causal {
        s.push_str(&c.describe());
    }
    s
}

/// `rank`'s events with `causal`'s shifts applied, when given.
pub fn events<'t>(
    reader: &conifer_trace::decode::CallReader<'t>,
    table: &'t CommTable,
    rank: u32,
    causal: Option<&'t Causal>,
) -> Result<RankEvents<'t>, String> {
    let events = rank_events(reader, table, rank)?;
    Ok(match causal {
        Some(c) => events.causal(c),
        None => events,
    })
}
