//! Checks of the online structure itself: links, reference counts and the
//! digram index agree with the right-hand sides after every push.

use proptest::prelude::*;

use super::*;
use crate::frozen::{Item, Symbol};

impl Grammar {
    /// Panics unless every live rule is a well-formed circular list, every
    /// reference count matches, and the index holds exactly one entry per
    /// digram, pointing at an occurrence of it.
    fn assert_consistent(&self) {
        let mut refs = vec![0u32; self.rules.len()];
        let mut digrams = 0;
        for (rule, slot) in self.rules.iter().enumerate() {
            if self.free_rules.contains(&(rule as u32)) {
                continue;
            }
            let guard = slot.guard;
            assert_eq!(self.nodes[guard as usize].sym, GUARD_TAG | rule as u64);
            let mut node = self.nodes[guard as usize].next;
            let mut prev = guard;
            while node != guard {
                let n = self.nodes[node as usize];
                assert!(is_item(n.sym), "rule {rule}: non-item node {node}");
                assert_eq!(n.prev, prev, "rule {rule}: broken back link");
                assert!(n.exp >= 1);
                if let Some(r) = rule_of(n.sym) {
                    refs[r as usize] += 1;
                }
                if let Some(key) = self.digram(node) {
                    digrams += 1;
                    let indexed = self
                        .table
                        .get(key.hash(), |other| self.digram(other) == Some(key))
                        .expect("digram not indexed");
                    assert_eq!(self.digram(indexed), Some(key), "index entry is stale");
                }
                prev = node;
                node = n.next;
            }
            assert_eq!(self.nodes[guard as usize].prev, prev);
        }
        for (rule, slot) in self.rules.iter().enumerate() {
            if !self.free_rules.contains(&(rule as u32)) {
                assert_eq!(slot.refs, refs[rule], "rule {rule}: reference count");
            }
        }
        assert_eq!(self.table.len(), digrams, "index holds extra entries");
    }
}

fn consistent_after_each_push(sequence: &[u32]) {
    let mut grammar = Grammar::new();
    for &terminal in sequence {
        grammar.push(terminal);
        grammar.assert_consistent();
    }
    let frozen = grammar.freeze();
    assert!(frozen.expand().eq(sequence.iter().copied()));
    frozen.check_invariants().unwrap();
}

#[test]
fn structure_stays_consistent_on_pseudo_random_input() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for alphabet in 1..6u64 {
        let sequence: Vec<u32> = (0..600)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % alphabet) as u32
            })
            .collect();
        consistent_after_each_push(&sequence);
    }
}

#[test]
fn structure_stays_consistent_on_nested_loops() {
    let mut sequence = Vec::new();
    for i in 0..20 {
        sequence.push(0);
        for _ in 0..(i % 4) {
            sequence.extend([1, 2, 1]);
        }
        sequence.push(3);
    }
    consistent_after_each_push(&sequence);
}

