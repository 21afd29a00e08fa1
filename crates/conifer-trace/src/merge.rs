//! Combines ranks' records into one: one global signature table, each rank's grammars
//! renumbered to it, identical grammars stored once, timing statistics pooled over the ranks
//! that behave identically. [`Merged::absorb`] joins two adjacent rank ranges; the tracer calls
//! it in log2 P pairwise rounds over MPI, `conifer merge` folds partial files with [`merge`].

use crate::forest::{Forest, NO_TREE};
use crate::rank_record::{Membership, RankRecord, Timing};
use conifer_compress::{FrozenGrammar, Grammar};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// What one rank contributes besides its grammars and timing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankEntry {
    /// Grammar index of each of its threads (in tree mode: the calls outside the tree).
    pub threads: Vec<u32>,
    /// Trace tree index of each of its threads ([`NO_TREE`] for none); empty when the run
    /// has no trace trees.
    pub trees: Vec<u32>,
    /// Communicators it belonged to.
    pub comms: Vec<Membership>,
    /// Calls per wrapped function id, as counted by the wrappers (a cross-check of the
    /// grammars); functions never called are left out.
    pub counts: Vec<(u16, u64)>,
    /// Host name.
    pub host: String,
    /// Per-thread compressed timelines (lossless timing only).
    pub timelines: Vec<Vec<u8>>,
}

/// Timing statistics of the ranks whose threads have exactly the grammars `threads` and the
/// trace trees `trees`: one behaviour class, pooled so the trace does not grow with the ranks
/// that share it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassTiming {
    /// The class: grammar index of each thread.
    pub threads: Vec<u32>,
    /// The class: trace tree index of each thread (empty without trees).
    pub trees: Vec<u32>,
    /// (global terminal, statistics over all the class's ranks), sorted by terminal.
    pub stats: Vec<(u32, Timing)>,
}

/// The merged record of the ranks `first_rank .. first_rank + ranks.len()`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Merged {
    /// `MPI_COMM_WORLD` rank of the first rank covered (0 in a whole trace).
    pub first_rank: u32,
    /// Global terminal → signature bytes.
    pub signatures: Vec<Vec<u8>>,
    /// Distinct grammars over global terminals.
    pub grammars: Vec<FrozenGrammar>,
    /// One entry per rank, in rank order.
    pub ranks: Vec<RankEntry>,
    /// Timing per behaviour class.
    pub timing: Vec<ClassTiming>,
    /// Trace trees, when the program carries a structure tree.
    pub forest: Option<Forest>,
}

impl Merged {
    /// The record of rank `rank` alone.
    pub fn of_rank(rank: u32, record: RankRecord, counts: Vec<(u16, u64)>, host: String) -> Merged {
        let mut grammars: Vec<FrozenGrammar> = Vec::new();
        let threads: Vec<u32> = record
            .grammars
            .into_iter()
            .map(|g| match grammars.iter().position(|known| *known == g) {
                Some(i) => i as u32,
                None => {
                    grammars.push(g);
                    grammars.len() as u32 - 1
                }
            })
            .collect();
        let stats = record
            .timing
            .into_iter()
            .enumerate()
            .filter(|(_, t)| t.count > 0)
            .map(|(t, timing)| (t as u32, timing))
            .collect();
        let mut forest = record.structure.map(Forest::new);
        let trees: Vec<u32> = match &mut forest {
            Some(f) => record
                .trees
                .into_iter()
                .map(|t| t.map_or(NO_TREE, |t| f.add(t)))
                .collect(),
            None => Vec::new(),
        };
        Merged {
            first_rank: rank,
            signatures: record.signatures,
            grammars,
            timing: vec![ClassTiming {
                threads: threads.clone(),
                trees: trees.clone(),
                stats,
            }],
            ranks: vec![RankEntry {
                threads,
                trees,
                comms: record.comms,
                counts,
                host,
                timelines: record.timelines,
            }],
            forest,
        }
    }

    /// Turns every trace tree into a grammar of the same calls (for records whose structure
    /// tree differs from the one they are merged with: two different programs in one run).
    fn flatten(&mut self) {
        let Some(forest) = self.forest.take() else {
            return;
        };
        let mut flattened: HashMap<(u32, u32), u32> = HashMap::new();
        for rank in &mut self.ranks {
            for (thread, &tree) in rank.threads.iter_mut().zip(&rank.trees) {
                if tree == NO_TREE {
                    continue;
                }
                let grammars = &mut self.grammars;
                *thread = *flattened.entry((tree, *thread)).or_insert_with(|| {
                    let mut g = Grammar::new();
                    forest
                        .expand(tree, &grammars[*thread as usize])
                        .for_each(|t| g.push(t));
                    grammars.push(g.freeze());
                    grammars.len() as u32 - 1
                });
            }
            rank.trees.clear();
        }
        for class in &mut self.timing {
            class.threads = class
                .threads
                .iter()
                .zip(class.trees.iter().chain(std::iter::repeat(&NO_TREE)))
                .map(|(&g, &t)| flattened.get(&(t, g)).copied().unwrap_or(g))
                .collect();
            class.trees.clear();
        }
    }

