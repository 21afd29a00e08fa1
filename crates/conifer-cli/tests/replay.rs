//! PHANTOM's message log and single-rank replay: `conifer run --log-messages` and
//! `conifer replay`, on the NPB-style Jacobi app (data-dependent convergence, halo exchange
//! with requests, a strided datatype, a split communicator, rooted collectives).
//! The run's own output is the independent reference: a rank replayed alone must print exactly
//! what it printed in the run, iteration count and checksums included.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Jacobi's arguments: a 64×64 grid, stopping when the residual drops below 2e-2 (a few
/// hundred iterations, decided by the data), at most 400 iterations.
const ARGS: [&str; 3] = ["64", "2e-2", "400"];

fn ranks() -> u32 {
    if is_mpich() {
        2
    } else {
        4
    }
}

/// Traces Jacobi with a message log; returns the trace and the run's output line per rank.
fn logged_run(dir: &Path, options: &[&str]) -> (PathBuf, Vec<String>) {
    let mut all = vec!["--log-messages", "--timing", "lossless"];
    all.extend_from_slice(options);
    let (trace, out) = traced_run(
        dir,
        "jacobi",
        ranks(),
        &all,
        &apps_dir().join("jacobi"),
        &ARGS,
    );
    (trace, lines_with(&out.stdout, "rank "))
}

