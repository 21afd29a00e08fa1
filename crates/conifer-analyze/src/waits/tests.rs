//! Each pattern and the critical path on timelines written by hand (times in ns).

use super::timeline::{
    CallRec, CollKind, CollRec, RankTimeline, RecvRec, SendMode, SendRec, SiteInfo, Timelines,
};
use super::{compute, Pattern, Waits};
use crate::Site;

/// Builds timelines: communicator 0 is the world of `n` ranks.
struct Build {
    tl: Timelines,
    order: Vec<u64>,
    instances: Vec<u64>,
}

impl Build {
    fn new(n: usize) -> Build {
        Build {
            tl: Timelines {
                ranks: vec![RankTimeline::default(); n],
                comm_sizes: vec![Some(n as u32)],
                ..Timelines::default()
            },
            order: vec![0; n],
            instances: vec![0; n],
        }
    }

    /// A call of `name` on `rank` from `enter` to `exit`; one site per function.
    fn call(&mut self, rank: usize, name: &str, enter: i64, exit: i64) -> u32 {
        let function = self.tl.function(name);
        if self.tl.sites.len() <= function as usize {
            self.tl.sites.push(SiteInfo {
                site: Site::Signature(function),
                function: name.to_string(),
                source: None,
            });
        }
        let calls = &mut self.tl.ranks[rank].calls;
        calls.push(CallRec {
            enter,
            exit,
            function,
            site: function,
        });
        calls.len() as u32 - 1
    }

    fn send(&mut self, rank: usize, to: u32, post: u32, complete: u32, mode: SendMode) {
        self.tl.ranks[rank].sends.push(SendRec {
            to,
            comm: 0,
            tag: 0,
            post,
            complete: Some(complete),
            mode,
            bytes: 8,
        });
    }

    /// A receive posted by call `post` (in posting order) and completed by `complete`.
    fn recv(&mut self, rank: usize, from: u32, post: u32, complete: u32) {
        let order = self.order[rank];
        self.order[rank] += 1;
        self.recv_ordered(rank, from, post, complete, order);
    }

    fn recv_ordered(&mut self, rank: usize, from: u32, post: u32, complete: u32, order: u64) {
        self.tl.ranks[rank].recvs.push(RecvRec {
            from,
            comm: 0,
            tag: 0,
            post,
            complete,
            order,
        });
    }

    /// A blocking collective `name` (of `kind`) from `enter` to `exit` on `rank`.
    fn coll(
        &mut self,
        rank: usize,
        name: &str,
        kind: CollKind,
        root: Option<u32>,
        (enter, exit): (i64, i64),
    ) {
        let call = self.call(rank, name, enter, exit);
        let instance = self.instances[rank];
        self.instances[rank] += 1;
        self.tl.ranks[rank].colls.push(CollRec {
            comm: 0,
            instance,
            call,
            kind,
            root,
            blocking: true,
        });
    }

    fn finalize(&mut self, rank: usize, at: i64) {
        self.call(rank, "MPI_Finalize", at, at + 5);
    }

    fn waits(&self) -> Waits {
        compute(&self.tl)
    }
}

fn total(w: &Waits, pattern: Pattern, rank: usize) -> u64 {
    w.per_rank[rank].get(&pattern).copied().unwrap_or(0)
}

