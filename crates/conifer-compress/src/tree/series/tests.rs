use super::*;
use crate::grammar::Grammar;

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
