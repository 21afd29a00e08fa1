//! What the suites measure with alike: how often each traced/untraced pair runs, report cells
//! rounded, and `micro`'s loops with the time per iteration it prints.

use crate::runner::RunResult;
use serde_json::{json, Value};

/// Repetitions of each traced/untraced pair.
pub(crate) fn repetitions(quick: bool) -> usize {
    if quick {
        3
    } else {
        5
    }
}

/// `v` rounded to `digits` decimals, as a report cell.
pub(crate) fn round(v: f64, digits: i32) -> Value {
    let scale = 10f64.powi(digits);
    json!((v * scale).round() / scale)
}

/// `micro`'s loops as (kind, MPI calls per iteration, iterations), with its `nested` loop when
/// asked. Both MPIs run the same iterations: on 2 ranks MPICH is not oversubscribed. A full run
/// gives every loop at least 25 ms untraced: with 20,000 p2p iterations (5 ms) one scheduler
/// tick still moved MPICH's per-call overhead from 102 to 135 ns between runs of one build.
pub(crate) fn micro_loops(quick: bool, nested: bool) -> Vec<(&'static str, u32, u64)> {
    let scale = if quick { 1 } else { 20 };
    let mut loops = vec![
        ("comm_rank", 1, 500_000 * scale),
        ("p2p", 5, 5_000 * scale),
        ("allreduce", 1, 5_000 * scale),
    ];
    if nested {
        loops.push(("nested", 4, 100_000 * scale));
    }
    loops
}

/// The loop time per iteration `micro` printed.
pub(crate) fn ns_per_iter(result: &RunResult) -> Result<f64, String> {
    result
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("NS_PER_ITER ")?.trim().parse().ok())
        .ok_or_else(|| format!("micro printed no NS_PER_ITER: {}", result.stdout))
}