#[test]
fn late_sender_and_its_critical_path() {
    // Rank 0 receives from 0 to 100; rank 1 computes until 80 and sends (80-85): rank 0
    // waits 80. Rank 0 finalizes at 110, rank 1 at 90.
    let mut b = Build::new(2);
    b.call(0, "MPI_Init", -10, 0);
    b.call(1, "MPI_Init", -10, 0);
    let r = b.call(0, "MPI_Recv", 0, 100);
    b.recv(0, 1, r, r);
    let s = b.call(1, "MPI_Send", 80, 85);
    b.send(1, 0, s, s, SendMode::Standard);
    b.finalize(0, 110);
    b.finalize(1, 90);
    let w = b.waits();
    assert_eq!(total(&w, Pattern::LateSender, 0), 80);
    assert_eq!(w.entries.len(), 1);
    assert_eq!(
        (w.entries[0].rank, w.entries[0].function.as_str()),
        (0, "MPI_Recv")
    );
    assert_eq!(w.entries[0].instances, 1);
    // The path: rank 0's Finalize at 110 ← computation 100-110 ← Recv 80-100 (after its
    // wait) ← jump to rank 1 at 80 ← computation 0-80 ← Init -10-0.
    let p = w.critical_path.expect("a path");
    assert_eq!(
        (p.end_rank, p.start_ns, p.end_ns, p.jumps),
        (0, -10, 110, 1)
    );
    assert_eq!(p.time_of(0, "computation"), 10);
    assert_eq!(p.time_of(0, "MPI_Recv"), 20);
    assert_eq!(p.time_of(1, "computation"), 80);
    assert_eq!(p.time_of(1, "MPI_Init"), 10);
    assert_eq!(p.per_rank, vec![30, 90]);
    assert_eq!(p.per_activity["computation"], 90);
    // Start-up apart: rank 1's MPI_Init, 10 of the 120; the steady state is the other 110.
    assert_eq!((p.startup_ns, p.steady_ns), (10, 110));
    assert_eq!(p.steady_per_rank(), vec![30, 80]);
    let segs: Vec<(u32, &str, i64, i64)> = p
        .segments
        .iter()
        .map(|s| (s.rank, s.activity.as_str(), s.start_ns, s.end_ns))
        .collect();
    assert_eq!(
        segs,
        vec![
            (1, "MPI_Init", -10, 0),
            (1, "computation", 0, 80),
            (0, "MPI_Recv", 80, 100),
            (0, "computation", 100, 110),
        ]
    );
}

#[test]
fn a_send_that_started_first_is_no_wait() {
    let mut b = Build::new(2);
    let s = b.call(1, "MPI_Send", 0, 5);
    b.send(1, 0, s, s, SendMode::Standard);
    let r = b.call(0, "MPI_Recv", 10, 12);
    b.recv(0, 1, r, r);
    let w = b.waits();
    assert!(w.entries.is_empty());
    // A late receiver only if the standard send was still in the call (rendezvous): it
    // returned at 5, before the receive was posted at 10.
    assert_eq!(total(&w, Pattern::LateReceiver, 1), 0);
}

#[test]
fn late_receiver_for_synchronous_and_rendezvous_sends() {
    // Rank 0 sends 0-60; rank 1 posts its receive at 50: Late Receiver 50 for a synchronous
    // send, and for a standard send still blocked when the receive came.
    for mode in [SendMode::Synchronous, SendMode::Standard, SendMode::Other] {
        let mut b = Build::new(2);
        let s = b.call(0, "MPI_Ssend", 0, 60);
        b.send(0, 1, s, s, mode);
        let r = b.call(1, "MPI_Recv", 50, 61);
        b.recv(1, 0, r, r);
        let w = b.waits();
        let want = if mode == SendMode::Other { 0 } else { 50 };
        assert_eq!(total(&w, Pattern::LateReceiver, 0), want, "{mode:?}");
        assert_eq!(total(&w, Pattern::LateSender, 1), 0);
    }
}

#[test]
fn issend_completed_by_a_wait() {
    // Issend at 0-1, Wait 10-90; the receive (an Irecv at 70) is posted later: the wait
    // waits 60.
    let mut b = Build::new(2);
    let post = b.call(0, "MPI_Issend", 0, 1);
    let done = b.call(0, "MPI_Wait", 10, 90);
    b.send(0, 1, post, done, SendMode::Synchronous);
    let ir = b.call(1, "MPI_Irecv", 70, 71);
    let wr = b.call(1, "MPI_Wait", 72, 95);
    b.recv(1, 0, ir, wr);
    let w = b.waits();
    assert_eq!(total(&w, Pattern::LateReceiver, 0), 60);
    assert_eq!(w.entries[0].function, "MPI_Wait");
}

#[test]
fn late_sender_on_the_wait_of_an_irecv() {
    // Irecv 0-1, Wait 10-100; the send starts at 70: the Wait waits 60, the Irecv nothing.
    let mut b = Build::new(2);
    let ir = b.call(0, "MPI_Irecv", 0, 1);
    let wr = b.call(0, "MPI_Wait", 10, 100);
    b.recv(0, 1, ir, wr);
    let s = b.call(1, "MPI_Isend", 70, 72);
    b.send(1, 0, s, s, SendMode::Other);
    let w = b.waits();
    assert_eq!(total(&w, Pattern::LateSender, 0), 60);
    assert_eq!(w.entries[0].function, "MPI_Wait");
    assert_eq!(w.entries[0].instances, 1);
}

