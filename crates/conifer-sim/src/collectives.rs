//! Collectives decomposed into point-to-point messages by the algorithms MPI libraries run,
//! chosen per collective and message size by a rule modelled on Open MPI's `tuned`
//! component defaults (`coll_tuned_decision_fixed.c`, simplified). `m` is the bytes of one
//! member's block (the `count` of a `Bcast` or `Allreduce`, the per-member `sendcount` of an
//! `Allgather` or `Alltoall`; the mean block for `v`/`w` variants), `n` the members.
//!
//! | collective | algorithm chosen |
//! |---|---|
//! | Barrier | dissemination (⌈log₂ n⌉ rounds of 0-byte messages) |
//! | Bcast, Reduce | binomial tree |
//! | Gather, Scatter (and `v`) | binomial tree, subtrees' blocks aggregated |
//! | Allreduce | recursive doubling if m ≤ 10 KiB (or m < n); else Rabenseifner (reduce-scatter by recursive halving + allgather by recursive doubling) if n is a power of two and m < 1 MiB; else ring (reduce-scatter + allgather, m/n per step) |
//! | Allgather (and `v`) | recursive doubling if n is a power of two and n·m ≤ 80 KiB; else ring |
//! | Alltoall (and `v`, `w`) | Bruck if m ≤ 256 B; else pairwise exchange |
//! | Reduce_scatter (and `_block`) | ring |
//! | Scan, Exscan | linear chain |
//!
//! Every choice can be overridden (`allreduce=ring,alltoall=bruck`); an algorithm needing a
//! power of two falls back to ring on other sizes. Each round of an algorithm posts its
//! sends and receives together and waits for all of them. Reduction arithmetic costs
//! nothing (not modelled).

use crate::engine::Action;
use serde::Serialize;
use std::collections::VecDeque;

/// A collective operation, as the simulator decomposes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Collective {
    /// `MPI_Barrier`.
    Barrier,
    /// `MPI_Bcast`.
    Bcast,
    /// `MPI_Reduce`.
    Reduce,
    /// `MPI_Allreduce`.
    Allreduce,
    /// `MPI_Gather(v)`.
    Gather,
    /// `MPI_Scatter(v)`.
    Scatter,
    /// `MPI_Allgather(v)`.
    Allgather,
    /// `MPI_Alltoall(v/w)`.
    Alltoall,
    /// `MPI_Reduce_scatter(_block)`.
    ReduceScatter,
    /// `MPI_Scan`, `MPI_Exscan`.
    Scan,
}

const NAMES: &[(&str, Collective)] = &[
    ("barrier", Collective::Barrier),
    ("bcast", Collective::Bcast),
    ("reduce", Collective::Reduce),
    ("allreduce", Collective::Allreduce),
    ("gather", Collective::Gather),
    ("scatter", Collective::Scatter),
    ("allgather", Collective::Allgather),
    ("alltoall", Collective::Alltoall),
    ("reduce_scatter", Collective::ReduceScatter),
    ("scan", Collective::Scan),
];

impl Collective {
    /// The collective an operation name of the export crate's ops stands for (`Allgatherv`
    /// → `Allgather`).
    pub fn of_operation(op: &str) -> Option<Collective> {
        let op = op.to_ascii_lowercase();
        let base = match op.as_str() {
            "gatherv" => "gather",
            "scatterv" => "scatter",
            "allgatherv" => "allgather",
            "alltoallv" | "alltoallw" => "alltoall",
            "reduce_scatter_block" => "reduce_scatter",
            "exscan" => "scan",
            other => other,
        };
        NAMES.iter().find(|(n, _)| *n == base).map(|(_, c)| *c)
    }

    /// True for the collectives with a root.
    pub fn rooted(self) -> bool {
        matches!(
            self,
            Collective::Bcast | Collective::Reduce | Collective::Gather | Collective::Scatter
        )
    }
}

/// An algorithm a collective runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// The root exchanges with every member directly.
    Linear,
    /// Binomial tree.
    Binomial,
    /// Recursive doubling (exchange with rank xor 2^k).
    RecursiveDoubling,
    /// Ring: n − 1 steps to the right neighbour per phase.
    Ring,
    /// Rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling.
    Rabenseifner,
    /// Bruck: ⌈log₂ n⌉ steps, each moving the blocks whose index has bit k set.
    Bruck,
    /// Pairwise exchange: step k sends to rank + k, receives from rank − k.
    Pairwise,
    /// Dissemination: step k signals rank + 2^k.
    Dissemination,
}

