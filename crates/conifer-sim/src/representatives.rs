//! Classes for representative replay (PHANTOM): ranks whose recorded computation agrees
//! within a tolerance need only one of them replayed, whatever MPI calls they make — boundary
//! and corner ranks of a stencil or wavefront call other peers, fewer of them, in another
//! order, and still compute the same. The replayed rank stands for the others through the
//! ratio of its replayed to its recorded computation (see `crate::replayed`).
//!
//! The recorded computation compared is the steady one ([`steady_intervals`]): a run with
//! more ranks than cores has intervals in which a rank waited a time slice for a core, which
//! says nothing of what the rank computes.

use conifer_analyze::rank_figures::rank_figures;
use conifer_trace::timeline;
use conifer_trace::Trace;
use std::collections::HashMap;

/// Ranks replayed as one.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// The rank replayed for the class: the member with the median recorded computation.
    pub representative: u32,
    /// Every member, in rank order (the representative included).
    pub members: Vec<u32>,
    /// The class's members' recorded computation, smallest and largest, ns.
    pub compute_ns: (f64, f64),
    /// The largest difference of a member's recorded computation from the representative's,
    /// relative to the representative's.
    pub distance: f64,
}

/// Computation differences below this (ns) are timer noise, not behaviour: a few context
/// switches' worth.
pub const NOISE_NS: f64 = 20_000.0;

/// The classes of `trace`'s ranks by steady recorded computation ([`computation`]): each
/// class's members within `tolerance` (relative, e.g. 0.1) or [`NOISE_NS`] of its smallest.
pub fn classes(trace: &Trace, tolerance: f64) -> Vec<Class> {
    group(&computation(trace), tolerance)
}

/// Each rank's steady recorded computation, ns: the sum of its [`steady_intervals`], or,
/// without per-call timing, its recorded total (without the recorder's own time).
pub fn computation(trace: &Trace) -> Vec<f64> {
    rank_figures(trace)
        .iter()
        .enumerate()
        .map(|(r, f)| {
            steady_intervals(trace, r).map_or(f.compute_ns, |i| i.iter().sum::<u64>() as f64)
        })
        .collect()
}

/// Rank `r`'s steady recorded interval before each call of its main thread (with per-call
/// timing, on a rank that calls MPI from one thread): the median of the intervals before the
/// calls of its terminal (the same call, arguments and all). A run with more ranks than cores
/// puts a wait for a core into some intervals and not others; the median leaves it out.
pub fn steady_intervals(trace: &Trace, r: usize) -> Option<Vec<u64>> {
    let entry = trace.record.ranks.get(r)?;
    if entry.threads.len() != 1 {
        return None;
    }
    let bytes = entry.timelines.first()?;
    let times = timeline::decode(bytes, trace.record.thread_calls(entry, 0))?;
    let terminals: Vec<u32> = trace.record.thread_terminals(entry, 0).collect();
    let mut by_terminal: HashMap<u32, Vec<u64>> = HashMap::new();
    for (t, &terminal) in times.iter().zip(&terminals) {
        by_terminal.entry(terminal).or_default().push(t.interval_ns);
    }
    let medians: HashMap<u32, u64> = by_terminal
        .into_iter()
        .map(|(terminal, mut v)| {
            v.sort_unstable();
            (terminal, v[v.len() / 2])
        })
        .collect();
    Some(terminals.iter().map(|t| medians[t]).collect())
}

/// The classes of ranks given each rank's computation (ns).
fn group(computation: &[f64], tolerance: f64) -> Vec<Class> {
    let mut ranks: Vec<(f64, u32)> = computation
        .iter()
        .enumerate()
        .map(|(r, &c)| (c, r as u32))
        .collect();
    ranks.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut classes = Vec::new();
    let mut start = 0;
    while start < ranks.len() {
        let limit = (ranks[start].0 * (1.0 + tolerance)).max(ranks[start].0 + NOISE_NS);
        let end = start
            + ranks[start..]
                .iter()
                .take_while(|(c, _)| *c <= limit)
                .count()
                .max(1);
        let group = &ranks[start..end];
        let (rep_ns, representative) = group[group.len() / 2];
        let distance = group
            .iter()
            .map(|(c, _)| (c - rep_ns).abs() / rep_ns.max(1.0))
            .fold(0.0, f64::max);
        let mut members: Vec<u32> = group.iter().map(|&(_, r)| r).collect();
        members.sort_unstable();
        classes.push(Class {
            representative,
            members,
            compute_ns: (group[0].0, group[group.len() - 1].0),
            distance,
        });
        start = end;
    }
    classes.sort_by_key(|c| c.members[0]);
    classes
}

/// For every rank, the rank whose replay stands for it.
pub fn sources(classes: &[Class], ranks: usize) -> Vec<u32> {
    let mut source: Vec<u32> = (0..ranks as u32).collect();
    for class in classes {
        for &m in &class.members {
            if let Some(s) = source.get_mut(m as usize) {
                *s = class.representative;
            }
        }
    }
    source
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_group_by_computation_alone() {
        // 1.0, 1.0, 1.05, 1.5 and 1.01 ms: ranks 0, 1, 2, 4 within 10% of 1.0 ms.
        let found = group(&[1.0e6, 1.0e6, 1.05e6, 1.5e6, 1.01e6], 0.1);
        let members: Vec<Vec<u32>> = found.iter().map(|c| c.members.clone()).collect();
        assert_eq!(members, vec![vec![0, 1, 2, 4], vec![3]]);
        // Sorted 1.0 (0), 1.0 (1), 1.01 (4), 1.05 (2): the median member is rank 4.
        assert_eq!(found[0].representative, 4);
        // The farthest member is rank 2: 1.05 ms against 1.01 ms.
        assert!((found[0].distance - 0.04e6 / 1.01e6).abs() < 1e-12);
        assert_eq!(found[1].distance, 0.0);
        assert_eq!(sources(&found, 5), vec![4, 4, 4, 3, 4]);
    }

    #[test]
    fn tiny_differences_are_noise() {
        assert_eq!(group(&[10_000.0, 25_000.0, 29_000.0], 0.1).len(), 1);
    }
}
