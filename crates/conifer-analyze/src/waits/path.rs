//! The critical path of the recorded run: which ranks and calls determine its end.
//!
//! The walk starts on the rank that entered `MPI_Finalize` last (else the rank whose last
//! call returned last), at that time, and goes back along the synchronised timeline, segment
//! by segment: the time between two calls is the rank's computation, a call's time is the
//! call's — except a call's waiting, which is charged to its cause: at the time the cause
//! happened (the late send's enter, the last arrival at the collective), the walk jumps to
//! the peer and goes on back from there, so the waiting time is covered by what the peer did
//! meanwhile (its computation, or a call it was itself held up in). Every nanosecond of the
//! path is charged to exactly one (rank, activity); the walk ends at the first call of the
//! rank it reaches last.
//!
//! Start-up (`MPI_Init`, `MPI_Init_thread`) is kept on the path but counted apart
//! ([`CriticalPath::startup_ns`]): nobody can act on it, so readers show it on its own and
//! take the path's shares of the rest, the steady state ([`CriticalPath::steady_ns`]).
//! Shutdown is never on the path: it ends where the last rank entered `MPI_Finalize`.

use super::patterns::CallWait;
use super::timeline::Timelines;
use serde::Serialize;
use std::collections::BTreeMap;

/// What the critical path calls the time between calls.
pub const COMPUTATION: &str = "computation";

/// Segments kept in [`CriticalPath::segments`] (the latest ones when there are more).
pub const MAX_SEGMENTS: usize = 100_000;

/// One stretch of the path on one rank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// World rank.
    pub rank: u32,
    /// A function's name, or [`COMPUTATION`].
    pub activity: String,
    /// Start, ns on the synchronised clock.
    pub start_ns: i64,
    /// End, ns on the synchronised clock.
    pub end_ns: i64,
}

/// Time on the path of one (rank, activity).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Share {
    /// World rank.
    pub rank: u32,
    /// A function's name, or [`COMPUTATION`].
    pub activity: String,
    /// Time on the path, ns.
    pub time_ns: u64,
}

/// The critical path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalPath {
    /// The rank the path ends on (the last to enter `MPI_Finalize`).
    pub end_rank: u32,
    /// True when it ends at `MPI_Finalize`'s enter (else at the last call's return).
    pub ends_at_finalize: bool,
    /// Where the path starts, ns on the synchronised clock.
    pub start_ns: i64,
    /// Where it ends.
    pub end_ns: i64,
    /// Time on the path per rank, ns (sums to `end_ns − start_ns`).
    pub per_rank: Vec<u64>,
    /// Time on the path per activity, ns.
    pub per_activity: BTreeMap<String, u64>,
    /// Time per (rank, activity), largest first.
    pub shares: Vec<Share>,
    /// Jumps from a waiting call to its cause on another rank.
    pub jumps: u64,
    /// The path from start to end, consecutive stretches of one (rank, activity) merged.
    pub segments: Vec<Segment>,
    /// True when `segments` holds only the last [`MAX_SEGMENTS`].
    pub segments_truncated: bool,
    /// Time on the path in start-up calls ([`is_startup`]), ns.
    pub startup_ns: u64,
    /// The path's length without start-up, ns: what its shares are taken of by default.
    pub steady_ns: u64,
}

impl CriticalPath {
    /// The path's length, ns.
    pub fn length_ns(&self) -> u64 {
        (self.end_ns - self.start_ns).max(0) as u64
    }

    /// Time on the path per rank without start-up, ns (sums to [`CriticalPath::steady_ns`]).
    pub fn steady_per_rank(&self) -> Vec<u64> {
        let mut per_rank = self.per_rank.clone();
        for s in self.shares.iter().filter(|s| is_startup(&s.activity)) {
            per_rank[s.rank as usize] -= s.time_ns;
        }
        per_rank
    }

    /// Time of (`rank`, `activity`) on the path, ns.
    pub fn time_of(&self, rank: u32, activity: &str) -> u64 {
        self.shares
            .iter()
            .filter(|s| s.rank == rank && s.activity == activity)
            .map(|s| s.time_ns)
            .sum()
    }
}

/// Activity index: `u32::MAX` for computation, else a function index.
const COMPUTE: u32 = u32::MAX;

/// What the walk accumulates.
struct Walk {
    charged: BTreeMap<(u32, u32), u64>,
    segments: Vec<(u32, u32, i64, i64)>,
    truncated: bool,
}