const ALGORITHMS: &[(&str, Algorithm)] = &[
    ("linear", Algorithm::Linear),
    ("binomial", Algorithm::Binomial),
    ("recursive-doubling", Algorithm::RecursiveDoubling),
    ("ring", Algorithm::Ring),
    ("rabenseifner", Algorithm::Rabenseifner),
    ("bruck", Algorithm::Bruck),
    ("pairwise", Algorithm::Pairwise),
    ("dissemination", Algorithm::Dissemination),
];

/// The algorithms that implement `c`.
fn allowed(c: Collective) -> &'static [Algorithm] {
    use Algorithm::*;
    match c {
        Collective::Barrier => &[Dissemination],
        Collective::Bcast | Collective::Reduce | Collective::Gather | Collective::Scatter => {
            &[Binomial, Linear]
        }
        Collective::Allreduce => &[RecursiveDoubling, Rabenseifner, Ring],
        Collective::Allgather => &[RecursiveDoubling, Ring],
        Collective::Alltoall => &[Bruck, Pairwise],
        Collective::ReduceScatter => &[Ring],
        Collective::Scan => &[Linear],
    }
}

/// Which algorithm each collective runs: the default rule (module documentation) with
/// the user's overrides.
#[derive(Debug, Clone, Default)]
pub struct Rule {
    overrides: Vec<(Collective, Algorithm)>,
}

impl Rule {
    /// The default rule with `text`'s overrides (`allreduce=ring,alltoall=bruck`).
    pub fn with_overrides(text: &str) -> Result<Rule, String> {
        let mut overrides = Vec::new();
        for item in text.split(',').filter(|s| !s.trim().is_empty()) {
            let (c, a) = item
                .split_once('=')
                .ok_or_else(|| format!("bad algorithm choice {item:?}: expected NAME=ALGORITHM"))?;
            let c = NAMES
                .iter()
                .find(|(n, _)| *n == c.trim().to_ascii_lowercase())
                .map(|(_, c)| *c)
                .ok_or_else(|| {
                    let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
                    format!("unknown collective {c:?}: use one of {}", names.join(", "))
                })?;
            let a = ALGORITHMS
                .iter()
                .find(|(n, _)| *n == a.trim().to_ascii_lowercase())
                .map(|(_, a)| *a)
                .filter(|a| allowed(c).contains(a))
                .ok_or_else(|| {
                    let names: Vec<&str> = ALGORITHMS
                        .iter()
                        .filter(|(_, x)| allowed(c).contains(x))
                        .map(|(n, _)| *n)
                        .collect();
                    format!("{c:?} cannot run {a:?}: use {}", names.join(" or "))
                })?;
            overrides.push((c, a));
        }
        Ok(Rule { overrides })
    }

    /// The algorithm `c` runs on `n` members with blocks of `m` bytes.
    pub fn choose(&self, c: Collective, n: u32, m: u64) -> Algorithm {
        if let Some((_, a)) = self.overrides.iter().rev().find(|(x, _)| *x == c) {
            return *a;
        }
        let pow2 = n.is_power_of_two();
        match c {
            Collective::Barrier => Algorithm::Dissemination,
            Collective::Bcast | Collective::Reduce | Collective::Gather | Collective::Scatter => {
                Algorithm::Binomial
            }
            Collective::Allreduce if m <= 10 * 1024 || m < u64::from(n) => {
                Algorithm::RecursiveDoubling
            }
            Collective::Allreduce if pow2 && m < 1 << 20 => Algorithm::Rabenseifner,
            Collective::Allreduce => Algorithm::Ring,
            Collective::Allgather if pow2 && u64::from(n) * m <= 80 * 1024 => {
                Algorithm::RecursiveDoubling
            }
            Collective::Allgather | Collective::ReduceScatter => Algorithm::Ring,
            Collective::Alltoall if m <= 256 => Algorithm::Bruck,
            Collective::Alltoall => Algorithm::Pairwise,
            Collective::Scan => Algorithm::Linear,
        }
    }
}

/// One message of a round: to or from a member (rank in the communicator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The other member, rank in the communicator.
    pub peer: u32,
    /// True for a send, false for a receive.
    pub send: bool,
    /// Bytes.
    pub bytes: u64,
}

