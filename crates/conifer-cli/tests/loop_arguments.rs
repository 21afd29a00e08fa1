//! Flat in iterations when integer arguments follow the loop (issue 52 item 5):
//! `tests/apps/loopargs.c` posts, every iteration `it`, two `MPI_Irecv` and two `MPI_Isend` to
//! its ring neighbours with tag `it`, a count cycling through 64, 128, 256 and 512 ints and a
//! send buffer offset advancing by 8 ints, completes three requests with `MPI_Waitany` and
//! polls the fourth with `MPI_Testsome`. Request pools are keyed by the creating call without
//! its integers and offsets, so every iteration reuses the same request ids; the tags, counts
//! and offsets become series of one skeleton per call site, and the statuses' tags and byte
//! counts series of the completion skeletons. Ten times the iterations must then keep the
//! signatures and the distinct values, and the trace must decode to exactly the raw record.

mod common;

use common::*;
use serde_json::Value;
use std::path::PathBuf;

/// Traces `loopargs` on `ranks` ranks for `iterations` iterations with its raw record, checks
/// `conifer verify` finds the decoded calls identical to it, and returns the trace and its
/// `stats --json`.
fn loopargs(ranks: u32, iterations: u32) -> (PathBuf, Value) {
    let name = format!("loopargs-{iterations}");
    let dir = scratch(&format!("loop-arguments-{iterations}"));
    let program = apps_dir().join("loopargs");
    let (trace, out) = traced_run(
        &dir,
        &name,
        ranks,
        &["--raw"],
        &program,
        &[&iterations.to_string()],
    );
    let results = lines_with(&out.stdout, "RESULT ");
    assert_eq!(results.len(), ranks as usize, "{results:?}");
    for line in &results {
        assert!(line.contains(&format!("iters={iterations}")), "{line}");
    }
    let verify = run_ok(
        std::process::Command::new(conifer())
            .arg("verify")
            .arg(&trace),
    );
    let said = String::from_utf8_lossy(&verify.stdout);
    assert!(said.starts_with("identical: "), "{name}: {said}");
    let stats = stats_json(&trace);
    (trace, stats)
}

/// `stats --json`'s signature count of `function` (0 when absent).
fn signatures_of(stats: &Value, function: &str) -> u64 {
    stats["signatures_by_function"][function]
        .as_u64()
        .unwrap_or(0)
}

/// From `small` to ten times as many iterations: the four creating call sites stay one
/// signature each (two neighbours, sends and receives: before, one per call per iteration,
/// as the tag and the request pool were part of it), `MPI_Waitany` one and `MPI_Testsome` at
/// most two (its polls that found nothing, and the others); the whole table at most 1.2
/// times what it was. The signature table's bytes and the completion skeletons' distinct
/// values (`SVAL`: request arrays, indices and statuses without their tags and byte counts)
/// do not depend on the iteration count, so they stay within 1.3 times too. The rest of the
/// file may grow: which of the three requests `MPI_Waitany` returns first is the run's own
/// timing, and the trace keeps it.
#[test]
fn ten_times_the_iterations_keep_signatures_and_values() {
    let (ranks, small) = if is_mpich() { (4, 12) } else { (16, 40) };
    let (short_trace, short) = loopargs(ranks, small);
    let (long_trace, long) = loopargs(ranks, small * 10);
    for stats in [&short, &long] {
        let by_function = &stats["signatures_by_function"];
        assert_eq!(signatures_of(stats, "MPI_Irecv"), 2, "{by_function}");
        assert_eq!(signatures_of(stats, "MPI_Isend"), 2, "{by_function}");
        assert_eq!(signatures_of(stats, "MPI_Waitany"), 1, "{by_function}");
        assert!((1..=2).contains(&signatures_of(stats, "MPI_Testsome")));
    }
    let signatures = |s: &Value| s["signatures"].as_u64().unwrap();
    assert!(
        signatures(&long) as f64 <= 1.2 * signatures(&short) as f64,
        "signatures {} -> {}",
        signatures(&short),
        signatures(&long)
    );
    let bytes = |t: &PathBuf| std::fs::metadata(t).unwrap().len();
    eprintln!(
        "loopargs {ranks} ranks: {small} iterations {} B {}, {} iterations {} B {}",
        bytes(&short_trace),
        short["bytes_by_section"],
        small * 10,
        bytes(&long_trace),
        long["bytes_by_section"]
    );
    for section in ["SIGS", "SVAL"] {
        let size = |s: &Value| s["bytes_by_section"][section].as_u64().unwrap_or(0) as f64;
        assert!(
            size(&long) <= 1.3 * size(&short),
            "{section}: {} B -> {} B",
            size(&short),
            size(&long)
        );
    }
}
