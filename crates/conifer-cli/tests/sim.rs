//! `conifer sim` on traces of the bundled test apps: the JSON's structure, predictions that
//! follow from the apps' code and the model by hand (computation switched off, latency set
//! high so the latency-bound message hops dominate), sweeps, and one-line errors.

mod common;

use common::*;
use serde_json::Value as Json;
use std::path::PathBuf;
use std::process::Command;

/// Traces `app` on 4 ranks with `args`.
fn trace(app: &str, args: &[&str]) -> PathBuf {
    let dir = scratch(&format!("sim-{app}"));
    traced(&dir, app, 4, &[], &apps_dir().join(app), args)
}

fn sim(trace: &PathBuf, args: &[&str]) -> Json {
    let out = run_ok(
        Command::new(conifer())
            .arg("sim")
            .arg(trace)
            .arg("--json")
            .args(args),
    );
    serde_json::from_slice(&out.stdout).expect("sim --json prints JSON")
}

fn f(v: &Json) -> f64 {
    v.as_f64().expect("a number")
}

#[test]
fn ring_is_latency_bound_hop_by_hop() {
    let t = trace("ring", &["5"]);
    // ring.c: 5 × MPI_Sendrecv of one MPI_LONG_LONG (8 B) to rank+1 from rank−1, nothing
    // else communicates. With no computation every rank's i-th receive waits for its left
    // neighbour's i-th send, posted right after that neighbour's (i−1)-th receive: one hop
    // per iteration. A hop (eager): send CPU o_s + 8·O, arrival o_s + 8·G + L after the
    // post, then o_r + 8·O to receive: L + o_s + o_r + 8·(G + O) = 100000 + 200 + 200 +
    // 8 × 0.2 = 100401.6 ns; 5 hops = 502008 ns.
    let r = sim(
        &t,
        &[
            "--compute-scale",
            "0",
            "--set",
            "L=100us,o=200ns,G=0.1ns/B,O=0.1ns/B,g=100ns",
        ],
    );
    let total = f(&r["total_ns"]);
    assert!((total - 502_008.0).abs() < 1.0, "predicted {total} ns");
    let ranks = r["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 4);
    for rank in ranks {
        assert_eq!(f(&rank["compute_ns"]), 0.0);
        let parts = f(&rank["compute_ns"]) + f(&rank["comm_ns"]) + f(&rank["wait_ns"]);
        assert!((parts - f(&rank["end_ns"])).abs() < 1e-3, "{rank}");
        assert!(f(&rank["wait_ns"]) > 4.0 * 100_000.0);
    }
    assert_eq!(r["messages"], 20);
    let top = &r["critical_path"][0];
    assert_eq!(top["function"], "MPI_Sendrecv");
    assert!((f(&top["ns"]) - total).abs() < 1.0);
    // With computation, the prediction is larger.
    let with = sim(&t, &["--set", "L=100us"]);
    assert!(f(&with["total_ns"]) > total);
}

#[test]
fn stencil2d_hops_and_sweep() {
    let t = trace("stencil2d", &["4"]);
    // stencil2d.c on a 2 × 2 grid: per iteration a halo exchange with the 2 neighbours
    // (1 latency-bound hop) and an MPI_Allreduce of 8 B (recursive doubling on 4 ranks:
    // 2 hops): at least 3 × L per iteration, 4 iterations.
    let l = 50_000.0;
    let r = sim(&t, &["--compute-scale", "0", "--set", "L=50us"]);
    let total = f(&r["total_ns"]);
    assert!(total >= 12.0 * l, "predicted {total} ns < 12 L");
    assert!(
        total <= 12.0 * l + 50_000.0,
        "predicted {total} ns, too far above 12 L"
    );
    let functions: Vec<&str> = r["critical_path"]
        .as_array()
        .expect("critical path")
        .iter()
        .filter_map(|c| c["function"].as_str())
        .collect();
    assert!(functions.contains(&"MPI_Allreduce"), "{functions:?}");
    assert!(functions.contains(&"MPI_Waitall"), "{functions:?}");
    // Forcing ring allreduce (2(n − 1) = 6 hops instead of 2) costs 4 more hops per
    // iteration.
    let ring = sim(
        &t,
        &[
            "--compute-scale",
            "0",
            "--set",
            "L=50us",
            "--coll",
            "allreduce=ring",
        ],
    );
    assert!(f(&ring["total_ns"]) >= total + 4.0 * 4.0 * l * 0.99);
    // A latency sweep: predictions grow with L.
    let sweep = sim(&t, &["--compute-scale", "0", "--sweep", "L=1us..100us:3"]);
    let rows = sweep.as_array().expect("rows");
    assert_eq!(rows.len(), 3);
    let times: Vec<f64> = rows.iter().map(|row| f(&row["total_ns"])).collect();
    assert!(times[0] < times[1] && times[1] < times[2], "{times:?}");
    // The same sweep drawn.
    let svg = t.with_extension("sweep.svg");
    run_ok(
        Command::new(conifer())
            .arg("sim")
            .arg(&t)
            .args([
                "--compute-scale",
                "0",
                "--sweep",
                "L=1us..100us:3",
                "--plot",
            ])
            .arg(&svg),
    );
    let picture = std::fs::read_to_string(&svg).expect("the picture is written");
    assert!(
        picture.starts_with("<svg"),
        "{}",
        &picture[..80.min(picture.len())]
    );
    assert!(picture.contains("Predicted run time against L"));
}

#[test]
fn bad_input_is_one_line() {
    let dir = scratch("sim-errors");
    let bogus = dir.join("bogus.cft");
    std::fs::write(&bogus, b"not a trace").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["sim", "/nonexistent/x.cft"], "cannot read"),
        (vec!["sim", bogus.to_str().unwrap()], "bogus.cft"),
        (vec!["sim", "x.cft", "--set", "L=fast"], "L"),
        (vec!["sim", "x.cft", "--set", "Q=1"], "unknown parameter"),
        (vec!["sim", "x.cft", "--coll", "bcast=ring"], "--coll"),
        (vec!["sim", "x.cft", "--sweep", "L=1us"], "--sweep"),
        (vec!["sim", "x.cft", "--plot", "a.svg"], "needs --sweep"),
        (
            vec!["sim", "x.cft", "--sweep", "L=1us..2us", "--plot", "a.txt"],
            ".svg",
        ),
        (vec!["sim", "x.cft", "--compute-scale=-1"], "compute-scale"),
    ];
    for (args, needle) in cases {
        let out = Command::new(conifer()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

/// This machine's processors online, as `getconf` reads them.
fn processors() -> u32 {
    let out = run_ok(Command::new("getconf").arg("_NPROCESSORS_ONLN"));
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// A run of one rank more than this host has processors is oversubscribed: `sim` warns, and
/// its JSON lists the host with its ranks and processors (the trace records them now); a run
/// of fewer ranks than processors draws no warning.
#[test]
fn sim_warns_when_the_traced_run_had_more_ranks_than_processors() {
    let cores = processors();
    let over = cores + 1;
    if over > if is_mpich() { 4 } else { 8 } {
        eprintln!("skipped: {cores} processors here: {over} ranks would be too many to launch");
        return;
    }
    let dir = scratch("sim-oversubscribed");
    let crowded = traced(&dir, "crowded", over, &[], &apps_dir().join("ring"), &["3"]);
    let out = run_ok(Command::new(conifer()).arg("sim").arg(&crowded));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("had {over} ranks on host"))
            && stderr.contains(&format!("with {cores} processors")),
        "{stderr}"
    );
    let json = sim(&crowded, &[]);
    let hosts = json["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 1, "{json}");
    assert_eq!(hosts[0]["ranks"], over);
    assert_eq!(hosts[0]["cores"], cores);
    assert_eq!(json["warnings"].as_array().unwrap().len(), 1);
    if cores >= 2 {
        let roomy = traced(&dir, "roomy", 2, &[], &apps_dir().join("ring"), &["3"]);
        let out = run_ok(Command::new(conifer()).arg("sim").arg(&roomy));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("warning"), "{stderr}");
    }
}