/// Sequences made of runs of short random words, so that rules, merges and
/// the repeat fast path all occur.
fn wordy_sequence() -> impl Strategy<Value = Vec<u32>> {
    let word = prop::collection::vec(0u32..4, 1..5);
    prop::collection::vec((word, 1usize..5), 0..40).prop_map(|runs| {
        runs.iter()
            .flat_map(|(word, times)| word.repeat(*times))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn structure_stays_consistent(
        sequence in prop_oneof![prop::collection::vec(0u32..5, 0..300), wordy_sequence()]
    ) {
        consistent_after_each_push(&sequence);
    }
}

// Hand-made states reaching branches of the general operations that pushes
// rarely or never reach: a new digram equal to a whole rule body while the
// indexed occurrence is not, and merges on every side of a substitution or
// inlining.

const A: u64 = 0;
const B: u64 = 1;
const C: u64 = 2;
const D: u64 = 3;

fn reference(rule: u32) -> u64 {
    RULE_TAG | u64::from(rule)
}

/// Sets `rule`'s right-hand side to `items` (symbol, exponent) without
/// indexing anything, and returns the new nodes.
fn set_body(grammar: &mut Grammar, rule: u32, items: &[(u64, u64)]) -> Vec<u32> {
    let guard = grammar.rules[rule as usize].guard;
    let mut prev = guard;
    let nodes = items
        .iter()
        .map(|&(sym, exp)| {
            let node = grammar.new_node(sym, exp);
            grammar.link(prev, node);
            prev = node;
            node
        })
        .collect();
    grammar.link(prev, guard);
    nodes
}

/// Checks the digrams starting at `nodes`, left to right.
fn check_in_order(grammar: &mut Grammar, nodes: &[u32]) {
    grammar.pending.extend(nodes.iter().rev());
    grammar.settle();
}

fn item(sym: u64, exponent: u64) -> Item {
    let symbol = match rule_of(sym) {
        Some(rule) => Symbol::Rule(rule),
        None => Symbol::Terminal(sym as u32),
    };
    Item { symbol, exponent }
}

fn assert_rules(grammar: &Grammar, expected: &[&[(u64, u64)]]) {
    grammar.assert_consistent();
    let expected: Vec<Vec<Item>> = expected
        .iter()
        .map(|body| body.iter().map(|&(sym, exp)| item(sym, exp)).collect())
        .collect();
    assert_eq!(grammar.freeze().rules(), expected);
}

#[test]
fn new_digram_that_is_a_whole_rule_body_takes_over_the_indexed_one() {
    let mut grammar = Grammar::new();
    let rule = grammar.new_rule();
    let start = set_body(
        &mut grammar,
        0,
        &[(C, 1), (A, 1), (B, 1), (D, 1), (reference(rule), 1), (C, 2)],
    );
    let body = set_body(&mut grammar, rule, &[(A, 1), (B, 1)]);
    check_in_order(&mut grammar, &start);
    check_in_order(&mut grammar, &body[..1]);
    let r = reference(1);
    assert_rules(
        &grammar,
        &[&[(C, 1), (r, 1), (D, 1), (r, 1), (C, 2)], &[(A, 1), (B, 1)]],
    );
}

#[test]
fn substitution_merges_with_a_reference_on_its_right() {
    let mut grammar = Grammar::new();
    let rule = grammar.new_rule();
    let start = set_body(&mut grammar, 0, &[(A, 1), (B, 1), (reference(rule), 3)]);
    let body = set_body(&mut grammar, rule, &[(A, 1), (B, 1)]);
    check_in_order(&mut grammar, &body);
    check_in_order(&mut grammar, &start);
    assert_rules(&grammar, &[&[(reference(1), 4)], &[(A, 1), (B, 1)]]);
}

#[test]
fn inlining_merges_on_both_sides() {
    for (start_items, body_items, expected) in [
        (
            vec![(A, 2), (D, 1)],
            vec![(A, 1), (C, 1)],
            vec![(A, 3), (C, 1)],
        ),
        (
            vec![(D, 1), (C, 1)],
            vec![(A, 1), (C, 3)],
            vec![(A, 1), (C, 4)],
        ),
        (
            vec![(B, 1), (D, 1), (B, 2)],
            vec![(B, 1), (C, 1), (B, 1)],
            vec![(B, 2), (C, 1), (B, 3)],
        ),
        (vec![(B, 1), (D, 1), (B, 2)], vec![(B, 4)], vec![(B, 7)]),
    ] {
        let mut grammar = Grammar::new();
        let rule = grammar.new_rule();
        let start_items: Vec<_> = start_items
            .into_iter()
            .map(|(sym, exp)| {
                if sym == D {
                    (reference(rule), exp)
                } else {
                    (sym, exp)
                }
            })
            .collect();
        let start = set_body(&mut grammar, 0, &start_items);
        let body = set_body(&mut grammar, rule, &body_items);
        check_in_order(&mut grammar, &body);
        check_in_order(&mut grammar, &start);
        let at = start_items
            .iter()
            .position(|&(sym, _)| sym != A && sym != B && sym != C);
        grammar.underused.push(start[at.unwrap()]);
        grammar.settle();
        assert_rules(&grammar, &[&expected]);
    }
}

#[test]
fn runs_of_kept_terminals_spell_the_filtered_expansion() {
    // Nested loops with a terminal (7) only in some iterations, and long runs.
    let mut grammar = Grammar::new();
    for i in 0..40u32 {
        for _ in 0..5 {
            grammar.push(1);
            grammar.push(2);
        }
        if i % 3 == 0 {
            (0..4).for_each(|_| grammar.push(7));
        }
        grammar.push(3 + i % 2);
    }
    let frozen = grammar.freeze();
    for keep in [|t: u32| t == 7, |t: u32| t != 2, |_: u32| false] {
        let want: Vec<u32> = frozen.expand().filter(|&t| keep(t)).collect();
        let mut got = Vec::new();
        frozen.for_each_run(keep, |t, n| (0..n).for_each(|_| got.push(t)));
        assert_eq!(got, want);
    }
}

/// Rules whose kept runs are remembered (few) and rules walked (many, past `SHORT_RUNS`), in
/// one grammar: pseudo-random calls with loops of many kept calls.
#[test]
fn runs_of_kept_terminals_from_remembered_and_walked_rules() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m) as u32
    };
    let mut grammar = Grammar::new();
    let mut sequence = Vec::new();
    for _ in 0..200 {
        let body: Vec<u32> = (0..1 + next(60)).map(|_| next(6)).collect();
        for _ in 0..1 + next(4) {
            body.iter().for_each(|&t| {
                grammar.push(t);
                sequence.push(t);
            });
        }
    }
    let frozen = grammar.freeze();
    assert!(frozen.expand().eq(sequence.iter().copied()));
    for keep in [
        |t: u32| t.is_multiple_of(2),
        |t: u32| t == 5,
        |t: u32| t != 3,
    ] {
        let want: Vec<u32> = sequence.iter().copied().filter(|&t| keep(t)).collect();
        let mut got = Vec::new();
        frozen.for_each_run(keep, |t, n| (0..n).for_each(|_| got.push(t)));
        assert_eq!(got, want);
    }
}

#[test]
fn into_frozen_equals_freeze_with_terminals_held_back() {
    // Ends inside a loop body's copy and with a run of one terminal: both held back.
    for tail in [&[1u32, 2][..], &[1, 2, 3, 3, 3][..], &[][..]] {
        let mut grammar = Grammar::new();
        for _ in 0..10 {
            [1, 2, 3].iter().for_each(|&t| grammar.push(t));
        }
        tail.iter().for_each(|&t| grammar.push(t));
        let frozen = grammar.freeze();
        assert_eq!(grammar.into_frozen(), frozen);
    }
}
