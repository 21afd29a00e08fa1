//! Wait states (Scalasca's patterns) and the critical path of the recorded run, on the
//! synchronised timeline (every call *as run*, on rank 0's clock: [`conifer_trace::as_run`]).
//!
//! - [`timeline`]: each rank's calls with their enter and exit times, and what the matching
//!   needs of them (sends, receives, collective instances), read rank by rank from the trace
//!   through [`crate::messages::Messages`];
//! - [`patterns`]: point-to-point messages matched FIFO per (sender, receiver,
//!   communicator, tag) as MPI matches them, collective instances matched by counting each
//!   member's collectives on a communicator; each call's waiting time, its pattern and the
//!   peer that caused it;
//! - [`path`]: the critical path, walked back from the rank that entered `MPI_Finalize`
//!   last: a call's waiting time is charged to its cause (the late peer's computation or
//!   call) by jumping to that peer at the cause.
//!
//! Patterns ([`Pattern`]): *Late Sender* — a blocking receive (`MPI_Recv`, the receive half
//! of `MPI_Sendrecv`, the `MPI_Wait*`/`MPI_Test*` completing an `MPI_Irecv`) entered before
//! the matching send started: `min(send.enter, recv.exit) − recv.enter`; *Late Receiver* —
//! a synchronous send (`MPI_Ssend`, or the wait completing an `MPI_Issend`), a blocking
//! standard `MPI_Send` still in the call when the receive was posted (rendezvous), or the
//! `MPI_Wait*`/`MPI_Test*` completing a rendezvous-size `MPI_Isend` (over
//! [`patterns::RENDEZVOUS_BYTES`]) still in the call when the receive was posted, waits
//! `min(recv.enter, send.exit) − send.enter` (for a completing call: from its own enter);
//! *Send Completion* ("waiting for send completion") — a `MPI_Wait*`/`MPI_Test*` that
//! completes non-blocking sends and no receive, and has no Late Receiver wait, waits its whole
//! length; *Wait at Barrier* and *Wait at N×N*
//! (`Allreduce`, `Alltoall(v/w)`, `Allgather(v)`, `Reduce_scatter(_block)`): each member
//! waits `max(enter over members) − own enter`; *Late Broadcast* (`Bcast`, `Scatter(v)`): a
//! non-root waits `root.enter − own.enter`; *Early Reduce* (`Reduce`, `Gather(v)`): the root
//! waits `min(non-root enters) − root.enter`. Each is capped by the waiting call's own
//! length; a call that could wait for several messages (a `MPI_Waitall`) counts its longest
//! wait once.
//!
//! Per-call timing is required: with the default aggregate timing a trace keeps, per timing
//! family, only the pooled distribution of intervals and durations; when each call of one
//! rank started relative to the matching call of another is gone, and with it every wait
//! state ([`WaitsError::NeedsPerCallTiming`]).
//!
//! On the compressed form: the message plan of a call and its call site are worked out once
//! per terminal of each rank (shared by every repetition of a rule or tree vertex), but the
//! times are each call's own, so every call is expanded, rank by rank; memory holds each
//! rank's calls as (enter, exit, function, site) and its messages until all ranks are read.

mod error;
mod kinds;
pub mod path;
pub mod patterns;
#[cfg(test)]
mod tests;
pub mod timeline;

use crate::Site;
use conifer_trace::timing_mode::TimingMode;
use conifer_trace::Trace;
use serde::Serialize;
use std::collections::BTreeMap;

pub use error::WaitsError;
pub use kinds::Pattern;
pub use path::CriticalPath;
pub use timeline::{Timelines, Unmatched};

/// The waiting time of one pattern at one call site of one rank.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WaitEntry {
    /// The pattern.
    pub pattern: Pattern,
    /// World rank that waited.
    pub rank: u32,
    /// The call site of the waiting calls (see [`Site`]).
    pub site: Site,
    /// The function called there.
    pub function: String,
    /// The site's `file:line`, when the trace knows it.
    pub source: Option<String>,
    /// Waiting time, ns.
    pub time_ns: u64,
    /// Calls that waited.
    pub instances: u64,
}

/// Everything [`analyze`] computes.
#[derive(Debug, Clone, Serialize)]
pub struct Waits {
    /// Ranks.
    pub ranks: u32,
    /// The timing the trace was recorded with (`lossless`, `lossy:0.01`).
    pub timing: String,
    /// Per (pattern, rank, site), largest first.
    pub entries: Vec<WaitEntry>,
    /// Per rank, per pattern, ns.
    pub per_rank: Vec<BTreeMap<Pattern, u64>>,
    /// The critical path (absent when no rank made a call).
    pub critical_path: Option<CriticalPath>,
    /// What could not be matched.
    pub unmatched: Unmatched,
}

impl Waits {
    /// Total waiting time of `pattern` over all ranks, ns.
    pub fn total(&self, pattern: Pattern) -> u64 {
        self.per_rank.iter().filter_map(|m| m.get(&pattern)).sum()
    }
}

/// True when `trace` keeps every call's time (what wait states need).
pub fn has_per_call_timing(trace: &Trace) -> bool {
    TimingMode::recorded(&trace.meta.options).keeps_calls()
}

/// The wait states and critical path of `trace`. `progress(done, total)` is called as ranks
/// are read.
pub fn analyze(trace: &Trace, progress: &mut dyn FnMut(u64, u64)) -> Result<Waits, WaitsError> {
    let mode = TimingMode::recorded(&trace.meta.options);
    if !mode.keeps_calls() {
        return Err(WaitsError::NeedsPerCallTiming(mode.to_string()));
    }
    let timelines = timeline::collect(trace, progress)?;
    let mut waits = compute(&timelines);
    waits.timing = mode.to_string();
    Ok(waits)
}

/// The wait states and critical path of `timelines` (read from a trace, or built by hand).
pub fn compute(timelines: &Timelines) -> Waits {
    let matched = patterns::match_all(timelines);
    let ranks = timelines.ranks.len();
    let mut per_rank: Vec<BTreeMap<Pattern, u64>> = vec![BTreeMap::new(); ranks];
    let mut groups: BTreeMap<(Pattern, u32, u32), (u64, u64)> = BTreeMap::new();
    for (rank, calls) in matched.waits.iter().enumerate() {
        for (i, w) in calls.iter().enumerate() {
            let Some(w) = w.filter(|w| w.wait > 0) else {
                continue;
            };
            let ns = w.wait as u64;
            *per_rank[rank].entry(w.pattern).or_default() += ns;
            let site = timelines.ranks[rank].calls[i].site;
            let g = groups.entry((w.pattern, rank as u32, site)).or_default();
            g.0 += ns;
            g.1 += 1;
        }
    }
    let mut entries: Vec<WaitEntry> = groups
        .into_iter()
        .map(|((pattern, rank, site), (time_ns, instances))| {
            let info = &timelines.sites[site as usize];
            WaitEntry {
                pattern,
                rank,
                site: info.site,
                function: info.function.clone(),
                source: info.source.clone(),
                time_ns,
                instances,
            }
        })
        .collect();
    entries.sort_by(|a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then(a.pattern.cmp(&b.pattern))
            .then(a.rank.cmp(&b.rank))
    });
    let mut unmatched = timelines.unmatched.clone();
    unmatched.sends += matched.unmatched_sends;
    unmatched.receives += matched.unmatched_receives;
    unmatched.collectives += matched.unmatched_collectives;
    Waits {
        ranks: ranks as u32,
        timing: String::new(),
        entries,
        per_rank,
        critical_path: path::critical_path(timelines, &matched.waits),
        unmatched,
    }
}
