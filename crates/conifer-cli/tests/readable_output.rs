//! Text output a reader takes in at once: the matrix's counts grouped by thousands with their
//! unit, and `diff` of runs with different rank counts saying why calls are not compared.

mod common;
use common::*;
use std::process::Command;

/// ring.c: every rank Sendrecvs one long long (8 bytes) to rank + 1, `iters` times.
fn ring(ranks: u32, iters: u32, tag: &str) -> std::path::PathBuf {
    let dir = scratch(&format!("readable-{tag}"));
    traced(
        &dir,
        "ring",
        ranks,
        &[],
        &apps_dir().join("ring"),
        &[&iters.to_string()],
    )
}

#[test]
fn matrix_counts_are_grouped_and_carry_their_unit() {
    // 4 ranks × 200 iterations: 1,600 bytes on each of the 4 ring edges, 6,400 in all.
    let trace = ring(4, 200, "matrix");
    let out = run_ok(
        Command::new(conifer())
            .args(["matrix", "--kind", "p2p"])
            .arg(&trace),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().next().unwrap();
    assert!(header.ends_with("total 6,400 bytes (6.2 KiB)"), "{header}");
    let row0: Vec<&str> = text.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(row0, ["0", ".", "1,600", ".", "."], "{text}");
    let out = run_ok(
        Command::new(conifer())
            .args(["matrix", "--kind", "p2p", "--metric", "messages"])
            .arg(&trace),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().next().unwrap().ends_with("total 800 messages"),
        "{text}"
    );
}

#[test]
fn diff_of_different_rank_counts_says_why_calls_are_not_compared() {
    let (two, four) = (ring(2, 5, "diff2"), ring(4, 5, "diff4"));
    let out = Command::new(conifer())
        .arg("diff")
        .arg(&two)
        .arg(&four)
        .output()
        .unwrap();
    assert!(!out.status.success(), "runs of 2 and 4 ranks are not equal");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the runs have 2 and 4 ranks"), "{text}");
    assert!(!text.contains("ranks diverge"), "{text}");
}
