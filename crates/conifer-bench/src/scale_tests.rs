//! The scale suite's generators and in-process merge checked against hand-derived values:
//! the merged trace of a periodic 2D stencil, read back through `conifer-trace`, gives each
//! sampled rank the calls and neighbours a torus has, in ⌈log₂P⌉ merge levels, and regular
//! patterns give the same trace size at two rank counts.

use crate::scale_patterns::Pattern;
use crate::scale_suite::{finish_trace, merge_pattern, ITERS};
use conifer_trace::ReadCalls;

/// The four neighbours of `r` on a periodic `rows` × `cols` torus numbered row-major:
/// up, down, left, right.
fn torus_neighbours(r: i64, rows: i64, cols: i64) -> [i64; 4] {
    let (i, j) = (r / cols, r % cols);
    let at = |i: i64, j: i64| i.rem_euclid(rows) * cols + j.rem_euclid(cols);
    [at(i - 1, j), at(i + 1, j), at(i, j - 1), at(i, j + 1)]
}

#[test]
fn periodic_stencil_decodes_to_its_torus_neighbours_after_log_p_levels() {
    // 96 ranks: a 12 × 8 torus (MPI_Dims_create(96, 2)), not a power of two.
    let p = 96u32;
    let merged = merge_pattern(Pattern::Stencil2dPeriodic, p, 2);
    assert_eq!(merged.levels.len(), 7, "⌈log₂ 96⌉ = 7 pairwise levels");
    assert_eq!(merged.levels[0].merges, 48);
    assert_eq!(merged.levels[6].merges, 1);
    let trace = conifer_trace::Trace::from_bytes(&finish_trace(merged.record, p).to_bytes())
        .expect("the written trace reads back");
    let reader = trace.reader();
    for rank in [0u32, 7, 8, 50, 95] {
        let calls: Vec<_> = reader.calls(rank).map(|c| c.expect("decodes")).collect();
        // Init, rank, size, Cart_create, ITERS × (4 Irecv, 4 Isend, Waitall, Allreduce), Finalize.
        assert_eq!(calls.len(), 4 + ITERS as usize * 10 + 1, "rank {rank}");
        assert_eq!(calls[3].name, "MPI_Cart_create");
        let want = torus_neighbours(i64::from(rank), 12, 8);
        for it in 0..ITERS as usize {
            let first = 4 + it * 10;
            for (k, &n) in want.iter().enumerate() {
                for (call, slot) in [(&calls[first + k], 3), (&calls[first + 4 + k], 3)] {
                    let shown = call.signature.values[slot]
                        .display(call.position(slot))
                        .to_string();
                    assert_eq!(
                        shown,
                        n.to_string(),
                        "rank {rank} {} #{}",
                        call.name,
                        call.index
                    );
                }
            }
            assert_eq!(calls[first].name, "MPI_Irecv");
            assert_eq!(calls[first + 4].name, "MPI_Isend");
            assert_eq!(calls[first + 8].name, "MPI_Waitall");
            assert_eq!(calls[first + 9].name, "MPI_Allreduce");
        }
    }
}

#[test]
fn regular_patterns_give_one_trace_size_at_two_rank_counts() {
    for pattern in [Pattern::Stencil2dPeriodic, Pattern::Stencil3d] {
        let size = |p: u32| {
            finish_trace(merge_pattern(pattern, p, 2).record, p)
                .to_bytes()
                .len()
        };
        let (small, large) = (size(1000), size(4096));
        let ratio = large as f64 / small as f64;
        assert!(
            (0.9..1.1).contains(&ratio),
            "{}: {small} B vs {large} B",
            pattern.name()
        );
    }
}

/// The distinct message plans `conifer sim` holds for `pattern` on `p` ranks.
fn simulated_plans(pattern: Pattern, p: u32) -> usize {
    let trace = conifer_trace::Trace::from_bytes(
        &finish_trace(merge_pattern(pattern, p, 2).record, p).to_bytes(),
    )
    .expect("the written trace reads back");
    conifer_sim::simulate(&trace, &conifer_sim::Options::default())
        .expect("simulates")
        .plans
}

#[test]
fn simulated_ranks_share_their_message_plans() {
    // A periodic 2D stencil's ranks differ only in where they are on the torus. Rank-relative
    // plans tell apart at most the ranks on a first or last row or column (a wrap makes the
    // relative step there another number): per terminal at most 3 × 3 plans, however many
    // ranks. 20 × 20 and 40 × 40 tori.
    let small = simulated_plans(Pattern::Stencil2dPeriodic, 400);
    let large = simulated_plans(Pattern::Stencil2dPeriodic, 1600);
    assert_eq!(small, large, "plans at 400 and 1600 ranks");
    assert!(small < 400 / 4, "{small} plans for 400 ranks");
}
