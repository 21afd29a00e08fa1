//! Combines ranks' records into one: one global signature table, each rank's grammars
//! renumbered to it, identical grammars stored once, timing statistics pooled per timing
//! family over all ranks (see [`conifer_format::timing`]). [`absorb`] joins two adjacent rank
//! ranges; the tracer calls it in log2 P pairwise rounds over MPI, `conifer merge` folds
//! partial files with [`merge`].

use crate::forest_build::{absorb_forest, add_tree};
use crate::intern::intern;
use conifer_compress::fast_hash::FastMap;
use conifer_compress::{FrozenGrammar, Grammar};
use conifer_format::forest::{Forest, NO_TREE};
use conifer_format::rank_record::RankRecord;
use conifer_format::stored::{FamilyTiming, RankEntry, TraceRecord, NO_STREAMS};
use conifer_format::timing::{timing_family, RankTime};

/// The record of rank `rank` alone.
pub fn of_rank(
    rank: u32,
    mut record: RankRecord,
    counts: Vec<(u16, u64)>,
    host: String,
) -> TraceRecord {
    crate::stream_extract::extract(&mut record);
    let mut streams = Vec::new();
    let stream_ids = intern(&mut streams, std::mem::take(&mut record.streams));
    let mut grammars: Vec<FrozenGrammar> = Vec::new();
    let threads = intern(&mut grammars, record.grammars);
    let time = RankTime::of(&record.timing);
    let mut timing = Vec::new();
    let mut histograms = record.histograms.into_iter();
    pool_timing(
        &mut timing,
        &record.signatures,
        record
            .timing
            .into_iter()
            .enumerate()
            .map(|(t, stats)| (t, stats, histograms.next()))
            .filter(|(_, t, _)| t.duration.count > 0)
            .map(|(t, stats, histogram)| FamilyTiming {
                terminal: t as u32,
                stats,
                histogram,
            }),
    );
    let mut forest = record.structure.map(Forest::new);
    let trees: Vec<u32> = match &mut forest {
        Some(f) => record
            .trees
            .into_iter()
            .map(|t| t.map_or(NO_TREE, |t| add_tree(f, t)))
            .collect(),
        None => Vec::new(),
    };
    TraceRecord {
        first_rank: rank,
        signatures: record.signatures,
        grammars,
        timing,
        ranks: vec![RankEntry {
            threads,
            trees,
            comms: record.comms,
            counts,
            host,
            // The recorder sets its host's processors (`conifer-preload`'s run_info).
            cores: 0,
            timelines: record.timelines,
            time,
            streams: stream_ids,
            clock: record.clock,
            totals: record.totals,
            recorder_times: record.recorder_times,
        }],
        forest,
        streams,
        rank_precision: None,
    }
}