/// `conifer replay TRACE OPTIONS -- PROGRAM ARGS` in `dir` with `env`, under the MPI lock.
fn replay_of(
    dir: &Path,
    trace: &Path,
    options: &[&str],
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let _guard = mpi_lock();
    Command::new("timeout")
        .arg("300")
        .arg(conifer())
        .arg("replay")
        .arg(trace)
        .args(options)
        .arg("--")
        .arg(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .expect("conifer replay starts")
}

/// Replays Jacobi's ranks from `trace`.
fn replay(dir: &Path, trace: &Path, options: &[&str], env: &[(&str, &str)]) -> Output {
    replay_of(dir, trace, options, &apps_dir().join("jacobi"), &ARGS, env)
}

/// The line rank `r` printed.
fn line_of(lines: &[String], r: u32) -> &str {
    let prefix = format!("rank {r}:");
    lines
        .iter()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no line of rank {r} in {lines:?}"))
}

fn times_of(trace: &Path, r: u32) -> Vec<u64> {
    let path = PathBuf::from(format!("{}.msglog/replay-{r}.times", trace.display()));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let body = &bytes[bytes.iter().position(|&b| b == b'\n').expect("header line") + 1..];
    // Per call: computation, wall time, CPU time (u64 ns each); the computation first.
    body.chunks_exact(24)
        .map(|c| u64::from_le_bytes(c[..8].try_into().unwrap()))
        .collect()
}

#[test]
fn a_rank_replayed_alone_prints_what_it_printed_in_the_run() {
    let dir = scratch("replay_output");
    let (trace, run_lines) = logged_run(&dir, &[]);
    assert_eq!(run_lines.len(), ranks() as usize, "{run_lines:?}");
    let all = format!("0-{}", ranks() - 1);
    let out = replay(&dir, &trace, &["--rank", &all, "--concurrent", "2"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let replayed = lines_with(&out.stdout, "rank ");
    for r in 0..ranks() {
        assert_eq!(line_of(&replayed, r), line_of(&run_lines, r), "rank {r}");
        // One computation interval per MPI call the rank made (memory records are not calls).
        let calls = decoded_mpi_calls(&trace, r).len();
        assert_eq!(times_of(&trace, r).len(), calls, "rank {r}");
        assert!(
            stderr.contains(&format!("replayed rank {r}: {calls} calls")),
            "{stderr}"
        );
    }
    // The log's size as stats shows it is the files' size on disk.
    let on_disk: u64 = std::fs::read_dir(format!("{}.msglog", trace.display()))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    let stats = stats_json(&trace);
    assert_eq!(stats["message_log"]["bytes"].as_u64(), Some(on_disk));
    assert_eq!(stats["message_log"]["ranks"].as_u64(), Some(ranks() as u64));
}

#[test]
fn a_program_that_sends_other_data_than_in_the_run_is_caught() {
    let dir = scratch("replay_diverges");
    let (trace, _) = logged_run(&dir, &[]);
    // By default other data is reported, and the replay follows the run's calls to the end.
    let out = replay(&dir, &trace, &["--rank", "1"], &[("JACOBI_PERTURB", "1")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("rank 1 sent other data than in the run"),
        "{stderr}"
    );
    let out = replay(
        &dir,
        &trace,
        &["--rank", "1", "--strict"],
        &[("JACOBI_PERTURB", "1")],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Rank 1 changes its data right before its first MPI_Isend: the call `decode` shows.
    let first_isend = decoded_mpi_calls(&trace, 1)
        .into_iter()
        .find(|l| l.contains("MPI_Isend"))
        .expect("rank 1 sends");
    let number = first_isend.split_whitespace().nth(1).expect("#N");
    assert!(
        stderr.contains(&format!(
            "rank 1 diverged at call {number} (MPI_Isend): the data sent differs"
        )),
        "{stderr}\nexpected call {number}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn replayed_computation_is_what_the_simulator_uses() {
    let dir = scratch("replay_sim");
    let (trace, _) = logged_run(&dir, &[]);
    let all = format!("0-{}", ranks() - 1);
    let out = replay(&dir, &trace, &["--rank", &all], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replayed = dir.join("jacobi.replayed.cft");
    let sim = run_ok(
        Command::new(conifer())
            .args(["sim", "--json"])
            .arg(&replayed),
    );
    let report: serde_json::Value = serde_json::from_slice(&sim.stdout).unwrap();
    let ranks_json = report["ranks"].as_array().expect("per-rank figures");
    for r in 0..ranks() {
        let replayed_ns: u64 = times_of(&trace, r).iter().sum();
        let simulated = ranks_json[r as usize]["compute_ns"].as_f64().unwrap();
        assert!(
            (simulated - replayed_ns as f64).abs() <= 1.0 + 1e-9 * replayed_ns as f64,
            "rank {r}: the simulator computes {simulated} ns, the replay measured {replayed_ns}"
        );
    }
    let text = run_ok(Command::new(conifer()).arg("sim").arg(&replayed));
    assert!(String::from_utf8_lossy(&text.stdout).contains("measured by `conifer replay`"));
}

#[test]
fn replay_refuses_what_it_cannot_do_in_one_line() {
    let dir = scratch("replay_errors");
    let unlogged = traced(&dir, "plain", 2, &[], &apps_dir().join("ring"), &[]);
    let ring = apps_dir().join("ring");
    let out = replay_of(&dir, &unlogged, &["--rank", "0"], &ring, &[], &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no message log for rank 0"), "{stderr}");
    assert!(stderr.contains("--log-messages"), "{stderr}");

    let out = replay_of(&dir, &unlogged, &["--rank", "5"], &ring, &[], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("the trace has ranks 0 to 1, not 5"),
        "{stderr}"
    );

    // Another program than the one logged: refused before its first call is answered.
    let logged = traced(
        &dir,
        "logged",
        2,
        &["--log-messages"],
        &apps_dir().join("ring"),
        &[],
    );
    let jacobi = apps_dir().join("jacobi");
    let out = replay_of(&dir, &logged, &["--rank", "0"], &jacobi, &[], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("logged from another build of this program"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn fortran_ranks_replayed_alone_print_what_they_printed_in_the_run() {
    let dir = scratch("replay_fortran");
    // The NPB-style app (module arrays, COMMON timers, an Allreduce'd norm) and the 2D
    // stencil through `use mpi_f08`, whose handles are derived types.
    for app in ["npbstyle_f", "stencil2d08_f"] {
        let program = apps_dir().join(app);
        if !program.is_file() {
            continue;
        }
        let (trace, out) = traced_run(&dir, app, 2, &["--log-messages"], &program, &[]);
        let mut run: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.starts_with("conifer:"))
            .map(str::to_string)
            .collect();
        let replayed = replay_of(&dir, &trace, &["--rank", "0-1"], &program, &[], &[]);
        let stderr = String::from_utf8_lossy(&replayed.stderr);
        assert!(replayed.status.success(), "{app}: {stderr}");
        let mut lines: Vec<String> = String::from_utf8_lossy(&replayed.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        // The ranks printed concurrently in the run, one after the other in the replays.
        run.sort();
        lines.sort();
        assert_eq!(lines, run, "{app}");
        assert!(!run.is_empty(), "{app} printed nothing");
    }
}
