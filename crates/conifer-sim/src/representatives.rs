//! Behaviour classes for representative replay (PHANTOM): ranks that call the same MPI
//! functions in the same order — so their calls line up one for one, whatever their
//! arguments (peers, colours and keys differ from rank to rank) — and recorded about the same
//! computation need only one of them replayed. Ranks of one grammar and trace tree make the
//! same calls, so the sequence is read once per distinct grammar and tree, not per rank.

use conifer_analyze::rank_figures::rank_figures;
use conifer_trace::Trace;
use std::collections::BTreeMap;

/// Ranks replayed as one.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// The rank replayed for the class: the member with the median recorded computation.
    pub representative: u32,
    /// Every member, in rank order (the representative included).
    pub members: Vec<u32>,
    /// The class's members' recorded computation, smallest and largest, ns.
    pub compute_ns: (f64, f64),
}

/// Computation differences below this (ns) are timer noise, not behaviour: a few context
/// switches' worth.
pub const NOISE_NS: f64 = 20_000.0;

/// The classes of `trace`'s ranks: the same calls (grammars and trees), and recorded
/// computation within `tolerance` (relative, e.g. 0.1) or [`NOISE_NS`] of the class's
/// smallest.
pub fn classes(trace: &Trace, tolerance: f64) -> Vec<Class> {
    let figures = rank_figures(trace);
    let functions = crate::terminals::mpi_functions(trace);
    let mut sequences: BTreeMap<(&[u32], &[u32]), Vec<u32>> = BTreeMap::new();
    let ranks: Vec<(Vec<u32>, f64)> = trace
        .record
        .ranks
        .iter()
        .enumerate()
        .map(|(r, entry)| {
            let calls = sequences
                .entry((&entry.threads, &entry.trees))
                .or_insert_with(|| function_sequence(trace, entry, &functions))
                .clone();
            (calls, figures.get(r).map_or(0.0, |f| f.compute_ns))
        })
        .collect();
    group(&ranks, tolerance)
}

/// What identifies the MPI functions a rank calls, in order, thread by thread: the length and
/// a hash of each thread's sequence of function ids (memory records left out).
fn function_sequence(
    trace: &Trace,
    entry: &conifer_trace::stored::RankEntry,
    functions: &[Option<u16>],
) -> Vec<u32> {
    let mut key = Vec::new();
    for thread in 0..entry.threads.len() {
        let (mut hash, mut calls) = (0xcbf2_9ce4_8422_2325u64, 0u64);
        for terminal in trace.record.thread_terminals(entry, thread) {
            if let Some(Some(f)) = functions.get(terminal as usize) {
                hash = (hash ^ u64::from(*f)).wrapping_mul(0x0000_0100_0000_01b3);
                calls += 1;
            }
        }
        key.extend([
            calls as u32,
            (calls >> 32) as u32,
            hash as u32,
            (hash >> 32) as u32,
        ]);
    }
    key
}

/// The classes of ranks given, per rank, what identifies its calls and its computation (ns).
fn group(ranks: &[(Vec<u32>, f64)], tolerance: f64) -> Vec<Class> {
    let mut by_calls: BTreeMap<&[u32], Vec<(f64, u32)>> = BTreeMap::new();
    for (r, (calls, compute)) in ranks.iter().enumerate() {
        by_calls
            .entry(calls)
            .or_default()
            .push((*compute, r as u32));
    }
    let mut classes = Vec::new();
    for mut ranks in by_calls.into_values() {
        ranks.sort_by(|a, b| a.0.total_cmp(&b.0));
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
            let mut members: Vec<u32> = group.iter().map(|&(_, r)| r).collect();
            members.sort_unstable();
            classes.push(Class {
                representative: group[group.len() / 2].1,
                members,
                compute_ns: (group[0].0, group[group.len() - 1].0),
            });
            start = end;
        }
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
    fn classes_split_by_calls_then_by_computation() {
        // Calls [0]: 1.0, 1.05 and 1.5 ms; calls [1]: 1.0 and 1.01 ms.
        let ranks = [(0, 1.0e6), (1, 1.0e6), (0, 1.05e6), (0, 1.5e6), (1, 1.01e6)]
            .map(|(g, ns)| (vec![g], ns));
        let found = group(&ranks, 0.1);
        let members: Vec<Vec<u32>> = found.iter().map(|c| c.members.clone()).collect();
        assert_eq!(members, vec![vec![0, 2], vec![1, 4], vec![3]]);
        assert_eq!(sources(&found, 5), vec![2, 4, 2, 3, 4]);
    }

    #[test]
    fn tiny_differences_are_noise() {
        let ranks = [10_000.0, 25_000.0, 29_000.0].map(|ns| (vec![0], ns));
        assert_eq!(group(&ranks, 0.1).len(), 1);
    }
}
