//! Matching and each call's wait: point-to-point messages are paired FIFO per (sender,
//! receiver, communicator, tag) — sends in posting order, receives in posting order, as MPI's
//! non-overtaking rule pairs them once wildcards are resolved from statuses — and collective
//! instances by (communicator, instance number). Every pairing proposes a wait for one call
//! ([`CallWait`]); a call keeps the longest proposal as its pattern and the latest cause as
//! what ended its wait. Last, a call that completes non-blocking sends and nothing else, and
//! was given no wait, spent its time waiting for those sends to complete
//! ([`Pattern::SendCompletion`]).

use super::kinds::Pattern;
use super::timeline::{CallRec, CollKind, CollRec, SendMode, Timelines};
use std::collections::BTreeMap;

/// Messages larger than this many bytes are taken as sent by rendezvous: the call that
/// completes their non-blocking send waits for the receive to be posted. 4 KiB is the
/// smallest eager limit of the MPIs Conifer runs on (Open MPI's shared-memory transport);
/// a message above it whose completing call was still waiting when the receive was posted
/// is a Late Receiver, whatever the transport.
pub const RENDEZVOUS_BYTES: u64 = 4096;

/// What a call waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallWait {
    /// The pattern of its longest wait.
    pub pattern: Pattern,
    /// That wait, ns (> 0).
    pub wait: i64,
    /// What ended the call's waiting: the peer (world rank) and the time on the synchronised
    /// clock at which the peer did what the call waited for (the late send's enter, the last
    /// arrival at the collective). The latest over every wait of the call.
    pub cause: Option<(u32, i64)>,
}

/// The waits of every call, and what could not be paired.
#[derive(Debug, Clone, Default)]
pub struct Matched {
    /// Per rank, per call.
    pub waits: Vec<Vec<Option<CallWait>>>,
    /// Sends never received.
    pub unmatched_sends: u64,
    /// Receives without a send.
    pub unmatched_receives: u64,
    /// Collective calls whose instance lacks members.
    pub unmatched_collectives: u64,
}

impl Matched {
    /// Records that call `call` of `rank` waited `wait` ns in `pattern`, until `cause`.
    fn propose(&mut self, rank: u32, call: u32, pattern: Pattern, wait: i64, cause: (u32, i64)) {
        if wait <= 0 {
            return;
        }
        let slot = &mut self.waits[rank as usize][call as usize];
        match slot {
            None => {
                *slot = Some(CallWait {
                    pattern,
                    wait,
                    cause: Some(cause),
                })
            }
            Some(w) => {
                if wait > w.wait {
                    w.pattern = pattern;
                    w.wait = wait;
                }
                if w.cause.is_none_or(|(_, t)| cause.1 > t) {
                    w.cause = Some(cause);
                }
            }
        }
    }

    /// Records that call `call` of `rank` was held up until `cause` without a pattern's
    /// waiting time of its own (the root of a reduction waits for the last member).
    fn cause_only(&mut self, rank: u32, call: u32, fallback: Pattern, cause: (u32, i64)) {
        let slot = &mut self.waits[rank as usize][call as usize];
        match slot {
            None => {
                *slot = Some(CallWait {
                    pattern: fallback,
                    wait: 0,
                    cause: Some(cause),
                })
            }
            Some(w) => {
                if w.cause.is_none_or(|(_, t)| cause.1 > t) {
                    w.cause = Some(cause);
                }
            }
        }
    }
}

/// `min(until, c.exit) − c.enter`: how long call `c` waited for something at `until`.
fn waited(c: &CallRec, until: i64) -> i64 {
    until.min(c.exit) - c.enter
}

/// Pairs every message and collective instance of `tl`.
pub fn match_all(tl: &Timelines) -> Matched {
    let mut m = Matched {
        waits: tl.ranks.iter().map(|r| vec![None; r.calls.len()]).collect(),
        ..Matched::default()
    };
    point_to_point(tl, &mut m);
    collectives(tl, &mut m);
    send_completion(tl, &mut m);
    m
}

/// [`Pattern::SendCompletion`]: every call that completes a non-blocking send posted by an
/// earlier call, completes no receive, and was given no other wait, waited its whole length
/// for its sends to complete (no cause on another rank: the critical path keeps the call).
fn send_completion(tl: &Timelines, m: &mut Matched) {
    for (rank, r) in tl.ranks.iter().enumerate() {
        let mut completes_send = vec![false; r.calls.len()];
        for s in &r.sends {
            if let Some(done) = s.complete.filter(|&d| d != s.post) {
                completes_send[done as usize] = true;
            }
        }
        for recv in &r.recvs {
            completes_send[recv.complete as usize] = false;
        }
        for c in &r.colls {
            completes_send[c.call as usize] = false;
        }
        for (i, c) in r.calls.iter().enumerate() {
            let slot = &mut m.waits[rank][i];
            if completes_send[i] && slot.is_none() && c.exit > c.enter {
                *slot = Some(CallWait {
                    pattern: Pattern::SendCompletion,
                    wait: c.exit - c.enter,
                    cause: None,
                });
            }
        }
    }
}

/// (sender, receiver, communicator, tag).
type Key = (u32, u32, u32, i64);

