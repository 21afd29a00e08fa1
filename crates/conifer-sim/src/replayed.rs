//! A trace whose computation is the one measured by replay (`conifer replay`, PHANTOM) rather
//! than the one the run recorded: a replayed rank takes its replay's intervals call by call;
//! a rank its class's representative stands for ([`crate::representatives`]) keeps its
//! steady recorded intervals scaled by the representative's replayed over steady recorded
//! computation (its calls need not line up with the representative's). With per-call timing (`--timing lossless` or `lossy`) every call's interval is
//! replaced; in every timing mode the ranks' computation totals and the timing families'
//! interval statistics are recomputed from the replayed intervals. Call durations (time in
//! MPI) stay as recorded: the simulator predicts them.

use conifer_trace::histogram::{bin_of, Bins};
use conifer_trace::timeline::{self, CallTime};
use conifer_trace::timing::Timing;
use conifer_trace::Trace;
use std::collections::BTreeMap;

/// The option a trace with replayed computation lists in its metadata.
pub const OPTION: &str = "computation=replayed";

/// Puts replayed computation into `trace`: rank `r` takes the intervals `times[&r]` (the
/// computation before each call of its main thread, ns), or, without times, its recorded
/// steady intervals ([`crate::representatives::steady_intervals`]) times `scale[&r]`; other ranks keep what they recorded. Fails when a replayed
/// rank's calls do not line up with its replay's.
pub fn apply(
    trace: &mut Trace,
    times: &BTreeMap<u32, Vec<u64>>,
    scale: &BTreeMap<u32, f64>,
) -> Result<(), String> {
    let timing_index = trace.record.timing_index();
    let functions = crate::terminals::mpi_functions(trace);
    let mut families = vec![(Timing::default(), Bins::default()); trace.record.timing.len()];
    let mut replaced: Vec<Option<Vec<u64>>> = vec![None; trace.record.ranks.len()];
    let mut scaled_totals = BTreeMap::new();
    for (r, entry) in trace.record.ranks.iter().enumerate() {
        let key = r as u32;
        if !times.contains_key(&key) && !scale.contains_key(&key) {
            continue;
        }
        if entry.threads.len() != 1 {
            return Err(format!(
                "rank {r} ran MPI on {} threads: replay covers ranks that call MPI from one thread",
                entry.threads.len()
            ));
        }
        let per_call = match (times.get(&key), scale.get(&key)) {
            (Some(intervals), _) => spread(trace, &functions, r, intervals)?,
            (None, Some(&factor)) => match crate::representatives::steady_intervals(trace, r) {
                Some(intervals) => intervals
                    .iter()
                    .map(|&ns| (ns as f64 * factor).round() as u64)
                    .collect(),
                // Without per-call timing only the rank's total can be scaled.
                None => {
                    scaled_totals.insert(r, factor);
                    continue;
                }
            },
            (None, None) => continue,
        };
        for (terminal, &ns) in trace.record.thread_terminals(entry, 0).zip(&per_call) {
            if let Some(family) = timing_index.get(terminal as usize).copied().flatten() {
                let (stats, bins) = &mut families[family as usize];
                stats.add(ns as f64);
                bins.add(bin_of(ns as f64), 1);
            }
        }
        replaced[r] = Some(per_call);
    }
    for (&r, &factor) in &scaled_totals {
        let entry = &mut trace.record.ranks[r];
        entry.time.compute_ns *= factor;
        entry.totals.compute_ns = (entry.totals.compute_ns as f64 * factor).round() as u64;
    }
    let all = replaced.iter().all(Option::is_some);
    for (r, (entry, intervals)) in trace.record.ranks.iter_mut().zip(&replaced).enumerate() {
        let Some(intervals) = intervals else {
            continue;
        };
        let total: u64 = intervals.iter().sum();
        entry.time.compute_ns = total as f64;
        entry.totals.compute_ns = total;
        if let Some(bytes) = entry.timelines.get_mut(0) {
            let recorded = timeline::decode(bytes, intervals.len() as u64)
                .ok_or_else(|| format!("rank {r}'s recorded timeline cannot be read"))?;
            let updated: Vec<CallTime> = recorded
                .iter()
                .zip(intervals)
                .map(|(t, &interval_ns)| CallTime {
                    interval_ns,
                    duration_ns: t.duration_ns,
                })
                .collect();
            *bytes = timeline::encode(&updated);
        }
    }
    if all {
        for (family, (stats, bins)) in trace.record.timing.iter_mut().zip(families) {
            family.stats.interval = stats;
            if let Some(histogram) = family.histogram.as_mut() {
                histogram.interval = bins;
            }
        }
    }
    if !trace.meta.options.iter().any(|o| o == OPTION) {
        trace.meta.options.push(OPTION.to_string());
    }
    Ok(())
}

/// The replayed intervals of rank `r`'s calls, one per terminal of its main thread: the
/// trace also holds the program's `free` of buffers MPI used (memory records), which the
/// replay does not stop at, so the computation between two MPI calls goes to the MPI call
/// and the records between get none.
fn spread(
    trace: &Trace,
    functions: &[Option<u16>],
    r: usize,
    intervals: &[u64],
) -> Result<Vec<u64>, String> {
    let entry = &trace.record.ranks[r];
    let mut replayed = intervals.iter();
    let mut out = Vec::with_capacity(intervals.len());
    for terminal in trace.record.thread_terminals(entry, 0) {
        if functions
            .get(terminal as usize)
            .is_some_and(Option::is_none)
        {
            out.push(0);
            continue;
        }
        match replayed.next() {
            Some(&ns) => out.push(ns),
            None => return Err(mismatch(r, out.len() + 1, intervals.len())),
        }
    }
    if replayed.next().is_some() {
        return Err(mismatch(r, out.len(), intervals.len()));
    }
    Ok(out)
}

fn mismatch(r: usize, traced: usize, replayed: usize) -> String {
    format!(
        "rank {r}'s calls in the trace ({traced} or more) do not line up with its replay's ({replayed}): was recording switched off for part of the run, or functions excluded?"
    )
}
