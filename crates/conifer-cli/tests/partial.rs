//! No data lost: runs that end early (a segfault, `MPI_Abort`, `exit` without `MPI_Finalize`)
//! leave per-rank partial files that `conifer merge` turns into a trace marked partial, which
//! decodes to what each rank did before it stopped. The expected calls of the failing rank come
//! from the app's own description (tests/apps/crash.c), not from Conifer's output.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

const ITERATIONS: u32 = 10;
const CRASH_AT: u32 = 5;

/// The functions rank 1 completed before it stopped, per crash.c's header comment.
fn expected_rank1(mode: &str) -> Vec<String> {
    let mut calls = vec!["MPI_Init", "MPI_Comm_rank", "MPI_Comm_size"];
    for _ in 0..CRASH_AT {
        calls.extend(["MPI_Sendrecv", "MPI_Allreduce"]);
    }
    if mode == "abort" {
        calls.push("MPI_Abort");
    }
    calls.into_iter().map(String::from).collect()
}

fn functions_of_rank(trace: &Path, rank: u32) -> Vec<String> {
    let out = run_ok(
        Command::new(conifer())
            .args(["decode", "--json", "--rank", &rank.to_string()])
            .arg(trace),
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("partial trace"),
        "decode does not say the trace is partial"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["function"].as_str().unwrap().to_string()
        })
        .collect()
}

fn crash(mode: &str, reason: &str) {
    crash_in(&apps_dir(), mode, reason);
}