    /// Appends the ranks of `next`, which must start where `self` ends.
    pub fn absorb(&mut self, next: Merged) {
        debug_assert_eq!(
            next.first_rank as usize,
            self.first_rank as usize + self.ranks.len()
        );
        let mut next = next;
        let same_structure = match (&self.forest, &next.forest) {
            (Some(a), Some(b)) => a.structure == b.structure,
            _ => true,
        };
        if !same_structure {
            next.flatten();
        }
        let sig_map = intern(&mut self.signatures, next.signatures);
        let renumbered = next
            .grammars
            .iter()
            .map(|g| g.map_terminals(|t| sig_map[t as usize]));
        let grammar_map = intern(&mut self.grammars, renumbered);
        let renumber = |threads: &[u32]| -> Vec<u32> {
            threads.iter().map(|&g| grammar_map[g as usize]).collect()
        };
        let tree_map = match (next.forest, &mut self.forest) {
            (None, _) => Vec::new(),
            (Some(theirs), Some(ours)) => ours.absorb(theirs, &sig_map),
            (Some(theirs), None) => {
                let mut ours = Forest::new(theirs.structure.clone());
                let map = ours.absorb(theirs, &sig_map);
                self.forest = Some(ours);
                map
            }
        };
        let retree = |trees: &[u32]| -> Vec<u32> {
            trees
                .iter()
                .map(|&t| {
                    if t == NO_TREE {
                        t
                    } else {
                        tree_map[t as usize]
                    }
                })
                .collect()
        };
        for mut entry in next.ranks {
            entry.threads = renumber(&entry.threads);
            entry.trees = retree(&entry.trees);
            self.ranks.push(entry);
        }
        for class in next.timing {
            let threads = renumber(&class.threads);
            let trees = retree(&class.trees);
            let stats: Vec<(u32, Timing)> = class
                .stats
                .into_iter()
                .map(|(t, timing)| (sig_map[t as usize], timing))
                .collect();
            match self
                .timing
                .iter_mut()
                .find(|c| c.threads == threads && c.trees == trees)
            {
                Some(known) => known.stats = pool(&known.stats, stats),
                None => {
                    let mut stats = stats;
                    stats.sort_by_key(|(t, _)| *t);
                    self.timing.push(ClassTiming {
                        threads,
                        trees,
                        stats,
                    });
                }
            }
        }
    }

    /// The timing class of rank `rank` (0-based within this record), if it has one.
    pub fn class_timing(&self, rank: usize) -> Option<&ClassTiming> {
        let entry = self.ranks.get(rank)?;
        self.timing
            .iter()
            .find(|c| c.threads == entry.threads && c.trees == entry.trees)
    }
}

/// At most this many known and incoming items together are compared directly in [`intern`].
const SCAN_BELOW: usize = 8;

/// Appends each of `incoming` to `known` unless an equal item is there already, and returns
/// the index each incoming item has in `known`. The existing items are indexed by hash, not
/// copied: signature tables and grammars are most of a record.
pub(crate) fn intern<T: Hash + Eq>(
    known: &mut Vec<T>,
    incoming: impl IntoIterator<Item = T>,
) -> Vec<u32> {
    let incoming = incoming.into_iter();
    if known.len() + incoming.size_hint().1.unwrap_or(usize::MAX) <= SCAN_BELOW {
        // A few items (most trace-tree vertices): comparing beats building an index.
        return incoming
            .map(|item| match known.iter().position(|k| *k == item) {
                Some(i) => i as u32,
                None => {
                    known.push(item);
                    known.len() as u32 - 1
                }
            })
            .collect();
    }
    let hash = |item: &T| {
        let mut h = DefaultHasher::new();
        item.hash(&mut h);
        h.finish()
    };
    let mut by_hash: HashMap<u64, Vec<u32>> = HashMap::new();
    for (i, item) in known.iter().enumerate() {
        by_hash.entry(hash(item)).or_default().push(i as u32);
    }
    incoming
        .into_iter()
        .map(|item| {
            let bucket = by_hash.entry(hash(&item)).or_default();
            match bucket.iter().find(|&&i| known[i as usize] == item) {
                Some(&i) => i,
                None => {
                    let i = known.len() as u32;
                    known.push(item);
                    bucket.push(i);
                    i
                }
            }
        })
        .collect()
}