#[test]
fn receives_match_in_posting_order() {
    // Rank 0 posts Irecv A (0) and B (1), waits for B (10-50), then A (60-61). Rank 1's sends
    // start at 5 and 40: MPI gives the first to A, the second to B, so B's Wait waits for
    // the send at 40 (30) and A's Wait none.
    let mut b = Build::new(2);
    let a = b.call(0, "MPI_Irecv", 0, 1);
    let bb = b.call(0, "MPI_Irecv", 1, 2);
    let wb = b.call(0, "MPI_Wait", 10, 50);
    let wa = b.call(0, "MPI_Wait", 60, 61);
    // Completed in the order B, A; posted in the order A, B.
    b.recv_ordered(0, 1, bb, wb, 1);
    b.recv_ordered(0, 1, a, wa, 0);
    let s1 = b.call(1, "MPI_Send", 5, 6);
    b.send(1, 0, s1, s1, SendMode::Standard);
    let s2 = b.call(1, "MPI_Send", 40, 41);
    b.send(1, 0, s2, s2, SendMode::Standard);
    let w = b.waits();
    assert_eq!(total(&w, Pattern::LateSender, 0), 30);
    assert_eq!(w.unmatched.sends + w.unmatched.receives, 0);
}

#[test]
fn a_waitall_counts_its_longest_wait_once() {
    // One Waitall (0-100) completes receives from ranks 1 (send at 30) and 2 (at 80): it
    // waited 80, not 30 + 80, and its wait ended with rank 2's send.
    let mut b = Build::new(3);
    for r in 0..3 {
        b.call(r, "MPI_Init", -10, -6);
    }
    let i1 = b.call(0, "MPI_Irecv", -5, -4);
    let i2 = b.call(0, "MPI_Irecv", -3, -2);
    let wa = b.call(0, "MPI_Waitall", 0, 100);
    b.recv(0, 1, i1, wa);
    b.recv(0, 2, i2, wa);
    let s = b.call(1, "MPI_Send", 30, 31);
    b.send(1, 0, s, s, SendMode::Standard);
    let s = b.call(2, "MPI_Send", 80, 81);
    b.send(2, 0, s, s, SendMode::Standard);
    b.finalize(0, 100);
    b.finalize(1, 40);
    b.finalize(2, 90);
    let w = b.waits();
    assert_eq!(total(&w, Pattern::LateSender, 0), 80);
    let p = w.critical_path.expect("a path");
    assert_eq!(p.time_of(2, "computation"), 86);
    assert_eq!(p.time_of(0, "MPI_Waitall"), 20);
    assert_eq!(p.per_rank[1], 0);
}

#[test]
fn unmatched_messages_are_counted_not_guessed() {
    let mut b = Build::new(2);
    let s = b.call(1, "MPI_Send", 0, 1);
    b.send(1, 0, s, s, SendMode::Standard);
    let s = b.call(1, "MPI_Send", 2, 3);
    b.send(1, 0, s, s, SendMode::Standard);
    let r = b.call(0, "MPI_Recv", -10, 1);
    b.recv(0, 1, r, r);
    let w = b.waits();
    assert_eq!((w.unmatched.sends, w.unmatched.receives), (1, 0));
    assert_eq!(total(&w, Pattern::LateSender, 0), 10);
}

#[test]
fn wait_at_barrier_is_the_wait_for_the_last_member() {
    // Enters at 0, 10, 30, all leave at 31: waits 30, 20, 0. The path runs through rank 2's
    // computation up to its arrival.
    let mut b = Build::new(3);
    for (r, enter) in [(0, 0), (1, 10), (2, 30)] {
        b.call(r, "MPI_Init", -10, -5);
        b.coll(r, "MPI_Barrier", CollKind::Barrier, None, (enter, 31));
        b.finalize(r, 40 + r as i64);
    }
    let w = b.waits();
    let got: Vec<u64> = (0..3)
        .map(|r| total(&w, Pattern::WaitAtBarrier, r))
        .collect();
    assert_eq!(got, vec![30, 20, 0]);
    assert_eq!(w.total(Pattern::WaitAtBarrier), 50);
    let p = w.critical_path.expect("a path");
    assert_eq!(p.end_rank, 2);
    assert_eq!(p.jumps, 0);
    assert_eq!(p.time_of(2, "computation"), 35 + 11);
}