/// [`crash`] with the crash app built into `apps`; returns the merged trace's statistics.
fn crash_in(apps: &Path, mode: &str, reason: &str) -> serde_json::Value {
    let ranks = 4;
    let tree = apps.ends_with("apps-tree");
    let dir = scratch(&format!(
        "partial-{mode}{}",
        if tree { "-tree" } else { "" }
    ));
    let trace = dir.join("run.cft");
    let _lock = mpi_lock();
    let out = conifer_run_raw(ranks, &trace, &dir)
        .arg(apps.join("crash"))
        .args([mode, &ITERATIONS.to_string(), &CRASH_AT.to_string()])
        .output()
        .unwrap();
    // A rank calling exit(0) may leave MPICH's launcher reporting success; the other endings
    // fail the run under both MPIs.
    if mode != "exit" {
        assert!(!out.status.success(), "{mode}: the run should fail");
    }
    assert_ne!(out.status.code(), Some(124), "{mode}: the run hung");
    // MPICH's launcher may drop a rank's last output when the job is aborted; the decoded
    // record below shows where rank 1 stopped either way.
    if !is_mpich() {
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("CRASHING rank=1 round=5"),
            "{mode}: the app did not reach its crash"
        );
    }
    assert!(!trace.exists(), "{mode}: a full trace was written");

    let partial_dir = dir.join("run.cft.partial");
    let merged = dir.join("merged.cft");
    run_ok(
        Command::new(conifer())
            .arg("merge")
            .arg(&partial_dir)
            .arg("-o")
            .arg(&merged),
    );
    let stats = stats_json(&merged);
    assert_eq!(stats["partial"], true);
    assert_eq!(stats["ranks"], ranks);
    let reasons: Vec<String> = stats["partial_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    assert!(
        reasons.contains(&format!("rank 1: {reason}")),
        "{mode}: {reasons:?}"
    );
    let missing: Vec<u64> = stats["missing_ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_u64().unwrap())
        .collect();
    assert!(!missing.contains(&1), "{mode}: rank 1 left no record");
    // The other ranks are stopped by the launcher: Open MPI sends SIGTERM, which they catch to
    // write their files, but follows with SIGKILL as soon as any rank has died, so on this
    // oversubscribed machine a rank still waiting for a core can lose that race; MPICH's Hydra
    // sends SIGKILL at once. Every rank that did write must say why.
    eprintln!("{mode}: ranks without a record: {missing:?}; reasons: {reasons:?}");
    assert_eq!(reasons.len() + missing.len(), ranks as usize, "{mode}");
    if !is_mpich() {
        assert!(
            reasons
                .iter()
                .filter(|r| !r.starts_with("rank 1:"))
                .all(|r| r.ends_with(": SIGTERM")),
            "{mode}: {reasons:?}"
        );
    }

    assert_eq!(
        functions_of_rank(&merged, 1),
        expected_rank1(mode),
        "{mode}"
    );
    let verify = run_ok(
        Command::new(conifer())
            .arg("verify")
            .arg(&merged)
            .arg("--raw")
            .arg(dir.join("run.cft.raw")),
    );
    assert!(
        String::from_utf8_lossy(&verify.stdout).starts_with("identical: "),
        "{mode}: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    stats
}

#[test]
fn a_segfault_on_one_rank_leaves_a_partial_trace() {
    crash("segv", "SIGSEGV");
}

#[test]
fn mpi_abort_leaves_a_partial_trace() {
    crash("abort", "MPI_Abort");
}

#[test]
fn exit_without_finalize_leaves_a_partial_trace() {
    crash("exit", "exit without MPI_Finalize");
}

/// The same with the program built by `conifer cc`: the partial files carry trace trees,
/// which `conifer merge` joins, and rank 1's calls come back from its tree.
#[test]
fn a_segfault_in_a_tree_mode_program_leaves_a_partial_trace() {
    let stats = crash_in(&tree_apps_dir(), "segv", "SIGSEGV");
    let trees = &stats["trace_tree"];
    assert!(
        trees.is_object(),
        "no trace tree in the merged partial trace"
    );
    assert!(
        trees["calls_in_tree"].as_u64().unwrap() >= expected_rank1("segv").len() as u64,
        "{trees}"
    );
}

#[test]
fn merge_rejects_bad_input_in_one_line() {
    let dir = scratch("partial-bad");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(dir.join("junk.cfp"), b"CONIFER\0garbage").unwrap();
    for (input, expected) in [
        (dir.join("nowhere"), "cannot read"),
        (empty, "holds no partial files"),
        (dir.clone(), "junk.cfp"),
    ] {
        let out = Command::new(conifer())
            .arg("merge")
            .arg(&input)
            .arg("-o")
            .arg(dir.join("out.cft"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
    }
}

/// A 2-rank crash.c run of 1250 rounds where rank 1 segfaults before round 1249's
/// Sendrecv: each rank finished MPI_Init, MPI_Comm_rank, MPI_Comm_size and 1249 x
/// (Sendrecv, Allreduce) = 2501 calls (5002 in all), and rank 0 had entered round 1249's
/// Sendrecv, which never returned. The stats line says 5002 recorded and 1 in progress
/// (it said `calls 5002 (5003 C, 0 Fortran)`, languages summing to more than the calls).
#[test]
fn a_partial_trace_counts_the_calls_in_progress_apart() {
    let dir = scratch("partial-counts");
    let trace = dir.join("run.cft");
    {
        let _lock = mpi_lock();
        let out = conifer_run_raw(2, &trace, &dir)
            .arg(apps_dir().join("crash"))
            .args(["segv", "1250", "1249"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "the run should fail");
    }
    let merged = dir.join("merged.cft");
    run_ok(
        Command::new(conifer())
            .arg("merge")
            .arg(dir.join("run.cft.partial"))
            .arg("-o")
            .arg(&merged),
    );
    let stats = stats_json(&merged);
    if stats["missing_ranks"] != serde_json::json!([]) {
        // Open MPI's SIGKILL can beat rank 0's SIGTERM handler (see crash_in).
        eprintln!(
            "skipped: rank 0 left no record: {}",
            stats["partial_reasons"]
        );
        return;
    }
    let (recorded, in_progress) = (2 * (3 + 2 * 1249), 1);
    assert_eq!(stats["calls"], recorded);
    assert_eq!(stats["calls_in_progress"], in_progress);
    let text = run_ok(Command::new(conifer()).arg("stats").arg(&merged));
    let line = lines_with(&text.stdout, "calls ").remove(0);
    assert!(
        line.starts_with(&format!(
            "calls       {recorded} recorded + {in_progress} in progress when ranks stopped, not \
             recorded ({} entered: {} C, 0 Fortran), ",
            recorded + in_progress,
            recorded + in_progress
        )),
        "{line}"
    );
}
