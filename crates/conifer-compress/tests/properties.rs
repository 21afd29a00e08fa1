//! Property tests: any sequence round-trips through the grammar and its
//! encoding with the invariants intact, and loops compress to a size that
//! does not depend on their trip count.

use conifer_compress::{FrozenGrammar, Grammar};
use proptest::prelude::*;

fn build(sequence: &[u32]) -> Grammar {
    let mut grammar = Grammar::new();
    for &terminal in sequence {
        grammar.push(terminal);
    }
    grammar
}

/// Everything that must hold for any input sequence.
fn assert_round_trip(sequence: &[u32]) -> FrozenGrammar {
    let grammar = build(sequence);
    assert_eq!(grammar.len(), sequence.len() as u64);
    let frozen = grammar.freeze();
    assert_eq!(frozen.len(), sequence.len() as u64);
    let n = sequence.len();
    assert_eq!(frozen.expand().size_hint(), (n, Some(n)));
    assert!(frozen.expand().eq(sequence.iter().copied()));
    if let Err(violation) = frozen.check_invariants() {
        panic!("{violation}: {:?}", frozen.rules());
    }
    let bytes = frozen.to_bytes();
    let decoded = FrozenGrammar::from_bytes(&bytes).expect("own encoding decodes");
    assert_eq!(decoded, frozen);
    assert_eq!(decoded.to_bytes(), bytes);
    assert_eq!(
        build(sequence).freeze().to_bytes(),
        bytes,
        "not deterministic"
    );
    frozen
}

/// `for i in 0..n { a; for j in 0..m { b c }; d }`
fn nested_loops(n: usize, m: usize) -> Vec<u32> {
    let mut sequence = Vec::new();
    for _ in 0..n {
        sequence.push(10);
        for _ in 0..m {
            sequence.extend([11, 12]);
        }
        sequence.push(13);
    }
    sequence
}

/// Size of the frozen grammar: (rules, right-hand-side items).
fn shape(frozen: &FrozenGrammar) -> (usize, usize) {
    (frozen.rule_count(), frozen.item_count())
}

fn random_sequence() -> impl Strategy<Value = Vec<u32>> {
    (1u32..=8).prop_flat_map(|alphabet| prop::collection::vec(0..alphabet, 0..2000))
}

/// A random loop nest: terminals, and loops of a random trip count around
/// a random body.
#[derive(Clone, Debug)]
enum Program {
    Call(u32),
    Loop(usize, Vec<Program>),
}

impl Program {
    fn run(&self, out: &mut Vec<u32>) {
        match self {
            Program::Call(terminal) => out.push(*terminal),
            Program::Loop(trips, body) => {
                for _ in 0..*trips {
                    body.iter().for_each(|p| p.run(out));
                }
            }
        }
    }
}

fn program() -> impl Strategy<Value = Vec<Program>> {
    let leaf = (0u32..6).prop_map(Program::Call);
    let tree = leaf.prop_recursive(4, 40, 5, |inner| {
        (1usize..6, prop::collection::vec(inner, 1..5))
            .prop_map(|(trips, body)| Program::Loop(trips, body))
    });
    prop::collection::vec(tree, 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_loop_nests_round_trip(programs in program()) {
        let mut sequence = Vec::new();
        programs.iter().for_each(|p| p.run(&mut sequence));
        sequence.truncate(20_000);
        assert_round_trip(&sequence);
    }

    #[test]
    fn random_sequences_round_trip(sequence in random_sequence()) {
        assert_round_trip(&sequence);
    }

    #[test]
    fn skewed_sequences_round_trip(
        runs in prop::collection::vec((0u32..4, 1usize..6), 0..400)
    ) {
        let sequence: Vec<u32> = runs
            .iter()
            .flat_map(|&(terminal, count)| std::iter::repeat_n(terminal, count))
            .collect();
        assert_round_trip(&sequence);
    }

    #[test]
    fn repeated_random_bodies_round_trip(
        body in prop::collection::vec(0u32..5, 1..12),
        times in 1usize..60,
        tail in prop::collection::vec(0u32..5, 0..12),
    ) {
        let mut sequence = body.repeat(times);
        sequence.extend(tail);
        assert_round_trip(&sequence);
    }

    #[test]
    fn nested_loops_do_not_grow_with_trip_count(n in 2usize..40, m in 0usize..8) {
        let small = assert_round_trip(&nested_loops(n, m));
        let large = assert_round_trip(&nested_loops(10 * n, m));
        prop_assert_eq!(shape(&small), shape(&large));
        prop_assert!(large.to_bytes().len() <= small.to_bytes().len() + 2);
    }
}

#[test]
fn loop_size_is_independent_of_trip_count() {
    let bodies: [&[u32]; 4] = [
        &[1, 2, 3, 4, 5],
        &[1, 2, 1, 2, 3],
        &[7, 7, 7, 8],
        &[1, 2, 3, 2, 3, 3, 4, 1, 2, 3, 2, 3, 5],
    ];
    for body in bodies {
        let shapes: Vec<_> = [10, 1_000, 100_000]
            .into_iter()
            .map(|times| {
                let grammar = build(&body.repeat(times));
                let frozen = grammar.freeze();
                frozen.check_invariants().unwrap();
                assert_eq!(frozen.len(), (body.len() * times) as u64);
                (grammar.rule_count(), grammar.item_count())
            })
            .collect();
        assert!(
            shapes.windows(2).all(|w| w[0] == w[1]),
            "{body:?}: {shapes:?}"
        );
    }
}

#[test]
fn equal_sequences_give_equal_grammars() {
    let sequence = nested_loops(50, 3);
    let one = build(&sequence).freeze();
    assert_eq!(one, build(&sequence).freeze());
    let mut longer = sequence.clone();
    longer.push(10);
    assert_ne!(one, build(&longer).freeze());
}
