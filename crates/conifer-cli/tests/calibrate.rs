//! `conifer calibrate`: the benchmark compiled and run under this build's MPI, parameters
//! fitted to its measurements and written as a file `conifer sim --net` reads; one-line
//! errors without the MPI's tools. The fit is judged against the measurements it was given,
//! never against what this host should measure.

mod common;

use common::*;
use serde_json::Value as Json;
use std::process::Command;

fn f(v: &Json) -> f64 {
    v.as_f64().expect("a number")
}

/// Measured values below this are taken as this in relative differences (ns): the fit's
/// documented floor for noise (`conifer_sim::calibrate`).
const NOISE_NS: f64 = 100.0;

/// `(model − measured) / max(measured, NOISE_NS)`.
fn relative(model: f64, measured: f64) -> f64 {
    (model - measured) / measured.max(NOISE_NS)
}

/// The fitted parameters, by the names `--json` gives them.
type Params = std::collections::BTreeMap<String, f64>;

fn params_of(v: &Json) -> Params {
    v["params"]
        .as_object()
        .expect("params")
        .iter()
        .map(|(k, x)| (k.clone(), f(x)))
        .collect()
}

/// The four observables of one benchmark sample, as the benchmark defines them: one-way
/// time `rtt/2`, gap per message `(train − rtt)/(n − 1)`, sender's time per message
/// `(train_delayed − rtt)/(n − 1) − delay`, and the late receive.
fn observed(s: &Json, train_length: f64) -> [f64; 4] {
    let n1 = train_length - 1.0;
    [
        f(&s["rtt"]) / 2.0,
        (f(&s["train"]) - f(&s["rtt"])) / n1,
        (f(&s["train_delayed"]) - f(&s["rtt"])) / n1 - f(&s["delay"]),
        f(&s["recv"]),
    ]
}

/// The LogGP-family model's observables for `bytes` with `delay` between a delayed train's
/// sends: eager messages pipeline at the slowest of the sender's copy, the gap, the wire and
/// the receiver's copy; rendezvous ones take three hops, the sender blocked until its data
/// left (the derivations of `conifer_sim::calibrate::predict`, written out here).
fn model(p: &Params, bytes: f64, delay: f64) -> [f64; 4] {
    let (l, os, or, g) = (
        p["latency"],
        p["send_overhead"],
        p["recv_overhead"],
        p["gap"],
    );
    let wire = bytes * p["gap_per_byte"];
    if bytes <= p["eager_limit"] {
        let send = os + bytes * p["copy_per_byte"];
        let recv = or + bytes * p["copy_per_byte"];
        let interval = send.max(g).max(wire).max(recv);
        [
            os + wire + l + recv,
            interval,
            (send + delay).max(interval) - delay,
            recv,
        ]
    } else {
        let r = p["rendezvous"];
        [
            2.0 * os + 3.0 * l + r + wire + or,
            2.0 * l + r + os.max(or) + os + wire,
            (delay + os).max(or) + os + 2.0 * l + r + wire - delay,
            2.0 * l + r + os + wire + or,
        ]
    }
}

/// Relative RMS differences of `p`'s model from the benchmark's observables: overall and
/// per observable.
fn fit_error(p: &Params, benchmark: &Json) -> (f64, [f64; 4]) {
    let samples = benchmark["samples"].as_array().expect("samples");
    let n = f(&benchmark["train_length"]);
    let mut sums = [0.0; 4];
    for s in samples {
        let (o, m) = (observed(s, n), model(p, f(&s["bytes"]), f(&s["delay"])));
        for k in 0..4 {
            sums[k] += relative(m[k], o[k]).powi(2);
        }
    }
    let count = samples.len() as f64;
    (
        (sums.iter().sum::<f64>() / (4.0 * count)).sqrt(),
        sums.map(|x| (x / count).sqrt()),
    )
}