/// The rounds member `me` of `n` runs for `c` by `alg` (root `root`, blocks of `m` bytes).
pub fn schedule(
    c: Collective,
    alg: Algorithm,
    n: u32,
    me: u32,
    root: u32,
    m: u64,
) -> Vec<Vec<Step>> {
    if n < 2 || me >= n {
        return Vec::new();
    }
    let root = root.min(n - 1);
    // Rooted algorithms work on ranks relative to the root.
    let v = (me + n - root) % n;
    let rel = |steps: Vec<Vec<Step>>| -> Vec<Vec<Step>> {
        steps
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .map(|s| Step {
                        peer: (s.peer + root) % n,
                        ..s
                    })
                    .collect()
            })
            .collect()
    };
    let pow2 = n.is_power_of_two();
    match (c, alg) {
        (Collective::Bcast, Algorithm::Linear) => rel(linear(n, v, m, true, false)),
        (Collective::Scatter, Algorithm::Linear) => rel(linear(n, v, m, true, false)),
        (Collective::Reduce | Collective::Gather, Algorithm::Linear) => {
            rel(linear(n, v, m, false, false))
        }
        (Collective::Bcast, _) => rel(tree_down(n, v, |_| m)),
        (Collective::Scatter, _) => rel(tree_down(n, v, |sub| m * u64::from(sub))),
        (Collective::Reduce, _) => rel(tree_up(n, v, |_| m)),
        (Collective::Gather, _) => rel(tree_up(n, v, |sub| m * u64::from(sub))),
        (Collective::Barrier, _) => doubling_ring(n, me, |_| 0),
        (Collective::Alltoall, Algorithm::Bruck) => doubling_ring(n, me, |pow| {
            m * u64::from((0..n).filter(|j| j & pow != 0).count() as u32)
        }),
        (Collective::Alltoall, _) => (1..n)
            .map(|k| exchange((me + k) % n, (me + n - k) % n, m))
            .collect(),
        (Collective::Allreduce, Algorithm::RecursiveDoubling) => allreduce_doubling(n, me, m),
        (Collective::Allreduce, Algorithm::Rabenseifner) if pow2 => rabenseifner(n, me, m),
        (Collective::Allreduce, _) => ring(n, me, m.div_ceil(u64::from(n)), 2 * (n - 1)),
        (Collective::Allgather, Algorithm::RecursiveDoubling) if pow2 => {
            let mut rounds = Vec::new();
            let mut pow = 1;
            while pow < n {
                rounds.push(exchange(me ^ pow, me ^ pow, m * u64::from(pow)));
                pow <<= 1;
            }
            rounds
        }
        (Collective::Allgather | Collective::ReduceScatter, _) => ring(n, me, m, n - 1),
        (Collective::Scan, _) => linear(n, me, m, true, true),
    }
}

/// A round sending `bytes` to `to` and receiving `bytes` from `from`.
fn exchange(to: u32, from: u32, bytes: u64) -> Vec<Step> {
    vec![
        Step {
            peer: to,
            send: true,
            bytes,
        },
        Step {
            peer: from,
            send: false,
            bytes,
        },
    ]
}

/// `steps` rounds of sending to the right neighbour and receiving from the left.
fn ring(n: u32, me: u32, bytes: u64, steps: u32) -> Vec<Vec<Step>> {
    (0..steps)
        .map(|_| exchange((me + 1) % n, (me + n - 1) % n, bytes))
        .collect()
}

/// Rounds k = 0, 1, …: send to me + 2^k, receive from me − 2^k, `bytes(2^k)` each.
fn doubling_ring(n: u32, me: u32, bytes: impl Fn(u32) -> u64) -> Vec<Vec<Step>> {
    let mut rounds = Vec::new();
    let mut pow = 1;
    while pow < n {
        rounds.push(exchange((me + pow) % n, (me + n - pow) % n, bytes(pow)));
        pow <<= 1;
    }
    rounds
}

/// Root (relative rank 0) to or from every member directly; with `chain`, a chain
/// v − 1 → v → v + 1 instead (scan).
fn linear(n: u32, v: u32, m: u64, down: bool, chain: bool) -> Vec<Vec<Step>> {
    let step = |peer, send| Step {
        peer,
        send,
        bytes: m,
    };
    if chain {
        let mut rounds = Vec::new();
        if v > 0 {
            rounds.push(vec![step(v - 1, false)]);
        }
        if v + 1 < n {
            rounds.push(vec![step(v + 1, true)]);
        }
        return rounds;
    }
    if v == 0 {
        vec![(1..n).map(|j| step(j, down)).collect()]
    } else {
        vec![vec![step(0, !down)]]
    }
}

