//! Behaviour classes for representative replay (PHANTOM): ranks that make the same calls in the
//! same order — the same grammars and trace trees in the trace, so their calls line up one
//! for one — and recorded about the same computation need only one of them replayed. The
//! trace already groups ranks by grammar, so finding the classes costs nothing per call.

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

/// The classes of `trace`'s ranks: the same calls (grammars and trees), and recorded
/// computation within `tolerance` (relative, e.g. 0.1) of the class's smallest.
pub fn classes(trace: &Trace, tolerance: f64) -> Vec<Class> {
    let figures = rank_figures(trace);
    let mut by_calls: BTreeMap<(&[u32], &[u32]), Vec<(f64, u32)>> = BTreeMap::new();
    for (r, entry) in trace.record.ranks.iter().enumerate() {
        let compute = figures.get(r).map_or(0.0, |f| f.compute_ns);
        by_calls
            .entry((&entry.threads, &entry.trees))
            .or_default()
            .push((compute, r as u32));
    }
    let mut classes = Vec::new();
    for mut ranks in by_calls.into_values() {
        ranks.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut start = 0;
        while start < ranks.len() {
            let limit = ranks[start].0 * (1.0 + tolerance);
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