/// Relative RMS difference of `self + bytes·selfG` from the messages to self.
fn self_error(p: &Params, benchmark: &Json) -> f64 {
    let squares: Vec<f64> = benchmark["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let model = p["self_overhead"] + f(&s["bytes"]) * p["self_per_byte"];
            relative(model, f(&s["self_exchange"])).powi(2)
        })
        .collect();
    (squares.iter().sum::<f64>() / squares.len() as f64).sqrt()
}

/// `p` with `key` moved by `factor`, at least `least` (never below `floor`).
fn moved(p: &Params, key: &str, factor: f64, least: f64, floor: f64) -> Params {
    let mut q = p.clone();
    let x = p[key];
    let step = (x * (factor - 1.0)).abs().max(least);
    q.insert(
        key.to_string(),
        if factor < 1.0 { x - step } else { x + step }.max(floor),
    );
    q
}

/// What the calibration's own measurements imply, whatever the host's speed or load: the
/// parameters are positive and finite, the eager limit is one of the measured sizes (or 0),
/// the reported fit errors are the relative RMS differences of the model with these
/// parameters from these measurements (recomputed here), and the fit is a local minimum of
/// them: no parameter moved by ±10% (by at least 0.5 ns, twice the rounding of times, for
/// times) reproduces the measurements better.
fn fit_follows_its_measurements(v: &Json) {
    let p = params_of(v);
    let b = &v["benchmark"];
    for (key, x) in &p {
        assert!(
            x.is_finite() && *x > 0.0 || key == "eager_limit",
            "{key}: {p:?}"
        );
    }
    let sizes: Vec<u64> = b["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|s| s["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes.len(), 8, "{sizes:?}");
    let eager = v["params"]["eager_limit"].as_u64().unwrap();
    assert!(eager == 0 || sizes.contains(&eager), "{eager} {sizes:?}");

    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12);
    let (overall, by_observable) = fit_error(&p, b);
    let e = &v["error"];
    eprintln!("fitted {p:?}: error {overall}, per observable {by_observable:?}");
    assert!(close(overall, f(&e["overall"])), "{overall} vs {e}");
    for (k, x) in by_observable.iter().enumerate() {
        assert!(close(*x, f(&e["by_observable"][k])), "{k}: {x} vs {e}");
    }
    let own_self = self_error(&p, b);
    assert!(close(own_self, f(&e["self_exchange"])), "{own_self} vs {e}");

    // (parameter, least step, floor): the fit's floors, `conifer_sim::calibrate::FLOOR`.
    let network = [
        ("latency", 0.5, 0.1),
        ("send_overhead", 0.5, 0.1),
        ("recv_overhead", 0.5, 0.1),
        ("gap", 0.5, 0.1),
        ("gap_per_byte", 0.0, 1e-6),
        ("copy_per_byte", 0.0, 1e-6),
        ("rendezvous", 0.5, 0.1),
    ];
    let no_better = |error: f64, best: f64| error >= best * (1.0 - 1e-6);
    for (key, least, floor) in network {
        for factor in [0.9, 1.1] {
            let q = moved(&p, key, factor, least, floor);
            let error = fit_error(&q, b).0;
            assert!(
                no_better(error, overall),
                "{key} × {factor}: error {error} < the fit's {overall}"
            );
        }
    }
    for (key, least) in [("self_overhead", 0.5), ("self_per_byte", 0.0)] {
        for factor in [0.9, 1.1] {
            let error = self_error(&moved(&p, key, factor, least, 1e-6), b);
            assert!(
                no_better(error, own_self),
                "{key} × {factor}: self error {error} < the fit's {own_self}"
            );
        }
    }
}

/// Both MPIs: the fit checked against its own measurements (nothing against what this host
/// should measure: on a busy host the measurements, and with them the fit's error, can be
/// anything), and the file it writes feeds `conifer sim --net` with the same values.
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
    fit_follows_its_measurements(&v);

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