/// Turns every trace tree into a grammar of the same calls (for records whose structure
/// tree differs from the one they are merged with: two different programs in one run).
fn flatten(record: &mut TraceRecord) {
    let Some(forest) = record.forest.take() else {
        return;
    };
    let mut flattened: FastMap<(u32, u32), u32> = FastMap::default();
    for rank in &mut record.ranks {
        for (thread, &tree) in rank.threads.iter_mut().zip(&rank.trees) {
            if tree == NO_TREE {
                continue;
            }
            let grammars = &mut record.grammars;
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
}

/// Appends the ranks of `next` to `merged`; `next` must start where `merged` ends.
pub fn absorb(merged: &mut TraceRecord, next: TraceRecord) {
    debug_assert_eq!(
        next.first_rank as usize,
        merged.first_rank as usize + merged.ranks.len()
    );
    let mut next = next;
    // Ranks read with an error keep saying so, and so the whole record does.
    merged.rank_precision = merged.rank_precision.or(next.rank_precision);
    let same_structure = match (&merged.forest, &next.forest) {
        (Some(a), Some(b)) => a.structure == b.structure,
        _ => true,
    };
    if !same_structure {
        flatten(&mut next);
    }
    let sig_map = intern(&mut merged.signatures, next.signatures);
    let renumbered = next
        .grammars
        .iter()
        .map(|g| g.map_terminals(|t| sig_map[t as usize]));
    let grammar_map = intern(&mut merged.grammars, renumbered);
    let renumber = |threads: &[u32]| -> Vec<u32> {
        threads.iter().map(|&g| grammar_map[g as usize]).collect()
    };
    let tree_map = match (next.forest, &mut merged.forest) {
        (None, _) => Vec::new(),
        (Some(theirs), Some(ours)) => absorb_forest(ours, theirs, &sig_map),
        (Some(theirs), None) => {
            let mut ours = Forest::new(theirs.structure.clone());
            let map = absorb_forest(&mut ours, theirs, &sig_map);
            merged.forest = Some(ours);
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
    let stream_map = intern(
        &mut merged.streams,
        next.streams
            .iter()
            .map(|s| s.map_terminals(|t| sig_map[t as usize])),
    );
    for mut entry in next.ranks {
        entry.threads = renumber(&entry.threads);
        entry.trees = retree(&entry.trees);
        for s in &mut entry.streams {
            if *s != NO_STREAMS {
                *s = stream_map[*s as usize];
            }
        }
        merged.ranks.push(entry);
    }
    let theirs = next.timing.into_iter().map(|f| FamilyTiming {
        terminal: sig_map[f.terminal as usize],
        stats: f.stats,
        histogram: f.histogram,
    });
    pool_timing(&mut merged.timing, &merged.signatures, theirs);
}

/// Adds `more` to the family statistics `known` (both over the terminals of `signatures`),
/// joining entries of the same timing family.
pub(crate) fn pool_timing(
    known: &mut Vec<FamilyTiming>,
    signatures: &[Vec<u8>],
    more: impl IntoIterator<Item = FamilyTiming>,
) {
    let mut index: FastMap<Vec<u8>, usize> = known
        .iter()
        .enumerate()
        .map(|(i, f)| (timing_family(&signatures[f.terminal as usize]), i))
        .collect();
    for family in more {
        let key = timing_family(&signatures[family.terminal as usize]);
        match index.get(&key) {
            Some(&i) => {
                let known = &mut known[i];
                known.stats = known.stats.combined(&family.stats);
                match (&mut known.histogram, family.histogram) {
                    (Some(h), Some(more)) => h.absorb(&more),
                    (h @ None, more) => *h = more,
                    (Some(_), None) => {}
                }
            }
            None => {
                index.insert(key, known.len());
                known.push(family);
            }
        }
    }
}

/// One rank's input to [`merge`]: its record, its wrapper call counts (function id, calls) and
/// its host name.
pub type RankInput = (RankRecord, Vec<(u16, u64)>, String);

/// Merges whole per-rank records given in rank order from rank 0.
pub fn merge(records: Vec<RankInput>) -> TraceRecord {
    let mut merged: Option<TraceRecord> = None;
    for (rank, (record, counts, host)) in records.into_iter().enumerate() {
        let one = of_rank(rank as u32, record, counts, host);
        match &mut merged {
            Some(m) => absorb(m, one),
            None => merged = Some(one),
        }
    }
    merged.unwrap_or_default()
}

/// Drops from `modules` the paths no signature of `signatures` names.
pub fn keep_named_modules(modules: &mut Vec<String>, signatures: &[Vec<u8>]) {
    let named: std::collections::BTreeSet<u32> = signatures
        .iter()
        .filter_map(|s| conifer_format::signature::Signature::parse(s)?.caller)
        .map(|c| c.module)
        .collect();
    modules.retain(|m| named.contains(&conifer_format::caller::module_key(m)));
}

/// Merges ranks 0..7 as the pairwise rounds do: (0+1)+(2+3), (4+5)+6, then the two halves.
#[cfg(test)]
pub(crate) fn merge_seven_in_tree_order(input: impl Fn(u32) -> RankInput) -> TraceRecord {
    let one = |i: u32| {
        let (r, c, h) = input(i);
        of_rank(i, r, c, h)
    };
    let pair = |a: u32, b: u32| {
        let mut m = one(a);
        absorb(&mut m, one(b));
        m
    };
    let mut left = pair(0, 1);
    absorb(&mut left, pair(2, 3));
    let mut right = pair(4, 5);
    absorb(&mut right, one(6));
    absorb(&mut left, right);
    left
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_compress::Grammar;
    use conifer_format::timing::CallTiming;

    fn frozen(seq: &[u32]) -> FrozenGrammar {
        let mut g = Grammar::new();
        seq.iter().for_each(|&t| g.push(t));
        g.freeze()
    }

    fn record(sigs: &[&str], seq: &[u32], ns: f64) -> RankInput {
        let mut timing = vec![CallTiming::default(); sigs.len()];
        for &t in seq {
            timing[t as usize].add(1.0, ns);
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
        // Every rank's sends pooled: 2 at 10 ns, 2 at 30 ns, 1 at 5 ns.
        let index = m.timing_index();
        let send = m.timing[index[0].unwrap() as usize].stats.duration;
        assert_eq!(
            (send.count, send.min, send.max, send.mean()),
            (5, 5.0, 30.0, 17.0)
        );
        assert_eq!(m.timing.len(), 3);
        // Rank 1: 4 calls of 30 ns in MPI, 1 ns before each.
        assert_eq!(m.ranks[1].time.mpi_ns, 120.0);
        assert_eq!(m.ranks[1].time.compute_ns, 4.0);
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
        let mut expected: FastMap<u32, u64> = FastMap::default();
        for t in &seq {
            *expected.entry(*t).or_insert(0) += 1;
        }
        assert_eq!(g.terminal_counts(), expected);
    }
}
