//! The timing codecs against what the recorder measured. `--timing lossy:0.1` with `--raw`
//! writes, besides the trace, every call's exact interval and duration (`rank<R>.times` in the
//! raw record, from the same clock readings the codec quantised): every value decoded from the
//! trace is within 10% of it, call for call, on every bundled C app. `--timing histogram`:
//! each family's bins count its calls, which add up per function to the calls `conifer
//! decode` lists.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const REL: f64 = 0.1;

/// Per (rank, thread), the exact (interval, duration) of each call, from the raw record.
fn raw_times(raw: &Path, ranks: u32) -> BTreeMap<(u64, u64), Vec<(u64, u64)>> {
    let mut times: BTreeMap<(u64, u64), Vec<(u64, u64)>> = BTreeMap::new();
    for rank in 0..ranks {
        let path = raw.join(format!("rank{rank}.times"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        for line in text.lines() {
            let f: Vec<u64> = line.split(' ').map(|v| v.parse().unwrap()).collect();
            assert_eq!(f.len(), 3, "{path:?}: {line:?}");
            times
                .entry((u64::from(rank), f[0]))
                .or_default()
                .push((f[1], f[2]));
        }
    }
    times
}

/// Per (rank, thread), the (interval, duration) of each call `conifer decode --json` shows:
/// the interval is the start less the end of the thread's previous call (its clock starts at 0).
fn decoded_times(trace: &Path) -> BTreeMap<(u64, u64), Vec<(u64, u64)>> {
    let mut times: BTreeMap<(u64, u64), Vec<(u64, u64)>> = BTreeMap::new();
    let mut ends: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for call in decode_all(trace) {
        let key = (
            call["rank"].as_u64().unwrap(),
            call["thread"].as_u64().unwrap(),
        );
        let start = call["start_ns"].as_u64().expect("every call has its start");
        let duration = call["duration_ns"].as_u64().expect("and its duration");
        let end = ends.entry(key).or_insert(0);
        assert!(
            start >= *end,
            "{key:?}: a call starts before the previous ended"
        );
        times.entry(key).or_default().push((start - *end, duration));
        *end = start + duration;
    }
    times
}

fn relative_error(truth: u64, back: u64) -> f64 {
    if truth == 0 {
        if back == 0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (back as f64 - truth as f64).abs() / truth as f64
    }
}

#[test]
fn lossy_timing_keeps_every_value_within_the_bound_on_every_app() {
    let apps = apps_dir();
    for (app, ranks, args) in bundled_apps() {
        let dir = scratch(&format!("timing-lossy-{app}"));
        let timing = format!("lossy:{REL}");
        let options = ["--raw", "--timing", &timing];
        let trace = traced(&dir, app, ranks, &options, &apps.join(app), &args);
        // The calls themselves, in order, are the raw record's.
        let verify = run_ok(Command::new(conifer()).arg("verify").arg(&trace));
        assert!(
            String::from_utf8_lossy(&verify.stdout).starts_with("identical:"),
            "{app}: verify"
        );
        let truth = raw_times(&dir.join(format!("{app}.cft.raw")), ranks);
        let decoded = decoded_times(&trace);
        assert_eq!(
            decoded.keys().collect::<Vec<_>>(),
            truth.keys().collect::<Vec<_>>(),
            "{app}: threads"
        );
        let (mut max, mut sum, mut values) = (0.0f64, 0.0, 0u64);
        for (key, exact) in &truth {
            let back = &decoded[key];
            assert_eq!(back.len(), exact.len(), "{app} {key:?}: calls");
            for (i, (t, b)) in exact.iter().zip(back).enumerate() {
                for (v, r) in [(t.0, b.0), (t.1, b.1)] {
                    let e = relative_error(v, r);
                    assert!(e <= REL, "{app} {key:?} call {i}: {v} ns decoded as {r}");
                    max = max.max(e);
                    sum += e;
                    values += 1;
                }
            }
        }
        // What stats reports is what the values show.
        let stats = stats_json(&trace)["timing"].clone();
        assert_eq!(stats["mode"], timing.as_str(), "{app}: META options");
        let reported = stats["max_relative_error"].as_f64().unwrap();
        assert!(
            (reported - max).abs() < 1e-9,
            "{app}: max {reported} vs {max}"
        );
        let mean = stats["mean_relative_error"].as_f64().unwrap();
        let own_mean = sum / values as f64;
        assert!(
            (mean - own_mean).abs() < 1e-6,
            "{app}: mean {mean} vs {own_mean}"
        );
        assert!(stats["bytes_by_section"]["TMLN"].as_u64().unwrap() > 0);
    }
}

#[test]
fn histogram_bins_count_every_call_of_their_family() {
    let apps = apps_dir();
    for (app, ranks, args) in [
        ("stencil2d", 4, ["4"]),
        ("mg", 8, ["2"]),
        ("cg", 4, ["3"]),
        ("threads", 2, ["3"]),
    ] {
        let dir = scratch(&format!("timing-histogram-{app}"));
        let options = ["--timing", "histogram"];
        let trace = traced(&dir, app, ranks, &options, &apps.join(app), &args);
        let mut decoded: BTreeMap<String, u64> = BTreeMap::new();
        for call in decode_all(&trace) {
            *decoded
                .entry(call["function"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
        let timing = stats_json(&trace)["timing"].clone();
        assert_eq!(timing["mode"], "histogram", "{app}: META options");
        assert!(timing["bytes_by_section"]["THST"].as_u64().unwrap() > 0);
        let mut binned: BTreeMap<String, u64> = BTreeMap::new();
        for family in timing["histograms"].as_array().unwrap() {
            let total = |bins: &str| -> u64 {
                family[bins]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b[3].as_u64().unwrap())
                    .sum()
            };
            let calls = family["calls"].as_u64().unwrap();
            assert_eq!(total("duration_bins"), calls, "{app}: {family}");
            assert_eq!(total("interval_bins"), calls, "{app}: {family}");
            let p = &family["duration_percentiles_ns"];
            assert!(
                p["p50"].as_f64() <= p["p90"].as_f64() && p["p90"].as_f64() <= p["p99"].as_f64()
            );
            *binned
                .entry(family["function"].as_str().unwrap().to_string())
                .or_default() += calls;
        }
        // `free` events are timed like calls and decoded like them.
        assert_eq!(binned, decoded, "{app}: binned calls per function");
    }
}

#[test]
fn a_timing_the_recorder_does_not_know_is_named_and_aggregate_timing_recorded() {
    let dir = scratch("timing-unknown-env");
    let trace = dir.join("ring.cft");
    let out = {
        let _lock = mpi_lock();
        run_ok(
            Command::new("timeout")
                .arg("300")
                .arg(conifer())
                .args(["run", "-n", "2", "-o"])
                .arg(&trace)
                .arg(apps_dir().join("ring"))
                .arg("3")
                .env("CONIFER_TIMING", "bogus")
                .current_dir(&dir),
        )
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("CONIFER_TIMING"))
        .collect();
    // Once per rank, naming the value and what is recorded instead.
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(warnings[0].contains("\"bogus\"") && warnings[0].contains("aggregate"));
    let timing = stats_json(&trace)["timing"].clone();
    assert_eq!(timing["mode"], "aggregate");
    assert!(timing["bytes_by_section"].get("TMLN").is_none());
}
