//! Trace tree against grammar (CYPRESS's top-down compression against Pilgrim's bottom-up
//! one) on the same binaries: programs built with `conifer cc`, traced once with
//! `CONIFER_TREE=1` and once with `CONIFER_TREE=0`, runs interleaved.

use crate::measure::{micro_loops, ns_per_iter, repetitions, round};
use crate::report::Table;
use crate::runner::{median, RunResult, Setup};
use serde_json::json;

/// The two recorders compared.
const MODES: [(&str, &str); 2] = [("tree", "1"), ("grammar", "0")];

/// `cmd` with `CONIFER_TREE` set for the launcher and the ranks it starts.
fn with_mode(flag: &str, cmd: Vec<String>) -> Vec<String> {
    let mut out = vec!["env".to_string(), format!("CONIFER_TREE={flag}")];
    out.extend(cmd);
    out
}

/// Per-call overhead of each recorder on the `conifer cc` build of `micro`.
pub fn overhead(setup: &Setup, quick: bool) -> Result<Table, String> {
    let mut table = Table::new(
        &format!("Trace tree vs grammar: per-call overhead ({})", setup.mpi),
        "micro built with `conifer cc` (its loops carry structure hooks), 2 ranks; untraced, \
         tree and grammar runs interleaved; overhead per call = median of (traced - untraced) / \
         MPI calls per iteration, as in the per-call table.",
        &[
            "loop",
            "iterations",
            "untraced ns/iter",
            "tree ns/call",
            "grammar ns/call",
        ],
    );
    let reps = repetitions(quick);
    for (kind, calls, iterations) in micro_loops(quick, true) {
        let micro = setup.tree_bench_apps.join("micro").display().to_string();
        let program = vec![micro, kind.to_string(), iterations.to_string()];
        let plain_cmd = setup.command(2, false, false, &program);
        let mut plain = Vec::new();
        let mut traced: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut shown = String::new();
        for _ in 0..reps {
            let p = ns_per_iter(&setup.run(&plain_cmd, false)?)?;
            plain.push(p);
            for (i, (_, flag)) in MODES.iter().enumerate() {
                let cmd = with_mode(flag, setup.command(2, true, false, &program));
                shown = setup.shown(&cmd);
                let t = ns_per_iter(&setup.run(&cmd, true)?)?;
                traced[i].push((t - p) / f64::from(calls));
            }
        }
        table.push(
            vec![
                json!(kind),
                json!(iterations),
                round(median(&plain), 1),
                round(median(&traced[0]), 1),
                round(median(&traced[1]), 1),
            ],
            shown,
        );
    }
    Ok(table)
}

/// What one traced run of an app says.
struct Sample {
    bytes: f64,
    merge_ms: f64,
    /// Computing part of the merge, summed over ranks.
    merge_work_ms: f64,
    merge_kib: f64,
    peak_kib: f64,
}

fn sample(r: &RunResult) -> Result<Sample, String> {
    let peaks: Vec<f64> = r.peak_kib.iter().map(|&k| k as f64).collect();
    if peaks.is_empty() || r.merge.is_empty() {
        return Err("the run reported no peak memory or merge cost".into());
    }
    Ok(Sample {
        bytes: r.trace_bytes.unwrap_or(0) as f64,
        merge_ms: r.merge.iter().map(|m| m.ms).fold(0.0, f64::max),
        merge_work_ms: r.merge.iter().map(|m| m.work_ms).sum(),
        merge_kib: r.merge.iter().map(|m| m.kib).max().unwrap_or(0) as f64,
        peak_kib: median(&peaks),
    })
}

/// Trace bytes, merge time and memory, and peak memory per rank, of each recorder.
pub fn scaling(setup: &Setup, quick: bool) -> Result<Table, String> {
    let mut table = Table::new(
        &format!(
            "Trace tree vs grammar: size, merge and memory ({})",
            setup.mpi
        ),
        "Test apps built with `conifer cc/fc`, traced both ways (runs interleaved, medians). \
         merge ms / KiB: slowest rank's merge time (waits included) and largest rise of a \
         rank's resident memory during the merge; merge work ms: time all ranks spent computing \
         the merge (building, encoding, decoding and joining records, no waits), summed; peak \
         KiB: median over ranks of GNU time's maximum resident set.",
        &[
            "app",
            "ranks",
            "iterations",
            "tree bytes",
            "grammar bytes",
            "tree merge ms",
            "grammar merge ms",
            "tree merge work ms",
            "grammar merge work ms",
            "tree merge KiB",
            "grammar merge KiB",
            "tree peak KiB",
            "grammar peak KiB",
        ],
    );
    let mpich = setup.mpi == "mpich";
    let ranks: &[u32] = match (mpich, quick) {
        (true, _) => &[4],
        (false, true) => &[4, 16],
        (false, false) => &[4, 16, 64],
    };
    let apps: &[&str] = if quick {
        &["stencil3d", "mg"]
    } else {
        &["stencil2d", "stencil3d", "mg", "ring", "waitany", "comms"]
    };
    let iterations = if mpich { "10" } else { "100" };
    let reps = if quick { 1 } else { 3 };
    for &app in apps {
        for &n in ranks {
            let program = vec![
                setup.tree_apps.join(app).display().to_string(),
                iterations.to_string(),
            ];
            let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
            let mut shown = String::new();
            for _ in 0..reps {
                for (i, (_, flag)) in MODES.iter().enumerate() {
                    let cmd = with_mode(flag, setup.command(n, true, true, &program));
                    shown = setup.shown(&cmd);
                    samples[i].push(sample(&setup.run(&cmd, true)?)?);
                }
            }
            let med = |i: usize, f: fn(&Sample) -> f64, digits| {
                let v: Vec<f64> = samples[i].iter().map(f).collect();
                round(median(&v), digits)
            };
            table.push(
                vec![
                    json!(app),
                    json!(n),
                    json!(iterations),
                    med(0, |s| s.bytes, 0),
                    med(1, |s| s.bytes, 0),
                    med(0, |s| s.merge_ms, 1),
                    med(1, |s| s.merge_ms, 1),
                    med(0, |s| s.merge_work_ms, 2),
                    med(1, |s| s.merge_work_ms, 2),
                    med(0, |s| s.merge_kib, 0),
                    med(1, |s| s.merge_kib, 0),
                    med(0, |s| s.peak_kib, 0),
                    med(1, |s| s.peak_kib, 0),
                ],
                shown,
            );
        }
    }
    Ok(table)
}