#[test]
fn wait_at_nxn_is_capped_by_the_call() {
    // A member that left (as its clock says) before the last arrival waits only its call.
    let mut b = Build::new(3);
    b.coll(0, "MPI_Allreduce", CollKind::NxN, None, (0, 20));
    b.coll(1, "MPI_Allreduce", CollKind::NxN, None, (10, 40));
    b.coll(2, "MPI_Allreduce", CollKind::NxN, None, (30, 40));
    let w = b.waits();
    let got: Vec<u64> = (0..3).map(|r| total(&w, Pattern::WaitAtNxn, r)).collect();
    assert_eq!(got, vec![20, 20, 0]);
    assert_eq!(w.total(Pattern::WaitAtBarrier), 0);
}

#[test]
fn late_broadcast_waits_for_the_root_only() {
    // Root 1 enters at 50; rank 0 at 10 waits 40, rank 2 at 60 none; the root none.
    let mut b = Build::new(3);
    b.coll(0, "MPI_Bcast", CollKind::OneToAll, Some(1), (10, 55));
    b.coll(1, "MPI_Bcast", CollKind::OneToAll, Some(1), (50, 52));
    b.coll(2, "MPI_Bcast", CollKind::OneToAll, Some(1), (60, 62));
    let w = b.waits();
    let got: Vec<u64> = (0..3)
        .map(|r| total(&w, Pattern::LateBroadcast, r))
        .collect();
    assert_eq!(got, vec![40, 0, 0]);
}

#[test]
fn early_reduce_waits_for_the_first_contribution_and_the_path_for_the_last() {
    // Root 0 enters at 0 and leaves at 60; the others enter at 20 and 50. Early Reduce on
    // the root: 20. On the critical path the root's call waited for the last member (rank
    // 2 at 50).
    let mut b = Build::new(3);
    for r in 0..3 {
        b.call(r, "MPI_Init", -10, 0);
    }
    b.coll(0, "MPI_Reduce", CollKind::AllToOne, Some(0), (0, 60));
    b.coll(1, "MPI_Reduce", CollKind::AllToOne, Some(0), (20, 21));
    b.coll(2, "MPI_Reduce", CollKind::AllToOne, Some(0), (50, 51));
    b.finalize(0, 70);
    b.finalize(1, 30);
    b.finalize(2, 55);
    let w = b.waits();
    assert_eq!(total(&w, Pattern::EarlyReduce, 0), 20);
    assert_eq!(total(&w, Pattern::EarlyReduce, 1), 0);
    let p = w.critical_path.expect("a path");
    assert_eq!(p.end_rank, 0);
    assert_eq!(p.time_of(0, "MPI_Reduce"), 10);
    assert_eq!(p.time_of(2, "computation"), 50);
    assert_eq!(p.length_ns(), 80);
}

#[test]
fn collectives_match_by_instance_and_skip_incomplete_ones() {
    // Two barriers; rank 1 of a 3-rank world lacks the second (a partial trace).
    let mut b = Build::new(3);
    for r in 0..3 {
        b.coll(
            r,
            "MPI_Barrier",
            CollKind::Barrier,
            None,
            (r as i64 * 10, 25),
        );
    }
    b.coll(0, "MPI_Barrier", CollKind::Barrier, None, (30, 90));
    b.coll(2, "MPI_Barrier", CollKind::Barrier, None, (80, 90));
    let w = b.waits();
    assert_eq!(w.total(Pattern::WaitAtBarrier), 20 + 10);
    assert_eq!(w.unmatched.collectives, 2);
}

