use super::builder::SeriesBuilder;
use super::*;
use crate::grammar::Grammar;
use proptest::prelude::*;

fn build(numeric: bool, window: usize, values: &[u64]) -> Series {
    let mut b = SeriesBuilder::new(numeric, window);
    values.iter().for_each(|&v| b.push(v));
    b.snapshot()
}

fn round_trip(s: &Series) -> Series {
    let mut out = Vec::new();
    s.encode(&mut out);
    let mut bytes = out.as_slice();
    let back = Series::decode(&mut bytes).expect("decodes");
    assert!(bytes.is_empty());
    back
}

#[test]
fn constant_counts_are_one_run() {
    let s = build(true, 4, &[5; 1000]);
    assert_eq!(
        s.pieces,
        vec![Segment::Run(Run {
            start: 5,
            stride: 0,
            len: 1000
        })]
    );
    assert_eq!(s.summary().sum, 5000);
}

#[test]
fn triangular_loop_counts_are_one_strided_run() {
    // CYPRESS Figure 10: inner loop runs 0, 1, …, k-1 times: <0, k-1, 1>.
    let values: Vec<u64> = (0..100).collect();
    let s = build(true, 4, &values);
    assert_eq!(s.size(), 2, "one piece, used once");
    assert!(s.iter().eq(values.iter().copied()));
}

#[test]
fn branch_taken_every_third_iteration_is_one_cycle() {
    let values: Vec<u64> = (0..300).map(|i| u64::from(i % 3 == 0)).collect();
    let s = build(true, 4, &values);
    assert!(s.size() <= 3, "{:?}", s);
    assert!(s.iter().eq(values.iter().copied()));
}

#[test]
fn alternating_symbols_fold_with_a_window_of_two() {
    let values: Vec<u64> = (0..200).map(|i| [7, 9][i % 2]).collect();
    let s = build(false, 2, &values);
    assert_eq!(s.size(), 2, "{:?}", s);
    // Without the window's cycle, the grammar over pieces still finds the repetition.
    let one = build(false, 1, &values);
    assert!(one.size() <= 5, "{one:?}");
    assert!(s.iter().eq(values.iter().copied()));
}

#[test]
fn repetitions_of_repetitions_stay_small() {
    // A nested loop whose inner pattern depends on the outer index, repeated 50 times:
    // (1,0)×3 then 0×5, (1,0)×2 then 0×7.
    let mut values = Vec::new();
    for _ in 0..50 {
        for (pairs, zeros) in [(3, 5), (2, 7)] {
            for _ in 0..pairs {
                values.extend([1, 0]);
            }
            values.extend(std::iter::repeat_n(0, zeros));
        }
    }
    let s = build(true, 4, &values);
    assert!(s.size() <= 16, "{s:?}");
    assert!(s.iter().eq(values.iter().copied()));
    assert_eq!(s.len(), values.len() as u64);
    assert_eq!(s.summary().sum, values.iter().sum::<u64>());
}

#[test]
fn counts_follow_rules_shared_by_later_rules() {
    // Sequitur reuses a rule from two others: lengths and sums must count it twice.
    let mut values = Vec::new();
    for i in 0..40u64 {
        values.extend([1, 5, 1, 5, 9, 2, 1, 5, 1, 5, 7, i % 4]);
    }
    let s = build(false, 1, &values);
    assert_eq!(s.len(), values.len() as u64);
    assert_eq!(s.summary().sum, values.iter().sum::<u64>());
    let mut counts = std::collections::BTreeMap::new();
    values
        .iter()
        .for_each(|&v| *counts.entry(v).or_insert(0u64) += 1);
    assert_eq!(s.value_counts(), counts.into_iter().collect::<Vec<_>>());
}