fn point_to_point(tl: &Timelines, m: &mut Matched) {
    // Per key: the senders' send indices and the receivers' receive indices.
    let mut queues: BTreeMap<Key, (Vec<u32>, Vec<u32>)> = BTreeMap::new();
    for (s, r) in tl.ranks.iter().enumerate() {
        for (i, send) in r.sends.iter().enumerate() {
            let key = (s as u32, send.to, send.comm, send.tag);
            queues.entry(key).or_default().0.push(i as u32);
        }
    }
    for (to, r) in tl.ranks.iter().enumerate() {
        for (i, recv) in r.recvs.iter().enumerate() {
            let key = (recv.from, to as u32, recv.comm, recv.tag);
            queues.entry(key).or_default().1.push(i as u32);
        }
    }
    for ((from, to, _, _), (sends, mut recvs)) in queues {
        let (Some(sr), Some(rr)) = (tl.ranks.get(from as usize), tl.ranks.get(to as usize)) else {
            m.unmatched_sends += sends.len() as u64;
            m.unmatched_receives += recvs.len() as u64;
            continue;
        };
        recvs.sort_by_key(|&i| (rr.recvs[i as usize].order, i));
        let pairs = sends.len().min(recvs.len());
        m.unmatched_sends += (sends.len() - pairs) as u64;
        m.unmatched_receives += (recvs.len() - pairs) as u64;
        for (&si, &ri) in sends.iter().zip(&recvs) {
            let send = &sr.sends[si as usize];
            let recv = &rr.recvs[ri as usize];
            let send_start = sr.calls[send.post as usize].enter;
            let recv_posted = rr.calls[recv.post as usize].enter;
            // Late Sender: the completing call of the receive waited for the send to start.
            let c = &rr.calls[recv.complete as usize];
            let w = waited(c, send_start);
            m.propose(
                to,
                recv.complete,
                Pattern::LateSender,
                w,
                (from, c.enter + w),
            );
            // Late Receiver: a send that cannot complete before its receive is posted.
            let Some(done) = send.complete else {
                continue;
            };
            let c = &sr.calls[done as usize];
            let blocked = match send.mode {
                SendMode::Synchronous => true,
                // A standard send still in the call when the receive was posted: rendezvous.
                SendMode::Standard => c.exit > recv_posted,
                // A rendezvous-size non-blocking send whose completing call was still waiting
                // when the receive was posted.
                SendMode::Nonblocking => send.bytes > RENDEZVOUS_BYTES && c.exit > recv_posted,
                SendMode::Other => false,
            };
            if blocked {
                let w = waited(c, recv_posted);
                m.propose(from, done, Pattern::LateReceiver, w, (to, c.enter + w));
            }
        }
    }
}

fn collectives(tl: &Timelines, m: &mut Matched) {
    let mut instances: BTreeMap<(u32, u64), Vec<(u32, &CollRec)>> = BTreeMap::new();
    for (rank, r) in tl.ranks.iter().enumerate() {
        for c in &r.colls {
            instances
                .entry((c.comm, c.instance))
                .or_default()
                .push((rank as u32, c));
        }
    }
    for ((comm, _), members) in instances {
        let size = tl.comm_sizes.get(comm as usize).copied().flatten();
        if size != Some(members.len() as u32) {
            m.unmatched_collectives += members.len() as u64;
            continue;
        }
        let kind = members[0].1.kind;
        if kind == CollKind::Other || members.iter().any(|(_, c)| !c.blocking || c.kind != kind) {
            continue;
        }
        let call = |&(rank, c): &(u32, &CollRec)| tl.ranks[rank as usize].calls[c.call as usize];
        // The last member to enter, and the first.
        let Some(&last) = members.iter().max_by_key(|x| (call(x).enter, x.0)) else {
            continue;
        };
        let last_enter = call(&last).enter;
        match kind {
            CollKind::Barrier | CollKind::NxN => {
                let pattern = if kind == CollKind::Barrier {
                    Pattern::WaitAtBarrier
                } else {
                    Pattern::WaitAtNxn
                };
                for x in &members {
                    let c = call(x);
                    let w = waited(&c, last_enter);
                    m.propose(x.0, x.1.call, pattern, w, (last.0, c.enter + w));
                }
            }
            CollKind::OneToAll => {
                let Some(root) = members.iter().find(|x| Some(x.0) == x.1.root) else {
                    continue;
                };
                let root_enter = call(root).enter;
                for x in members.iter().filter(|x| x.0 != root.0) {
                    let c = call(x);
                    let w = waited(&c, root_enter);
                    m.propose(
                        x.0,
                        x.1.call,
                        Pattern::LateBroadcast,
                        w,
                        (root.0, c.enter + w),
                    );
                }
            }
            CollKind::AllToOne => {
                let Some(root) = members.iter().find(|x| Some(x.0) == x.1.root) else {
                    continue;
                };
                let c = call(root);
                let first = members
                    .iter()
                    .filter(|x| x.0 != root.0)
                    .min_by_key(|x| (call(x).enter, x.0));
                if let Some(first) = first {
                    let w = waited(&c, call(first).enter);
                    m.propose(
                        root.0,
                        root.1.call,
                        Pattern::EarlyReduce,
                        w,
                        (first.0, c.enter + w),
                    );
                }
                // The root cannot finish before the last contribution: that is what its
                // wait ends with on the critical path.
                if last.0 != root.0 && last_enter > c.enter {
                    let at = last_enter.min(c.exit);
                    m.cause_only(root.0, root.1.call, Pattern::EarlyReduce, (last.0, at));
                }
            }
            CollKind::Other => {}
        }
    }
}