/// Binomial tree from relative rank 0 down: receive from the parent, then send to the
/// children (largest subtree first); `bytes(s)` for a subtree of `s` members.
fn tree_down(n: u32, v: u32, bytes: impl Fn(u32) -> u64) -> Vec<Vec<Step>> {
    let mut rounds = Vec::new();
    let mut mask = 1;
    while mask < n {
        if v & mask != 0 {
            rounds.push(vec![Step {
                peer: v - mask,
                send: false,
                bytes: bytes(mask.min(n - v)),
            }]);
            break;
        }
        mask <<= 1;
    }
    let mut sends = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if v + mask < n {
            sends.push(Step {
                peer: v + mask,
                send: true,
                bytes: bytes(mask.min(n - v - mask)),
            });
        }
        mask >>= 1;
    }
    if !sends.is_empty() {
        rounds.push(sends);
    }
    rounds
}

/// Binomial tree up to relative rank 0: receive from the children, then send to the
/// parent; `bytes(s)` for a subtree of `s` members.
fn tree_up(n: u32, v: u32, bytes: impl Fn(u32) -> u64) -> Vec<Vec<Step>> {
    let mut recvs = Vec::new();
    let mut mask = 1;
    while mask < n {
        if v & mask != 0 {
            let mut rounds = vec![recvs];
            rounds.push(vec![Step {
                peer: v - mask,
                send: true,
                bytes: bytes(mask.min(n - v)),
            }]);
            rounds.retain(|r| !r.is_empty());
            return rounds;
        }
        if v + mask < n {
            recvs.push(Step {
                peer: v + mask,
                send: false,
                bytes: bytes(mask.min(n - v - mask)),
            });
        }
        mask <<= 1;
    }
    vec![recvs]
}

/// Recursive-doubling allreduce; on other sizes than powers of two the first 2·rem ranks
/// fold pairwise first and get the result back at the end (as MPICH and Open MPI do).
fn allreduce_doubling(n: u32, me: u32, m: u64) -> Vec<Vec<Step>> {
    let pof2 = 1 << (31 - n.leading_zeros());
    let rem = n - pof2;
    let one = |peer, send| {
        vec![Step {
            peer,
            send,
            bytes: m,
        }]
    };
    let mut rounds = Vec::new();
    let new_rank = if me < 2 * rem {
        if me.is_multiple_of(2) {
            rounds.push(one(me + 1, true));
            None
        } else {
            rounds.push(one(me - 1, false));
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    if let Some(nr) = new_rank {
        let mut mask = 1;
        while mask < pof2 {
            let p = nr ^ mask;
            let peer = if p < rem { 2 * p + 1 } else { p + rem };
            rounds.push(exchange(peer, peer, m));
            mask <<= 1;
        }
    }
    if me < 2 * rem {
        rounds.push(if me.is_multiple_of(2) {
            one(me + 1, false)
        } else {
            one(me - 1, true)
        });
    }
    rounds
}

/// Rabenseifner's allreduce on a power of two: recursive halving (m/2, m/4, …) with
/// partners at distance n/2, n/4, …, then recursive doubling back.
fn rabenseifner(n: u32, me: u32, m: u64) -> Vec<Vec<Step>> {
    let mut dist = Vec::new();
    let mut d = n / 2;
    let mut bytes = m;
    while d >= 1 {
        bytes = bytes.div_ceil(2);
        dist.push((d, bytes));
        d /= 2;
    }
    let halving = dist.iter().map(|&(d, b)| exchange(me ^ d, me ^ d, b));
    let doubling = dist.iter().rev().map(|&(d, b)| exchange(me ^ d, me ^ d, b));
    halving.chain(doubling).collect()
}

/// Appends the actions of `rounds` to `out`: each round's sends and receives posted on
/// matching context `ctx` with `tag`, then a wait for all of them. `members` maps ranks in
/// the communicator to world ranks; request numbers come from `next_req`.
pub fn expand(
    rounds: &[Vec<Step>],
    members: &[u32],
    ctx: u32,
    tag: i64,
    next_req: &mut u64,
    out: &mut VecDeque<Action>,
) {
    for round in rounds {
        let mut reqs = Vec::with_capacity(round.len());
        for s in round {
            let Some(&peer) = members.get(s.peer as usize) else {
                continue;
            };
            let req = *next_req;
            *next_req += 1;
            reqs.push(req);
            out.push_back(if s.send {
                Action::Send {
                    req,
                    to: peer,
                    ctx,
                    tag,
                    bytes: s.bytes,
                    sync: false,
                }
            } else {
                Action::Recv {
                    req,
                    from: Some(peer),
                    ctx,
                    tag: Some(tag),
                }
            });
        }
        out.push_back(Action::Wait(reqs));
    }
}