#[test]
fn long_periods_fold_within_the_window() {
    // A V-cycle's messages: 12 different signatures per iteration, 20 iterations.
    let values: Vec<u64> = (0..240).map(|i| (i % 12) * 10).collect();
    assert_eq!(build(false, 16, &values).size(), 2);
    // A window too small for the period: the grammar over pieces finds it instead.
    let small = build(false, 8, &values);
    assert!(small.size() <= 30, "{small:?}");
    assert!(small.iter().eq(values.iter().copied()));
    assert!(build(false, 16, &values).iter().eq(values.iter().copied()));
}

#[test]
fn symbolic_series_never_stride() {
    let s = build(false, 4, &[1, 2, 3, 4, 5]);
    assert!(s.pieces.iter().all(|seg| match seg {
        Segment::Run(r) => r.stride == 0,
        Segment::Cycle { runs, .. } => runs.iter().all(|r| r.stride == 0),
    }));
    assert_eq!(
        s.value_counts(),
        vec![(1, 1), (2, 1), (3, 1), (4, 1), (5, 1)]
    );
}

#[test]
fn broken_cycles_and_push_n_keep_every_value() {
    let mut values = Vec::new();
    for i in 0..50u64 {
        values.extend([1, 2, 3]);
        if i % 7 == 0 {
            values.push(9);
        }
    }
    values.extend([0; 40]);
    let mut b = SeriesBuilder::new(true, 3);
    values[..values.len() - 40].iter().for_each(|&v| b.push(v));
    b.push_n(0, 40);
    let s = b.snapshot();
    assert!(s.iter().eq(values.iter().copied()));
    assert_eq!(s.len(), values.len() as u64);
    assert_eq!(round_trip(&s), s);
}

#[test]
fn renaming_symbols_keeps_the_shape() {
    let values: Vec<u64> = (0..90).map(|i| [4, 4, 8][i % 3]).collect();
    let s = build(false, 4, &values);
    let renamed = s.map_values(|v| v * 100);
    let direct = build(
        false,
        4,
        &values.iter().map(|v| v * 100).collect::<Vec<_>>(),
    );
    assert_eq!(renamed, direct);
}

#[test]
fn in_order_grammars_are_what_sequitur_builds() {
    for n in [0, 1, 2, 7] {
        let mut g = Grammar::new();
        (0..n as u32).for_each(|i| g.push(i));
        assert_eq!(in_order(n), g.freeze());
    }
}

#[test]
fn corrupt_encodings_are_errors() {
    let s = build(true, 4, &[1, 2, 3, 9, 9]);
    let mut out = Vec::new();
    s.encode(&mut out);
    for cut in 0..out.len() {
        let mut bytes = &out[..cut];
        assert!(Series::decode(&mut bytes).is_err());
    }
}

/// The symbolic form round-trips irregular terminals (one byte per single value: the random
/// peers of a call site) and cycles, and the general form still reads strided runs.
#[test]
fn symbolic_form_round_trips_and_is_one_byte_per_single_value() {
    let irregular = [5u64, 9, 2, 7, 7, 7, 3, 8, 1, 6, 4, 0];
    let cycling: Vec<u64> = (0..60).map(|i| [4, 6, 6, 9][i % 4]).collect();
    for values in [&irregular[..], &cycling[..]] {
        let s = build(false, 4, values);
        assert!(s.is_symbolic());
        let mut out = Vec::new();
        s.encode_symbolic(&mut out);
        let mut bytes = out.as_slice();
        let back = Series::decode_symbolic(&mut bytes).expect("decodes");
        assert!(bytes.is_empty());
        assert_eq!(back, s);
        assert!(back.iter().eq(values.iter().copied()));
    }
    // 10 pieces (7, 7, 7 is one run of 3): header 1, nine single values 1 byte each, the run
    // 2 bytes, the in-order grammar 1; the general form spends 4 bytes per piece.
    let s = build(false, 1, &irregular);
    let mut out = Vec::new();
    s.encode_symbolic(&mut out);
    assert_eq!(out.len(), 1 + 9 + 2 + 1, "{out:?}");
    let mut general = Vec::new();
    s.encode(&mut general);
    assert_eq!(general.len(), 1 + 10 * 4 + 1);
    let strided = build(true, 4, &[1, 2, 3, 4, 5]);
    assert!(!strided.is_symbolic());
}