impl Walk {
    fn charge(&mut self, rank: u32, activity: u32, from: i64, to: i64) {
        if to <= from {
            return;
        }
        *self.charged.entry((rank, activity)).or_default() += (to - from) as u64;
        // Walking backwards: the new stretch precedes the last one pushed.
        if let Some(last) = self.segments.last_mut() {
            if last.0 == rank && last.1 == activity && last.2 == to {
                last.2 = from;
                return;
            }
        }
        if self.segments.len() < MAX_SEGMENTS {
            self.segments.push((rank, activity, from, to));
        } else {
            self.truncated = true;
        }
    }
}

/// The critical path of `tl`, whose calls waited as `waits` says (per rank, per call).
pub fn critical_path(tl: &Timelines, waits: &[Vec<Option<CallWait>>]) -> Option<CriticalPath> {
    let finalize = tl.functions.iter().position(|f| is_finalize(f));
    // (time, rank, at finalize): the last Finalize entered, else the last return.
    let ends: Vec<(i64, u32, bool)> = tl
        .ranks
        .iter()
        .enumerate()
        .filter_map(|(r, rank)| {
            let fin = rank
                .calls
                .iter()
                .rev()
                .find(|c| Some(c.function as usize) == finalize);
            match fin {
                Some(c) => Some((c.enter, r as u32, true)),
                None => rank.calls.last().map(|c| (c.exit, r as u32, false)),
            }
        })
        .collect();
    let any_finalize = ends.iter().any(|e| e.2);
    let &(end_ns, end_rank, ends_at_finalize) = ends
        .iter()
        .filter(|e| e.2 == any_finalize)
        .max_by_key(|e| (e.0, std::cmp::Reverse(e.1)))?;
    let mut walk = Walk {
        charged: BTreeMap::new(),
        segments: Vec::new(),
        truncated: false,
    };
    let (mut rank, mut t) = (end_rank, end_ns);
    let mut jumps = 0;
    loop {
        let calls = &tl.ranks[rank as usize].calls;
        // The last call entered before t.
        let k = calls.partition_point(|c| c.enter < t);
        if k == 0 {
            break;
        }
        let k = k - 1;
        let c = &calls[k];
        if t > c.exit {
            walk.charge(rank, COMPUTE, c.exit, t);
            t = c.exit;
        }
        let cause = waits
            .get(rank as usize)
            .and_then(|w| w.get(k))
            .and_then(|w| w.as_ref())
            .and_then(|w| w.cause)
            .filter(|&(peer, at)| at > c.enter && at < t && (peer as usize) < tl.ranks.len());
        match cause {
            Some((peer, at)) => {
                walk.charge(rank, c.function, at, t);
                rank = peer;
                t = at;
                jumps += 1;
            }
            None => {
                walk.charge(rank, c.function, c.enter, t);
                t = c.enter;
            }
        }
    }
    let name = |a: u32| {
        if a == COMPUTE {
            COMPUTATION.to_string()
        } else {
            tl.functions[a as usize].clone()
        }
    };
    let mut per_rank = vec![0u64; tl.ranks.len()];
    let mut per_activity: BTreeMap<String, u64> = BTreeMap::new();
    let mut shares = Vec::new();
    for (&(r, a), &ns) in &walk.charged {
        per_rank[r as usize] += ns;
        *per_activity.entry(name(a)).or_default() += ns;
        shares.push(Share {
            rank: r,
            activity: name(a),
            time_ns: ns,
        });
    }
    shares.sort_by(|a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then(a.rank.cmp(&b.rank))
            .then(a.activity.cmp(&b.activity))
    });
    let startup_ns: u64 = per_activity
        .iter()
        .filter(|(a, _)| is_startup(a))
        .map(|(_, ns)| ns)
        .sum();
    let segments = walk
        .segments
        .iter()
        .rev()
        .map(|&(rank, a, start_ns, end_ns)| Segment {
            rank,
            activity: name(a),
            start_ns,
            end_ns,
        })
        .collect();
    Some(CriticalPath {
        end_rank,
        ends_at_finalize,
        start_ns: t,
        end_ns,
        per_rank,
        per_activity,
        shares,
        jumps,
        segments,
        segments_truncated: walk.truncated,
        startup_ns,
        steady_ns: (end_ns - t).max(0) as u64 - startup_ns,
    })
}

/// True for the start-up calls: `MPI_Init` and `MPI_Init_thread` (any case, profiling
/// spellings too).
pub fn is_startup(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let name = name.strip_prefix('p').unwrap_or(&name);
    name == "mpi_init" || name == "mpi_init_thread"
}

/// True for `MPI_Finalize` (and the Fortran and profiling spellings).
fn is_finalize(name: &str) -> bool {
    name.eq_ignore_ascii_case("MPI_Finalize") || name.eq_ignore_ascii_case("PMPI_Finalize")
}
