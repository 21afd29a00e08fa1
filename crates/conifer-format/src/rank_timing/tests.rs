use super::*;

fn rank(i: i64) -> (RankClock, RankTotals) {
    let clock = RankClock {
        read_ps: 9_000 + (i as u64 % 3) * 250,
        init: Some(ClockSample {
            local_ns: 1_500_000 + i * 1_000,
            offset_ns: if i < 4 { 0 } else { -12_345 - i },
        }),
        finalize: (i != 5).then_some(ClockSample {
            local_ns: 2_000_000_000 + i,
            offset_ns: 7,
        }),
        threads: vec![ThreadSpan {
            base_ns: -2_700_000_000 + i * 1_000_000,
            end_ns: 2_000_000_100 + i,
        }],
    };
    let mut functions = vec![
        FunctionTotals {
            function: 3,
            mpi_ns: 40 + i as u64,
        },
        FunctionTotals {
            function: 9,
            mpi_ns: 4_600_000 + i as u64 * 37_000,
        },
    ];
    if i % 2 == 1 {
        functions.push(FunctionTotals {
            function: 200,
            mpi_ns: 123_456_789_012,
        });
    }
    let totals = RankTotals {
        recorder_ns: 350_000 + i as u64 * 10_000,
        compute_ns: 1_000_000_000 + i as u64 * 3_000_000,
        functions,
    };
    (clock, totals)
}

fn within(p: &Precision, exact: i64, back: i64) {
    let bound = p.bound_ns(exact as f64);
    assert!(
        (exact - back).abs() as f64 <= bound,
        "{back} is not within {bound} of {exact}"
    );
}

#[test]
fn figures_come_back_within_the_stated_error() {
    let p = Precision::DEFAULT;
    let ranks: Vec<_> = (0..20).map(rank).collect();
    let refs: Vec<_> = ranks.iter().map(|(c, t)| (c, t)).collect();
    let bytes = encode(&p, &refs);
    let (q, back) = decode(&bytes, ranks.len()).unwrap();
    assert_eq!(q, p);
    for ((clock, totals), (c, t)) in ranks.iter().zip(&back) {
        // read_ps: within 0.1%, its floor is 1 ns.
        assert!((clock.read_ps as f64 - c.read_ps as f64).abs() <= 0.001 * clock.read_ps as f64);
        for (a, b) in [(clock.init, c.init), (clock.finalize, c.finalize)] {
            assert_eq!(a.is_some(), b.is_some());
            if let (Some(a), Some(b)) = (a, b) {
                // Offsets: within ε × the floor, 1 µs, whatever their size.
                assert!((a.offset_ns - b.offset_ns).abs() <= 1_000);
                within(&p, a.local_ns, b.local_ns);
            }
        }
        within(&p, clock.threads[0].base_ns, c.threads[0].base_ns);
        within(&p, clock.threads[0].end_ns, c.threads[0].end_ns);
        within(&p, totals.compute_ns as i64, t.compute_ns as i64);
        within(&p, totals.recorder_ns as i64, t.recorder_ns as i64);
        assert_eq!(totals.functions.len(), t.functions.len());
        for (f, g) in totals.functions.iter().zip(&t.functions) {
            assert_eq!(f.function, g.function);
            within(&p, f.mpi_ns as i64, g.mpi_ns as i64);
        }
    }
    // Writing what was read again gives the same bytes: the codes are stable.
    let again: Vec<_> = back.iter().map(|(c, t)| (c, t)).collect();
    assert_eq!(encode(&p, &again), bytes);
    assert!(decode(&bytes[..bytes.len() - 1], ranks.len()).is_none());
    assert!(decode(&bytes, ranks.len() + 1).is_none());
}

#[test]
fn ranks_that_behave_alike_cost_a_few_bits_a_figure() {
    // 64 ranks whose figures agree within 0.1%: every field's deviations are 0, one bit
    // each, and 12 fields (read, 2 × 2 offset figures, base and end, recorder, compute,
    // three functions) make 12 bits a rank, 96 B for 64, plus each field's header (mode,
    // common value, order: under 64 bits for the values here) and the shape column.
    let same = rank(1);
    let refs: Vec<_> = (0..64).map(|_| (&same.0, &same.1)).collect();
    let bytes = encode(&Precision::DEFAULT, &refs);
    assert!(bytes.len() <= 96 + 12 * 8 + 40, "{} bytes", bytes.len());
}

#[test]
fn quantiser_is_linear_below_the_floor_and_logarithmic_above() {
    let p = Precision::DEFAULT;
    // 1 ms / 500 steps = 2 µs a step below the floor.
    assert_eq!(p.code(0, p.floor_ns), 0);
    assert_eq!(p.code(2_999, p.floor_ns), 1);
    assert_eq!(p.code(3_001, p.floor_ns), 2);
    assert_eq!(p.value(2, p.floor_ns), Some(4_000));
    for v in [1_000_000u64, 1_000_500, 7_777_777, 123_456_789_012_345] {
        let back = p.value(p.code(v, p.floor_ns), p.floor_ns).unwrap();
        assert!((back as f64 - v as f64).abs() <= 0.001 * v as f64);
    }
    assert_eq!(p.describe(), "0.1% (1 µs below 1 ms)");
}
