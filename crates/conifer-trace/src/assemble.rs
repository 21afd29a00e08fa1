//! Combines the ranks' records into one trace: one global signature table, each rank's
//! grammars renumbered to it, identical grammars stored once.

use crate::rank_record::{Membership, RankRecord, Timing};
use conifer_compress::{FrozenGrammar, Symbol};
use std::collections::HashMap;

/// The per-rank part of a trace, merged.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Merged {
    /// Global terminal → signature bytes.
    pub signatures: Vec<Vec<u8>>,
    /// Distinct grammars over global terminals.
    pub grammars: Vec<FrozenGrammar>,
    /// Rank → grammar index of each of its threads.
    pub rank_grammars: Vec<Vec<u32>>,
    /// Rank → communicators it belongs to.
    pub comms: Vec<Vec<Membership>>,
    /// Rank → (global terminal, timing) of each signature it used.
    pub timing: Vec<Vec<(u32, Timing)>>,
    /// Rank → per-thread compressed timelines (lossless timing only).
    pub timelines: Vec<Vec<Vec<u8>>>,
}

/// Merges the records of ranks `0..records.len()`, in rank order.
pub fn merge(records: Vec<RankRecord>) -> Merged {
    let mut merged = Merged::default();
    let mut global: HashMap<Vec<u8>, u32> = HashMap::new();
    let mut grammar_index: HashMap<FrozenGrammar, u32> = HashMap::new();
    for record in records {
        let map: Vec<u32> = record
            .signatures
            .into_iter()
            .map(|sig| {
                let next = merged.signatures.len() as u32;
                *global.entry(sig.clone()).or_insert_with(|| {
                    merged.signatures.push(sig);
                    next
                })
            })
            .collect();
        let threads = record
            .grammars
            .iter()
            .map(|g| {
                let renumbered = g.map_terminals(|t| map[t as usize]);
                let next = merged.grammars.len() as u32;
                *grammar_index.entry(renumbered.clone()).or_insert_with(|| {
                    merged.grammars.push(renumbered);
                    next
                })
            })
            .collect();
        merged.rank_grammars.push(threads);
        merged.comms.push(record.comms);
        merged
            .timing
            .push(map.iter().copied().zip(record.timing).collect());
        merged.timelines.push(record.timelines);
    }
    merged
}

/// How often each terminal occurs in a grammar's expansion, computed from the rules.
pub fn terminal_counts(grammar: &FrozenGrammar) -> HashMap<u32, u64> {
    fn rule_counts(
        g: &FrozenGrammar,
        rule: usize,
        memo: &mut Vec<Option<HashMap<u32, u64>>>,
    ) -> HashMap<u32, u64> {
        if let Some(done) = &memo[rule] {
            return done.clone();
        }
        let mut counts = HashMap::new();
        for item in &g.rules()[rule] {
            match item.symbol {
                Symbol::Terminal(t) => *counts.entry(t).or_insert(0) += item.exponent,
                Symbol::Rule(r) => {
                    for (t, n) in rule_counts(g, r as usize, memo) {
                        *counts.entry(t).or_insert(0) += n * item.exponent;
                    }
                }
            }
        }
        memo[rule] = Some(counts.clone());
        counts
    }
    if grammar.rules().is_empty() {
        return HashMap::new();
    }
    let mut memo = vec![None; grammar.rules().len()];
    rule_counts(grammar, 0, &mut memo)
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

    fn record(sigs: &[&str], seq: &[u32]) -> RankRecord {
        RankRecord {
            signatures: sigs.iter().map(|s| s.as_bytes().to_vec()).collect(),
            timing: vec![Timing::default(); sigs.len()],
            grammars: vec![frozen(seq)],
            comms: Vec::new(),
            timelines: Vec::new(),
        }
    }

    #[test]
    fn same_behaviour_under_different_local_numbering_is_stored_once() {
        // Rank 0 met "send" first, rank 1 met "recv" first: same sequence of signatures.
        let r0 = record(&["send", "recv"], &[0, 1, 0, 1]);
        let r1 = record(&["recv", "send"], &[1, 0, 1, 0]);
        let r2 = record(&["send", "barrier"], &[0, 1]);
        let m = merge(vec![r0, r1, r2]);
        assert_eq!(
            m.signatures,
            vec![b"send".to_vec(), b"recv".to_vec(), b"barrier".to_vec()]
        );
        assert_eq!(m.grammars.len(), 2);
        assert_eq!(m.rank_grammars, vec![vec![0], vec![0], vec![1]]);
        let decoded: Vec<u32> = m.grammars[1].expand().collect();
        assert_eq!(decoded, vec![0, 2]);
    }

    #[test]
    fn terminal_counts_match_expansion() {
        let seq: Vec<u32> = (0..500).flat_map(|i| [1, 2, 2, (i % 3) as u32]).collect();
        let g = frozen(&seq);
        let mut expected: HashMap<u32, u64> = HashMap::new();
        for t in &seq {
            *expected.entry(*t).or_insert(0) += 1;
        }
        assert_eq!(terminal_counts(&g), expected);
    }
}
