//! The engine against times worked out by hand from the model's formulas (engine module
//! documentation). Parameters unless a test says otherwise: L = 1000 ns, o_s = o_r = 100 ns,
//! g = 50 ns, G = 1 ns/B, O = 0, eager limit 1024 B.

use crate::collectives::{self, Algorithm, Collective, Rule};
use crate::engine::{Action, Engine, Outcome, Program, Stall};
use crate::params::Params;
use std::collections::VecDeque;

/// A rank's calls written out by hand (also used by the calibration's tests).
pub(crate) struct Script(pub(crate) VecDeque<Vec<Action>>);

impl Program for Script {
    fn next_call(&mut self, out: &mut VecDeque<Action>) -> Result<bool, String> {
        match self.0.pop_front() {
            Some(actions) => {
                out.extend(actions);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

fn params() -> Params {
    Params {
        latency: 1000.0,
        send_overhead: 100.0,
        recv_overhead: 100.0,
        gap: 50.0,
        gap_per_byte: 1.0,
        copy_per_byte: 0.0,
        eager_limit: 1024,
        compute_scale: 1.0,
        ..Params::default()
    }
}

fn call(key: u32, compute: f64) -> Action {
    Action::Call { key, compute }
}

fn send(req: u64, to: u32, tag: i64, bytes: u64) -> Action {
    Action::Send {
        req,
        to,
        ctx: 0,
        tag,
        bytes,
        sync: false,
    }
}

fn recv(req: u64, from: Option<u32>, tag: Option<i64>) -> Action {
    Action::Recv {
        req,
        from,
        ctx: 0,
        tag,
    }
}

fn run(p: Params, ranks: Vec<Vec<Vec<Action>>>) -> Result<Outcome, Result<Stall, String>> {
    let programs = ranks.into_iter().map(|r| Script(r.into())).collect();
    Engine::new(p, programs).run()
}

fn ends(o: &Outcome) -> Vec<f64> {
    o.ranks.iter().map(|r| r.end).collect()
}

/// Rank 0 sends m bytes to rank 1 and receives them back; keys 1, 2 on rank 0 and 3, 4 on
/// rank 1.
fn ping_pong(p: Params, m: u64) -> Outcome {
    run(
        p,
        vec![
            vec![
                vec![call(1, 0.0), send(1, 1, 0, m), Action::Wait(vec![1])],
                vec![
                    call(2, 0.0),
                    recv(2, Some(1), Some(0)),
                    Action::Wait(vec![2]),
                ],
            ],
            vec![
                vec![
                    call(3, 0.0),
                    recv(1, Some(0), Some(0)),
                    Action::Wait(vec![1]),
                ],
                vec![call(4, 0.0), send(2, 0, 0, m), Action::Wait(vec![2])],
            ],
        ],
    )
    .expect("runs")
}

#[test]
fn eager_ping_pong() {
    // m = 100 B, O = 0.5 ns/B. Rank 0 departs at 0, its CPU pays o + mO = 150; the message
    // arrives at o + mG + L = 100 + 100 + 1000 = 1200; rank 1 completes at 1200 + o + mO =
    // 1350 and sends back: arrival 1350 + 1200 = 2550 at rank 0, done 2550 + 150 = 2700.
    // Round trip = 2(L + 2o + m(G + O)) = 2700. Rank 1 ends after its send's CPU: 1500.
    let p = Params {
        copy_per_byte: 0.5,
        ..params()
    };
    let o = ping_pong(p, 100);
    assert_eq!(ends(&o), vec![2700.0, 1500.0]);
    // Rank 0: CPU 150 + 150, waits 2550 - 150; rank 1: waits 1200, CPU 300.
    assert_eq!((o.ranks[0].comm, o.ranks[0].wait), (300.0, 2400.0));
    assert_eq!((o.ranks[1].comm, o.ranks[1].wait), (300.0, 1200.0));
    // Critical path: rank 1's receive (0 → 1350) then rank 0's receive (1350 → 2700).
    assert_eq!(o.critical, vec![0.0, 0.0, 1350.0, 1350.0]);
    assert_eq!(o.messages, 2);
}

#[test]
fn rendezvous_ping_pong() {
    // m = 4096 B > eager. Rank 0: RTS departs at 0, CPU o → 100, arrives o + L = 1100; the
    // receive is posted, so M = 1100; CTS back (L), data pushed (o + mG): the send completes
    // at S = 1100 + 1000 + 100 + 4096 = 6296, the data lands at S + L = 7296, rank 1 done
    // at 7396. Back: RTS arrives 7396 + 1100 = 8496 (rank 0 posted at 6296), S' = 8496 +
    // 5196 = 13692 (rank 1 ends), rank 0 done at 13692 + 1000 + 100 = 14792.
    // Round trip = 2(3L + 3o + mG) = 14792.
    let o = ping_pong(params(), 4096);
    assert_eq!(ends(&o), vec![14792.0, 13692.0]);
}

#[test]
fn rendezvous_handshake_delays_the_data() {
    // As rendezvous_ping_pong, with R = 500 between each clear-to-send and its data: the
    // send completes at S = 1100 + 1000 + 500 + 100 + 4096 = 6796, rank 1 done at
    // 6796 + 1000 + 100 = 7896; back: RTS arrives 7896 + 1100 = 8996, S' = 8996 + 5696 =
    // 14692, rank 0 done at 15792 = 14792 + 2R.
    let p = Params {
        rendezvous: 500.0,
        ..params()
    };
    let o = ping_pong(p, 4096);
    assert_eq!(ends(&o), vec![15792.0, 14692.0]);
}

#[test]
fn a_message_to_self_is_a_copy() {
    // self = 60 ns, selfG = 0.5 ns/B, 100 B: each end pays (60 + 50) / 2 = 55 ns, no L, no
    // G, no o, even above the eager limit (2000 B: (60 + 1000) / 2 = 530 each end).
    let p = Params {
        self_overhead: 60.0,
        self_per_byte: 0.5,
        ..params()
    };
    for (bytes, end) in [(100, 110.0), (2000, 1060.0)] {
        let o = run(
            p,
            vec![vec![vec![
                call(1, 0.0),
                send(1, 0, 0, bytes),
                Action::Recv {
                    req: 2,
                    from: Some(0),
                    ctx: 0,
                    tag: Some(0),
                },
                Action::Wait(vec![1, 2]),
            ]]],
        )
        .expect("runs");
        assert_eq!(ends(&o), vec![end], "{bytes} B");
    }
}

#[test]
fn compute_scales() {
    // Computation before each call is scaled: 1000 ns × 3. Rank 0 sends 0 B at 3000 (ends
    // at 3000 + o = 3100; arrival 3000 + o + L = 4100); rank 1 computes twice (6000), finds
    // the message unexpected and completes at 6000 + o = 6100.
    let p = Params {
        compute_scale: 3.0,
        ..params()
    };
    let o = run(
        p,
        vec![
            vec![vec![
                call(1, 1000.0),
                send(1, 1, 0, 0),
                Action::Wait(vec![1]),
            ]],
            vec![
                vec![call(2, 1000.0)],
                vec![
                    call(3, 1000.0),
                    recv(1, Some(0), Some(0)),
                    Action::Wait(vec![1]),
                ],
            ],
        ],
    )
    .expect("runs");
    assert_eq!(ends(&o), vec![3100.0, 6100.0]);
    assert_eq!(o.ranks[1].compute, 6000.0);
}

/// Runs collective `c` by `alg` on `n` ranks (root 0, blocks of `m` bytes).
fn collective(c: Collective, alg: Algorithm, n: u32, m: u64) -> Outcome {
    let members: Vec<u32> = (0..n).collect();
    let ranks = (0..n)
        .map(|me| {
            let rounds = collectives::schedule(c, alg, n, me, 0, m);
            let mut out = VecDeque::from(vec![call(1, 0.0)]);
            let mut next = 100;
            collectives::expand(&rounds, &members, 1, 0, &mut next, &mut out);
            vec![Vec::from(out)]
        })
        .collect();
    run(params(), ranks).expect("runs")
}

#[test]
fn binomial_bcast_on_8() {
    // m = 100 B: a hop costs o + mG + L = 1200 to arrive, + o to receive = 1300; a parent's
    // CPU pays o = 100 per child (NIC gap max(g, mG) = 100, never later), children in order
    // of the largest subtree first. Root 0 → 4 (departs 0), 2 (100), 1 (200), ends at 300.
    // 4: done 1300, → 6 (1300), 5 (1400), ends 1500. 2: done 100 + 1300 = 1400, → 3, ends
    // 1500. 1: done 1500. 6: done 2600, → 7, ends 2700. 5: 1400 + 1300 = 2700. 3: 2700.
    // 7: 2600 + 1300 = 3900 — the three-hop path 0 → 4 → 6 → 7 = 3 × 1300.
    let o = collective(Collective::Bcast, Algorithm::Binomial, 8, 100);
    assert_eq!(
        ends(&o),
        vec![300.0, 1500.0, 1500.0, 2700.0, 1500.0, 2700.0, 2700.0, 3900.0]
    );
    assert_eq!(o.messages, 7);
}

#[test]
fn ring_allreduce_on_4() {
    // m = 4000 B on 4 ranks: chunks of c = 1000 B (eager), 2(n − 1) = 6 steps. Per step every
    // rank sends right (CPU o, arrives o + cG + L = 2100 later) and receives from the left
    // (done at arrival + o = 2200). Total 6 × 2200 = 13200 on every rank.
    let o = collective(Collective::Allreduce, Algorithm::Ring, 4, 4000);
    assert_eq!(ends(&o), vec![13200.0; 4]);
    assert_eq!(o.messages, 24);
    // Each rank waits 2000 per step: 2200 minus its own send's o and receive's o.
    assert_eq!(o.ranks[0].wait, 6.0 * 2000.0);
}

#[test]
fn dissemination_barrier_and_allreduce_doubling() {
    // Barrier on 5 ranks: ⌈log₂ 5⌉ = 3 rounds of 0-byte messages, each o + L + o = 1200.
    let o = collective(Collective::Barrier, Algorithm::Dissemination, 5, 0);
    assert_eq!(ends(&o), vec![3600.0; 5]);
    // Recursive doubling on 4 ranks, m = 8 B: 2 exchanges of o + mG + L + o = 1208.
    let o = collective(Collective::Allreduce, Algorithm::RecursiveDoubling, 4, 8);
    assert_eq!(ends(&o), vec![2416.0; 4]);
}

#[test]
fn wildcard_takes_earliest_arrival() {
    // Rank 0 sends (0 B, tag 1) at 0: arrives 1100. Rank 1 computes 5000, sends (tag 2):
    // arrives 6100. Rank 2's ANY_SOURCE/ANY_TAG receive gets rank 0's message (done 1200),
    // it computes 10000, then receives rank 1's (unexpected since 6100): done 11300. Had the
    // wildcard taken rank 1's message, the second receive would never match.
    let o = run(
        params(),
        vec![
            vec![vec![call(1, 0.0), send(1, 2, 1, 0), Action::Wait(vec![1])]],
            vec![vec![
                call(1, 5000.0),
                send(1, 2, 2, 0),
                Action::Wait(vec![1]),
            ]],
            vec![
                vec![call(2, 0.0), recv(1, None, None), Action::Wait(vec![1])],
                vec![
                    call(3, 10000.0),
                    recv(2, Some(1), Some(2)),
                    Action::Wait(vec![2]),
                ],
            ],
        ],
    )
    .expect("runs");
    assert_eq!(ends(&o)[2], 11300.0);
}

/// Rank 0 sends `message` (key 1), then computes `after` (key 3); rank 1 computes 10000 and
/// only then posts the receive (key 2).
fn late_receiver_of(message: Action, after: f64) -> Outcome {
    run(
        params(),
        vec![
            vec![
                vec![call(1, 0.0), message, Action::Wait(vec![1])],
                vec![call(3, after)],
            ],
            vec![vec![
                call(2, 10000.0),
                recv(1, Some(0), Some(0)),
                Action::Wait(vec![1]),
            ]],
        ],
    )
    .expect("runs")
}

/// [`late_receiver_of`] a 4096 B message (rendezvous).
fn late_receiver(after: f64) -> Outcome {
    late_receiver_of(send(1, 1, 0, 4096), after)
}

#[test]
fn a_rendezvous_sender_is_charged_to_its_late_receiver() {
    // The request-to-send departs at 0 (rank 0's CPU o → 100) and arrives at 1100; rank 1
    // posts at 10000 (late receiver), so M = 10000, the send completes at S = 10000 + L + o +
    // mG = 15196, the data lands at 16196 and costs o_r: rank 1 ends at 16296.
    // Rank 0 waited 15196 − 100 = 15096 in MPI_Send for rank 1's computation: its chain is
    // rank 1's up to the post (10000 of computation) plus the handshake and transfer (5196)
    // on the send. After 50000 more of computation rank 0 ends last, at 65196.
    let o = late_receiver(50000.0);
    assert_eq!(ends(&o), vec![65196.0, 16296.0]);
    assert_eq!(o.ranks[0].wait, 15096.0);
    assert_eq!(o.critical, vec![60000.0, 5196.0]);
    // Ending first, rank 1 — late itself — keeps its own chain: 10000 of computation and
    // the receive's 6296 (handshake, transfer, o_r), not rank 0's send.
    let o = late_receiver(0.0);
    assert_eq!(ends(&o), vec![15196.0, 16296.0]);
    assert_eq!(o.critical, vec![10000.0, 0.0, 6296.0]);
}

#[test]
fn a_synchronous_send_waits_for_its_receive_whatever_its_size() {
    // 8 B, below the eager limit, but synchronous: the request-to-send arrives at 1100, the
    // receive is posted at 10000, the send completes at 10000 + L + o + mG = 11108 (rank 0
    // waited 11008 for rank 1's computation) and the data lands at 12108 + o_r = 12208. An
    // ordinary 8 B send would have completed at 100.
    let ssend = Action::Send {
        req: 1,
        to: 1,
        ctx: 0,
        tag: 0,
        bytes: 8,
        sync: true,
    };
    let o = late_receiver_of(ssend, 50000.0);
    assert_eq!(ends(&o), vec![61108.0, 12208.0]);
    assert_eq!(o.critical, vec![60000.0, 1108.0]);
    let o = late_receiver_of(send(1, 1, 0, 8), 50000.0);
    assert_eq!(ends(&o)[0], 50100.0);
}

/// Rank 0 sends tag 5 then tag 6 (0 B each) to rank 1, which posts `first` then `second`.
fn two_tags(first: Option<i64>, second: Option<i64>) -> Result<Outcome, Result<Stall, String>> {
    run(
        params(),
        vec![
            vec![vec![
                call(1, 0.0),
                send(1, 1, 5, 0),
                send(2, 1, 6, 0),
                Action::Wait(vec![1, 2]),
            ]],
            vec![
                vec![call(2, 0.0), recv(1, Some(0), first), Action::Wait(vec![1])],
                vec![
                    call(3, 0.0),
                    recv(2, Some(0), second),
                    Action::Wait(vec![2]),
                ],
            ],
        ],
    )
}

#[test]
fn matching_by_tag_and_non_overtaking() {
    // Tag 5 departs at 0 and arrives 1100; tag 6 departs at 100 (CPU) and arrives 1200.
    // Receive (tag 6) skips tag 5 (unexpected) and completes at 1200 + o = 1300; the
    // ANY_TAG receive then takes tag 5: done 1300 + o = 1400.
    let o = two_tags(Some(6), None).expect("runs");
    assert_eq!(ends(&o), vec![200.0, 1400.0]);
    // ANY_TAG first must take tag 5 (the first sent), so a receive for tag 5 afterwards
    // never matches: MPI deadlocks, and so does the simulation.
    let stall = two_tags(None, Some(5)).expect_err("deadlocks");
    assert_eq!(stall, Ok(Stall { rank: 1, key: 3 }));
}

#[test]
fn polling_loops_spin_for_free_and_keep_their_work() {
    // Two spinning polls (10 ns and 0 ns of computation before them) cost nothing; a poll
    // after 5 µs of work spends the work; a call after the loop spends its own interval.
    let o = run(
        params(),
        vec![vec![
            vec![call(1, 0.0), Action::Poll { compute: 10.0 }],
            vec![call(1, 0.0), Action::Poll { compute: 0.0 }],
            vec![call(1, 0.0), Action::Poll { compute: 5000.0 }],
            vec![call(2, 7.0)],
        ]],
    )
    .expect("runs");
    assert_eq!(ends(&o), vec![5007.0]);
}

#[test]
fn rule_follows_sizes_and_overrides() {
    let rule = Rule::default();
    assert_eq!(
        rule.choose(Collective::Allreduce, 8, 8),
        Algorithm::RecursiveDoubling
    );
    assert_eq!(
        rule.choose(Collective::Allreduce, 8, 64 << 10),
        Algorithm::Rabenseifner
    );
    assert_eq!(
        rule.choose(Collective::Allreduce, 6, 64 << 10),
        Algorithm::Ring
    );
    assert_eq!(rule.choose(Collective::Alltoall, 8, 16), Algorithm::Bruck);
    assert_eq!(
        rule.choose(Collective::Alltoall, 8, 4096),
        Algorithm::Pairwise
    );
    let rule = Rule::with_overrides("allreduce=ring").expect("valid");
    assert_eq!(rule.choose(Collective::Allreduce, 8, 8), Algorithm::Ring);
    assert!(Rule::with_overrides("bcast=ring").is_err());
    assert!(Rule::with_overrides("nosuch=ring").is_err());
}

#[test]
fn every_algorithm_completes() {
    // Each algorithm's sends and receives pair up on every size (else the run stalls).
    use Algorithm::*;
    let cases = [
        (Collective::Bcast, Binomial),
        (Collective::Bcast, Linear),
        (Collective::Reduce, Binomial),
        (Collective::Gather, Binomial),
        (Collective::Scatter, Binomial),
        (Collective::Scatter, Linear),
        (Collective::Allreduce, RecursiveDoubling),
        (Collective::Allreduce, Rabenseifner),
        (Collective::Allreduce, Ring),
        (Collective::Allgather, RecursiveDoubling),
        (Collective::Allgather, Ring),
        (Collective::Alltoall, Bruck),
        (Collective::Alltoall, Pairwise),
        (Collective::ReduceScatter, Ring),
        (Collective::Scan, Linear),
        (Collective::Barrier, Dissemination),
    ];
    for (c, a) in cases {
        for n in 2..=9 {
            let o = collective(c, a, n, 2048);
            assert!(o.ranks.iter().all(|r| r.end > 0.0), "{c:?} {a:?} on {n}");
        }
    }
}

#[test]
fn parameters_parse() {
    let mut p = Params::default();
    p.set_all("L=2us,o=150ns,G=0.25ns/B,O=0.05,eager=64KiB,g=0.1us")
        .expect("valid");
    assert_eq!(
        (p.latency, p.send_overhead, p.recv_overhead, p.gap),
        (2000.0, 150.0, 150.0, 100.0)
    );
    assert_eq!((p.gap_per_byte, p.copy_per_byte), (0.25, 0.05));
    assert_eq!(p.eager_limit, 65536);
    assert!(p.set_all("L=fast").is_err());
    assert!(p.set_all("X=1").is_err());
    let mut q = Params::default();
    q.set_file(&p.to_file()).expect("round trip");
    assert_eq!(
        q,
        Params {
            compute_scale: 1.0,
            ..p
        }
    );
}

/// A ring exchange generated on the fly: each call posts a receive from the left and a
/// send to the right and waits for both.
struct RingExchange {
    rank: u32,
    n: u32,
    left: u64,
}

impl Program for RingExchange {
    fn next_call(&mut self, out: &mut VecDeque<Action>) -> Result<bool, String> {
        if self.left == 0 {
            return Ok(false);
        }
        self.left -= 1;
        out.push_back(call(1, 50.0));
        out.push_back(recv(1, Some((self.rank + self.n - 1) % self.n), Some(0)));
        out.push_back(send(2, (self.rank + 1) % self.n, 0, 64));
        out.push_back(Action::Wait(vec![1, 2]));
        Ok(true)
    }
}

/// The engine's own throughput, without decoding (`cargo test --release -p conifer-sim --
/// --ignored --nocapture`).
#[test]
#[ignore]
fn engine_throughput() {
    let (n, calls) = (16, 250_000);
    let programs = (0..n)
        .map(|rank| RingExchange {
            rank,
            n,
            left: calls,
        })
        .collect();
    let started = std::time::Instant::now();
    let o = Engine::new(params(), programs).run().expect("runs");
    let s = started.elapsed().as_secs_f64();
    println!(
        "{} events in {s:.2}s: {:.1} M events/s",
        o.events,
        o.events as f64 / s / 1e6
    );
    assert_eq!(o.messages, u64::from(n) * calls);
}
