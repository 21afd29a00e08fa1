//! Pictures read as a user expects: `plot ranks` has one bar per rank, labelled under its
//! middle; `plot timeline`'s window (`--ranks`, `--from`, `--to`) picks what is drawn, the
//! legend lists only what the window holds, and wrong windows are one clear line.

mod common;
use common::*;
use std::path::PathBuf;
use std::process::{Command, Output};

/// ring.c on 4 ranks with every call's time (in a directory of its own per `tag`): rank r
/// Sendrecvs with r ± 1, 20 times.
fn ring_trace(tag: &str) -> PathBuf {
    let dir = scratch(&format!("plots-{tag}"));
    let options = ["--timing", "lossless"];
    traced(&dir, "ring", 4, &options, &apps_dir().join("ring"), &[])
}

fn plot(trace: &PathBuf, out: &str, extra: &[&str]) -> (Output, String) {
    plot_kind("timeline", trace, out, extra)
}

fn plot_kind(kind: &str, trace: &PathBuf, out: &str, extra: &[&str]) -> (Output, String) {
    let svg = trace.parent().unwrap().join(out);
    let output = Command::new(conifer())
        .args(["plot", kind])
        .arg(trace)
        .arg("-o")
        .arg(&svg)
        .args(extra)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&svg).unwrap_or_default();
    (output, text)
}

#[test]
fn a_window_draws_only_its_ranks_and_time() {
    let trace = ring_trace("window");
    let (out, full) = plot(&trace, "full.svg", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        full.contains("MPI_Sendrecv"),
        "the legend names the ring's calls"
    );
    assert!(!full.contains(">MPI_Init<"), "MPI_Init is not drawn");

    let (out, two) = plot(&trace, "two.svg", &["--ranks", "1-2"]);
    assert!(out.status.success());
    assert!(two.contains("(ranks 1-2)"), "the title says which ranks");
    // Half the ranks: about half the boxes (each rank's calls are alike).
    let boxes = |svg: &str| svg.matches("<rect").count();
    assert!(
        boxes(&two) < boxes(&full),
        "{} vs {}",
        boxes(&two),
        boxes(&full)
    );

    // A window after the run's end holds no call: no function in the legend.
    let (out, empty) = plot(&trace, "late.svg", &["--from", "1000s", "--to", "1001s"]);
    assert!(out.status.success());
    assert!(
        !empty.contains("MPI_Sendrecv"),
        "a call outside the window is drawn"
    );
}

#[test]
fn wrong_windows_are_one_clear_line() {
    let trace = ring_trace("wrong");
    for (args, words) in [
        (&["--from", "2ms", "--to", "1ms"][..], "is not before --to"),
        (&["--from", "soon"][..], "is not a time"),
        (&["--ranks", "3-9"][..], "does not exist"),
    ] {
        let (out, _) = plot(&trace, "bad.svg", args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(words), "{args:?}: {err}");
    }
    let out = Command::new(conifer())
        .args(["plot", "ranks"])
        .arg(&trace)
        .args(["-o", "/tmp/conifer-ranks.svg", "--from", "1ms"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("plot timeline"));
}

#[test]
fn ranks_are_bars_labelled_zero_to_last() {
    let trace = ring_trace("ranks");
    let (out, svg) = plot_kind("ranks", &trace, "ranks.svg", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Text elements hold their text on a line of its own.
    let svg: String = svg.split_whitespace().collect();
    for rank in 0..4 {
        assert!(
            svg.contains(&format!(">{rank}</text>")),
            "no label for rank {rank}"
        );
    }
    assert!(!svg.contains(">4</text>"), "a rank 4 on a 4-rank run");
    assert!(svg.contains("inMPI") && svg.contains("betweenMPIcalls"));
}

/// heapbuf.c sends from heap blocks it frees: the trace keeps `free` records, which are not MPI
/// functions and are not drawn as one.
#[test]
fn memory_free_records_are_not_drawn_as_functions() {
    let dir = scratch("plots-free");
    let trace = traced(&dir, "heapbuf", 2, &[], &apps_dir().join("heapbuf"), &[]);
    let stats = stats_json(&trace);
    assert!(
        stats.to_string().contains("\"free\""),
        "heapbuf's trace should hold free records: {stats}"
    );
    let (out, svg) = plot_kind("functions", &trace, "functions.svg", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg: String = svg.split_whitespace().collect();
    assert!(svg.contains(">MPI_Sendrecv</text>"), "{svg}");
    assert!(!svg.contains(">free</text>"), "free drawn as a function");
}
