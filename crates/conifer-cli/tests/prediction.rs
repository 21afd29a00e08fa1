//! Prediction against measurement: recorded times leave out the recorder's own work, and
//! `conifer sim` with parameters calibrated here predicts the *untraced* run, measured by an
//! independent clock (`tests/tools/span.c`, preloaded alone: rank 0's end of `MPI_Init` to
//! start of `MPI_Finalize`). The tight targets (≤ 10% on average) are measured by `make
//! bench` on a quiet machine; here the bound is a factor of three around the measured runs,
//! which a shared machine's noise (a traced run descheduled for milliseconds) does not break
//! but a model that counted the recorder's cost (5.7× on this ring) would.

mod common;

use common::*;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The span library built with this MPI's compiler, once per test.
fn span_library(dir: &Path) -> PathBuf {
    let lib = dir.join("libspan.so");
    let source = repo_root().join("tests/tools/span.c");
    mpi_compile("mpicc", &["-O2", "-shared", "-fPIC"], &lib, &source);
    lib
}

/// Rank 0's span (ns) in each of `runs` untraced runs, smallest first.
fn untraced_spans(dir: &Path, lib: &Path, runs: usize, program: &Path, args: &[&str]) -> Vec<f64> {
    let out = dir.join("span.txt");
    let mut spans: Vec<f64> = (0..runs)
        .map(|_| {
            let _guard = mpi_lock();
            let _ = std::fs::remove_file(&out);
            let mut cmd = mpirun(2);
            if is_mpich() {
                cmd.args(["-genv", "LD_PRELOAD"]).arg(lib);
                cmd.args(["-genv", "SPAN_OUT"]).arg(&out);
            } else {
                cmd.arg("-x").arg(format!("LD_PRELOAD={}", lib.display()));
                cmd.arg("-x").arg(format!("SPAN_OUT={}", out.display()));
            }
            run_ok(cmd.arg(program).args(args));
            let text = std::fs::read_to_string(&out).expect("the span library wrote its file");
            text.trim().parse::<f64>().expect("a number of ns")
        })
        .collect();
    spans.sort_by(f64::total_cmp);
    spans
}

#[test]
fn recorded_times_leave_out_the_recorders_own_work() {
    let dir = scratch("prediction-clock");
    let micro = dir.join("micro");
    mpi_compile(
        "mpicc",
        &["-O2"],
        &micro,
        &repo_root().join("bench/apps/micro.c"),
    );
    let n = 100_000;
    let (trace, out) = traced_run(
        &dir,
        "micro",
        2,
        &["--timing", "lossless"],
        &micro,
        &["comm_rank", &n.to_string()],
    );
    // The program's own clock: the traced loop's wall time per MPI_Comm_rank, recorder
    // included.
    let wall: f64 = lines_with(&out.stdout, "NS_PER_ITER")[0]
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("micro prints NS_PER_ITER");
    // The trace's clock: rank 0's calls inside the loop, interval before plus duration.
    let calls: Vec<Json> = decode_all(&trace)
        .into_iter()
        .filter(|c| c["rank"] == 0 && c["function"] == "MPI_Comm_rank")
        .collect();
    assert!(calls.len() > n, "{} calls", calls.len());
    let mut per_call: Vec<f64> = calls
        .windows(2)
        .skip(1)
        .map(|w| {
            let end = w[0]["start_ns"].as_f64().unwrap() + w[0]["duration_ns"].as_f64().unwrap();
            w[1]["start_ns"].as_f64().unwrap() + w[1]["duration_ns"].as_f64().unwrap() - end
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    let median = per_call[per_call.len() / 2];
    // MPI_Comm_rank takes a few ns untraced; the recorder costs hundreds of ns a call with
    // lossless timing. What the trace shows must be well below what the program saw.
    assert!(
        median < 60.0 && median < wall / 2.0,
        "recorded {median} ns per call, the traced loop took {wall} ns per call"
    );
}

#[test]
fn predictions_follow_the_untraced_run() {
    if is_mpich() {
        // Debian's MPICH cannot be calibrated on this shared machine (README, "Calibrating").
        eprintln!("skipped under MPICH: no usable calibration here");
        return;
    }
    let dir = scratch("prediction");
    let net = dir.join("net.toml");
    {
        let _guard = mpi_lock();
        run_ok(
            Command::new(conifer())
                .args(["calibrate", "-n", "2", "--mpi", &mpi(), "-o"])
                .arg(&net),
        );
    }
    let lib = span_library(&dir);
    // Long enough (10–20 ms) that a millisecond of the machine's noise is not the answer.
    for (app, args) in [("ring", ["100000"]), ("stencil2d", ["8000"])] {
        let program = apps_dir().join(app);
        for timing in ["lossless", "aggregate"] {
            // Two busy-polling ranks on two cores slow down many times over when anything
            // else runs, in the untraced runs and in the traced one whose intervals the
            // prediction replays: the bound is taken around the fastest and the slowest of
            // five untraced runs, and a miss is measured again (up to three times) before
            // it counts.
            let mut attempts = Vec::new();
            let within = (0..3).any(|_| {
                let spans = untraced_spans(&dir, &lib, 5, &program, &args);
                let (fastest, slowest) = (spans[0], spans[spans.len() - 1]);
                let predicted = predict(&dir, &net, app, timing, &program, &args);
                attempts.push((predicted, spans));
                predicted > fastest / 3.0 && predicted < slowest * 3.0
            });
            assert!(
                within,
                "{app} ({timing} timing): (predicted ns, measured untraced ns) per attempt: \
                 {attempts:?}"
            );
        }
    }
}

/// The time `conifer sim` predicts with `net` for `program` traced on 2 ranks with `timing`.
fn predict(dir: &Path, net: &Path, app: &str, timing: &str, program: &Path, args: &[&str]) -> f64 {
    let trace = traced(
        dir,
        &format!("{app}-{timing}"),
        2,
        &["--timing", timing],
        program,
        args,
    );
    let out = run_ok(
        Command::new(conifer())
            .arg("sim")
            .arg(&trace)
            .args(["--json", "--net"])
            .arg(net),
    );
    let sim: Json = serde_json::from_slice(&out.stdout).expect("sim --json prints JSON");
    sim["total_ns"].as_f64().expect("total_ns")
}