/// Two statistics lists joined terminal by terminal.
fn pool(known: &[(u32, Timing)], more: Vec<(u32, Timing)>) -> Vec<(u32, Timing)> {
    let mut by_terminal: std::collections::BTreeMap<u32, Timing> = known.iter().copied().collect();
    for (t, timing) in more {
        let slot = by_terminal.entry(t).or_default();
        *slot = slot.combined(&timing);
    }
    by_terminal.into_iter().collect()
}

/// One rank's input to [`merge`]: its record, its wrapper call counts (function id, calls) and
/// its host name.
pub type RankInput = (RankRecord, Vec<(u16, u64)>, String);

/// Merges whole per-rank records given in rank order from rank 0.
pub fn merge(records: Vec<RankInput>) -> Merged {
    let mut merged: Option<Merged> = None;
    for (rank, (record, counts, host)) in records.into_iter().enumerate() {
        let one = Merged::of_rank(rank as u32, record, counts, host);
        match &mut merged {
            Some(m) => m.absorb(one),
            None => merged = Some(one),
        }
    }
    merged.unwrap_or_default()
}

/// Merges ranks 0..7 as the pairwise rounds do: (0+1)+(2+3), (4+5)+6, then the two halves.
#[cfg(test)]
pub(crate) fn merge_seven_in_tree_order(input: impl Fn(u32) -> RankInput) -> Merged {
    let one = |i: u32| {
        let (r, c, h) = input(i);
        Merged::of_rank(i, r, c, h)
    };
    let pair = |a: u32, b: u32| {
        let mut m = one(a);
        m.absorb(one(b));
        m
    };
    let mut left = pair(0, 1);
    left.absorb(pair(2, 3));
    let mut right = pair(4, 5);
    right.absorb(one(6));
    left.absorb(right);
    left
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_compress::Grammar;

    fn frozen(seq: &[u32]) -> FrozenGrammar {
        let mut g = Grammar::new();
        seq.iter().for_each(|&t| g.push(t));
        g.freeze()
    }

    fn record(sigs: &[&str], seq: &[u32], ns: f64) -> RankInput {
        let mut timing = vec![Timing::default(); sigs.len()];
        for &t in seq {
            timing[t as usize].add(ns);
        }
        let record = RankRecord {
            signatures: sigs.iter().map(|s| s.as_bytes().to_vec()).collect(),
            timing,
            grammars: vec![frozen(seq)],
            comms: Vec::new(),
            timelines: Vec::new(),
            ..Default::default()
        };
        (record, vec![(0, seq.len() as u64)], "node".into())
    }

    #[test]
    fn same_behaviour_under_different_local_numbering_is_stored_once() {
        // Rank 0 met "send" first, rank 1 met "recv" first: same sequence of signatures.
        let r0 = record(&["send", "recv"], &[0, 1, 0, 1], 10.0);
        let r1 = record(&["recv", "send"], &[1, 0, 1, 0], 30.0);
        let r2 = record(&["send", "barrier"], &[0, 1], 5.0);
        let m = merge(vec![r0, r1, r2]);
        assert_eq!(
            m.signatures,
            vec![b"send".to_vec(), b"recv".to_vec(), b"barrier".to_vec()]
        );
        assert_eq!(m.grammars.len(), 2);
        let threads: Vec<_> = m.ranks.iter().map(|r| r.threads.clone()).collect();
        assert_eq!(threads, vec![vec![0], vec![0], vec![1]]);
        let decoded: Vec<u32> = m.grammars[1].expand().collect();
        assert_eq!(decoded, vec![0, 2]);
        // Ranks 0 and 1 share a class: 2 sends at 10 ns and 2 at 30 ns pooled.
        let send = m.class_timing(1).unwrap().stats[0].1;
        assert_eq!(
            (send.count, send.min, send.max, send.mean()),
            (4, 10.0, 30.0, 20.0)
        );
        assert_eq!(m.timing.len(), 2);
    }

    #[test]
    fn pairwise_rounds_give_the_sequential_result() {
        let make = |i: u32| {
            let seq: Vec<u32> = (0..20).map(|k| (k * (i % 3 + 1)) % 4).collect();
            record(&["a", "b", "c", "d"], &seq, f64::from(i))
        };
        let sequential = merge((0..7).map(make).collect());
        let left = merge_seven_in_tree_order(make);
        assert_eq!(left.ranks, sequential.ranks);
        assert_eq!(left.grammars, sequential.grammars);
        assert_eq!(left.signatures, sequential.signatures);
        assert_eq!(left.timing, sequential.timing);
    }

    #[test]
    fn terminal_counts_match_expansion() {
        let seq: Vec<u32> = (0..500).flat_map(|i| [1, 2, 2, (i % 3) as u32]).collect();
        let g = frozen(&seq);
        let mut expected: HashMap<u32, u64> = HashMap::new();
        for t in &seq {
            *expected.entry(*t).or_insert(0) += 1;
        }
        assert_eq!(g.terminal_counts(), expected);
    }
}
