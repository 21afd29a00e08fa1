//! `conifer calibrate`: the benchmark compiled and run under this build's MPI, parameters
//! fitted and written as a file `conifer sim --net` reads, with physically sensible values;
//! one-line errors without the MPI's tools.

mod common;

use common::*;
use serde_json::Value as Json;
use std::process::Command;

fn f(v: &Json) -> f64 {
    v.as_f64().expect("a number")
}

/// Open MPI's calibration: values a shared-memory MPI on one machine can have, and a fit
/// within 60% RMS.
fn physically_sensible(v: &Json) {
    let p = &v["params"];
    // Shared memory on one machine: latency below 100 µs, bandwidth between 100 MB/s and
    // 1 TB/s, overheads below 100 µs, the eager limit one of the sizes. (On a quiet machine
    // a small message's one-way time is no more than the send and receive overheads the
    // benchmark measures on their own, so the fit may leave nothing for L: its floor.)
    let latency = f(&p["latency"]);
    assert!(latency > 0.0 && latency < 1e5, "{p}");
    for key in ["rendezvous", "self_overhead"] {
        assert!(f(&p[key]) > 0.0 && f(&p[key]) < 1e5, "{key}: {p}");
    }
    let self_per_byte = f(&p["self_per_byte"]);
    assert!(self_per_byte > 1e-4 && self_per_byte < 10.0, "{p}");
    let per_byte = f(&p["gap_per_byte"]);
    assert!(per_byte > 1e-3 && per_byte < 10.0, "{p}");
    for key in ["send_overhead", "recv_overhead", "gap", "copy_per_byte"] {
        assert!(f(&p[key]) > 0.0 && f(&p[key]) < 1e5, "{key}: {p}");
    }
    let sizes: Vec<u64> = v["benchmark"]["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|s| s["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes.len(), 8, "{sizes:?}");
    let eager = p["eager_limit"].as_u64().unwrap();
    assert!(eager == 0 || sizes.contains(&eager), "{eager} {sizes:?}");
    // The fit: within 60% RMS. Here it is 25–40%: one G cannot give Open MPI's shared
    // memory both its ping-pong times and its twice-as-fast trains at 16 KiB–1 MiB, and
    // `--quick` takes few repetitions on a shared machine.
    let error = f(&v["error"]["overall"]);
    assert!(error < 0.6, "fit error {error}");
}

#[test]
fn quick_calibration_feeds_the_simulator() {
    let dir = scratch("calibrate");
    let net = dir.join("net.toml");
    let out = {
        let _lock = mpi_lock();
        run_ok(
            Command::new(conifer())
                .args([
                    "calibrate",
                    "-n",
                    "2",
                    "--quick",
                    "--json",
                    "--mpi",
                    &mpi(),
                    "-o",
                ])
                .arg(&net),
        )
    };
    let v: Json = serde_json::from_slice(&out.stdout).expect("calibrate --json prints JSON");
    let p = &v["params"];
    // Debian's MPICH (ch4:ucx) measures erratically on this shared 2-core machine: a 512 B
    // ping-pong takes 4x a 64 B one, trains of 512 B-4 KiB messages end before one
    // ping-pong does, and the fit degenerates (G near 1e-5 ns/B). The physical bounds and
    // the fit error are checked with Open MPI; with MPICH the file must still round-trip.
    if is_mpich() {
        eprintln!("MPICH: fitted {p}, fit error {}", v["error"]["overall"]);
    } else {
        physically_sensible(&v);
    }

    // The file feeds `conifer sim --net`, which reports the same values.
    let text = std::fs::read_to_string(&net).expect("the file is written");
    assert!(
        text.starts_with("# written by `conifer calibrate`"),
        "{text}"
    );
    let trace = traced(&dir, "ring", 2, &[], &apps_dir().join("ring"), &["5"]);
    let out = run_ok(
        Command::new(conifer())
            .arg("sim")
            .arg(&trace)
            .arg("--json")
            .arg("--net")
            .arg(&net),
    );
    let sim: Json = serde_json::from_slice(&out.stdout).expect("sim --json prints JSON");
    for key in [
        "latency",
        "send_overhead",
        "gap_per_byte",
        "eager_limit",
        "rendezvous",
        "self_overhead",
    ] {
        assert!(
            (f(&sim["params"][key]) - f(&p[key])).abs() <= 1e-9 * f(&p[key]).abs(),
            "{key}: {} vs {}",
            sim["params"][key],
            p[key]
        );
    }
    assert!(f(&sim["total_ns"]) > 0.0);
}

#[test]
fn missing_tools_and_bad_flags_are_one_line() {
    let dir = scratch("calibrate-errors");
    let net = dir.join("net.toml");
    let empty = dir.join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let cases: Vec<(Vec<&str>, Option<&std::path::Path>, &str)> = vec![
        (vec!["-n", "1"], None, "at least 2"),
        (vec!["--mpi", "lam"], None, "lam"),
        (vec![], Some(&empty), "not found on PATH"),
    ];
    for (args, path, needle) in cases {
        let mut cmd = Command::new(conifer());
        cmd.arg("calibrate").args(&args).arg("-o").arg(&net);
        if let Some(path) = path {
            cmd.env("PATH", path);
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        if path.is_some() || args[0] == "-n" {
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        }
    }
    assert!(!net.exists());
}

/// A fitted latency under a nanosecond prints as `0ns`: the output and the parameter file
/// say what it means (below what the benchmark resolves, absorbed into the overheads), and
/// say nothing when the latency is measurable. On this machine's shared memory it is under
/// a nanosecond with Open MPI.
#[test]
fn a_latency_of_zero_is_explained() {
    let dir = scratch("calibrate-zero");
    let net = dir.join("net.toml");
    let out = {
        let _lock = mpi_lock();
        run_ok(
            Command::new(conifer())
                .args(["calibrate", "-n", "2", "--quick", "--mpi", &mpi(), "-o"])
                .arg(&net),
        )
    };
    let said = String::from_utf8_lossy(&out.stdout);
    let file = std::fs::read_to_string(&net).unwrap();
    let latency: f64 = file
        .lines()
        .find_map(|l| l.strip_prefix("L = "))
        .expect("the file sets L")
        .trim()
        .parse()
        .unwrap();
    let explained = "below what the benchmark resolves";
    if latency < 1.0 {
        assert!(said.contains("0ns   latency"), "{said}");
        assert!(said.contains(explained), "{said}");
        assert!(
            file.lines()
                .any(|l| l.starts_with('#') && l.contains(explained)),
            "{file}"
        );
    } else {
        assert!(!said.contains(explained), "{said}");
        assert!(!file.contains(explained), "{file}");
    }
}