#[test]
fn binary_counter_bits_fold_into_one_cycle() {
    // A branch per level of a 4-level loop taken by a bit of the outer index: period 64
    // values, in which the same runs occur many times (the latest earlier occurrence of the
    // last run is not one period back) and short cycles form inside the period.
    let bits: Vec<u64> = (0..100u64 * 16)
        .flat_map(|i| (0..4).map(move |level| (i >> level) & 1))
        .collect();
    for numeric in [true, false] {
        let s = build(numeric, 64, &bits);
        let periods: Vec<u64> = s
            .pieces
            .iter()
            .filter_map(|p| match p {
                Segment::Cycle { runs, repeat }
                    if runs.iter().map(|r| r.len).sum::<u64>() == 64 =>
                {
                    Some(*repeat)
                }
                _ => None,
            })
            .collect();
        assert_eq!(periods.len(), 1, "{s:?}");
        assert!(periods[0] >= 97, "{s:?}");
        assert!(s.size() < 60, "{s:?}");
        assert!(s.iter().eq(bits.iter().copied()));
    }
}

#[test]
fn binary_counter_signatures_fold_into_one_cycle() {
    // The call site under that branch: the level's datatype, one signature per level, for
    // each bit set. 32 calls per period of 16 outer iterations, each signature 8 times.
    let terminals: Vec<u64> = (0..250u64 * 16)
        .flat_map(|i| (0..4).filter(move |l| (i >> l) & 1 == 1).map(|l| 3 + l))
        .collect();
    let s = build(false, 64, &terminals);
    let periods: Vec<u64> = s
        .pieces
        .iter()
        .filter_map(|p| match p {
            Segment::Cycle { runs, repeat } if runs.len() == 32 => Some(*repeat),
            _ => None,
        })
        .collect();
    assert_eq!(periods.len(), 1, "{s:?}");
    assert!(periods[0] >= 247, "{s:?}");
    assert!(s.iter().eq(terminals.iter().copied()));
}

/// Values made of cycles (bodies of 1–6 values over a small alphabet, repeated 1–30 times,
/// some bodies recurring later) broken by stray values.
fn cyclic_values() -> impl Strategy<Value = Vec<u64>> {
    let body = proptest::collection::vec(0u64..4, 1..6);
    let block = (body, 1usize..30, proptest::option::of(0u64..6));
    proptest::collection::vec(block, 1..12).prop_map(|blocks| {
        let mut values = Vec::new();
        for round in 0..2 {
            for (body, times, stray) in &blocks {
                for _ in 0..times + round {
                    values.extend(body);
                }
                values.extend(stray);
            }
        }
        values
    })
}

/// The series of `values`, with snapshots taken every `every` values checked against the
/// prefix so far and one more value `n` times.
fn build_checking_snapshots(numeric: bool, window: usize, values: &[u64], every: usize) -> Series {
    let mut b = SeriesBuilder::new(numeric, window);
    for (i, &v) in values.iter().enumerate() {
        b.push(v);
        if i % every == 0 {
            let s = b.snapshot_with(&[(v, 3)]);
            let expected = values[..=i].iter().copied().chain([v; 3]);
            assert!(s.iter().eq(expected), "snapshot after {} values", i + 1);
        }
    }
    b.snapshot()
}

proptest! {
    #[test]
    fn following_cycles_changes_no_series(
        values in cyclic_values(),
        numeric: bool,
        window in 1usize..12,
        every in 1usize..40,
    ) {
        let followed = build_checking_snapshots(numeric, window, &values, every);
        super::tail::NEVER_FOLLOW.set(true);
        let matched = build(numeric, window, &values);
        super::tail::NEVER_FOLLOW.set(false);
        prop_assert!(followed.iter().eq(values.iter().copied()));
        prop_assert_eq!(followed, matched);
    }
}