#[test]
fn the_path_follows_a_chain_of_late_senders() {
    // Rank 2 computes until 100 and sends to 1 (which waits from 10); rank 1 then computes
    // 20 and sends to 0 (waiting from 5). The path: rank 2's computation (0-100), rank 1's
    // Recv 100-101, its computation 101-121, rank 0's Recv 121-122, rank 0's computation to
    // Finalize at 130.
    let mut b = Build::new(3);
    for r in 0..3 {
        b.call(r, "MPI_Init", -1, 0);
    }
    let r1 = b.call(1, "MPI_Recv", 10, 101);
    b.recv(1, 2, r1, r1);
    let s2 = b.call(2, "MPI_Send", 100, 100);
    b.send(2, 1, s2, s2, SendMode::Standard);
    let s1 = b.call(1, "MPI_Send", 121, 121);
    b.send(1, 0, s1, s1, SendMode::Standard);
    let r0 = b.call(0, "MPI_Recv", 5, 122);
    b.recv(0, 1, r0, r0);
    b.finalize(0, 130);
    b.finalize(1, 125);
    b.finalize(2, 105);
    let w = b.waits();
    assert_eq!(total(&w, Pattern::LateSender, 0), 116);
    assert_eq!(total(&w, Pattern::LateSender, 1), 90);
    let p = w.critical_path.expect("a path");
    assert_eq!(p.jumps, 2);
    assert_eq!(p.time_of(2, "computation"), 100);
    assert_eq!(p.time_of(1, "computation"), 20);
    assert_eq!(p.time_of(1, "MPI_Recv"), 1);
    assert_eq!(p.time_of(0, "MPI_Recv"), 1);
    assert_eq!(p.time_of(0, "computation"), 8);
    assert_eq!(p.time_of(2, "MPI_Init"), 1);
    assert_eq!(p.length_ns(), 131);
}

/// A non-blocking standard send of `bytes` posted at 0-1 on rank 0 and completed by a
/// `MPI_Wait` at 10-90; rank 1 receives it with a `MPI_Recv` at `recv_at`-95.
fn isend_waited(bytes: u64, recv_at: i64) -> Waits {
    let mut b = Build::new(2);
    let post = b.call(0, "MPI_Isend", 0, 1);
    let done = b.call(0, "MPI_Wait", 10, 90);
    b.send(0, 1, post, done, SendMode::Nonblocking);
    b.tl.ranks[0].sends[0].bytes = bytes;
    let r = b.call(1, "MPI_Recv", recv_at, 95);
    b.recv(1, 0, r, r);
    b.waits()
}

#[test]
fn rendezvous_isend_whose_receive_came_late_is_a_late_receiver() {
    // 1 MiB, the receive posted at 70: the wait waits 60 for it; the rest is no other wait.
    let w = isend_waited(1 << 20, 70);
    assert_eq!(total(&w, Pattern::LateReceiver, 0), 60);
    assert_eq!(total(&w, Pattern::SendCompletion, 0), 0);
    assert_eq!(w.entries[0].function, "MPI_Wait");
}

#[test]
fn eager_or_timely_isend_waits_for_send_completion() {
    // 8 bytes (eager), or 1 MiB whose receive was posted before the wait (at 5): the wait's
    // whole 80 ns is waiting for send completion.
    for (bytes, recv_at) in [(8, 70), (1 << 20, 5)] {
        let w = isend_waited(bytes, recv_at);
        assert_eq!(total(&w, Pattern::LateReceiver, 0), 0, "{bytes} B");
        assert_eq!(total(&w, Pattern::SendCompletion, 0), 80, "{bytes} B");
        let e = &w.entries[0];
        assert_eq!((e.pattern, e.instances), (Pattern::SendCompletion, 1));
    }
}

#[test]
fn a_wait_completing_a_receive_too_is_not_send_completion() {
    // Rank 0 posts an Irecv and an Isend, completes both with one Waitall (10-90); rank 1
    // sent first (0-1) and receives at 2: no wait of any pattern.
    let mut b = Build::new(2);
    let ir = b.call(0, "MPI_Irecv", 2, 3);
    let is = b.call(0, "MPI_Isend", 3, 4);
    let all = b.call(0, "MPI_Waitall", 10, 90);
    b.recv(0, 1, ir, all);
    b.send(0, 1, is, all, SendMode::Nonblocking);
    let s = b.call(1, "MPI_Send", 0, 1);
    b.send(1, 0, s, s, SendMode::Standard);
    let r = b.call(1, "MPI_Recv", 2, 95);
    b.recv(1, 0, r, r);
    let w = b.waits();
    assert_eq!(total(&w, Pattern::SendCompletion, 0), 0);
    assert!(w.entries.iter().all(|e| e.rank != 0), "{:?}", w.entries);
}
