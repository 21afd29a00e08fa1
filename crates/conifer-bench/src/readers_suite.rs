//! What reading a large trace costs: each reader (`profile`, `matrix`, `sim`, the three
//! exports) on one trace of a 16-rank stencil, with its wall time, peak memory (GNU time's
//! `%M`), output size and throughput. Readers must stream: memory bounded by the compressed
//! trace plus one rank's state, not by the number of calls.

use crate::report::Table;
use crate::runner::Setup;
use serde_json::json;
use std::process::Command;
use std::time::Instant;

/// One reader's command line (after `conifer`), the output it writes (if any).
fn readers(trace: &str, out: &str) -> Vec<(&'static str, Vec<String>, Option<String>)> {
    let o = |name: &str| format!("{out}/{name}");
    let v = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        ("profile", v(&["profile", trace]), None),
        ("matrix", v(&["matrix", trace]), None),
        ("sim", v(&["sim", "--json", trace]), None),
        (
            "export otf2",
            v(&["export", "otf2", trace, "-o", &o("otf2")]),
            Some(o("otf2")),
        ),
        (
            "export chrome",
            v(&["export", "chrome", trace, "-o", &o("run.json")]),
            Some(o("run.json")),
        ),
        (
            "export simgrid",
            v(&["export", "simgrid", trace, "-o", &o("simgrid")]),
            Some(o("simgrid")),
        ),
    ]
}

/// Bytes under `path` (a file or a directory).
fn size(path: &str) -> u64 {
    let p = std::path::Path::new(path);
    if p.is_file() {
        return p.metadata().map_or(0, |m| m.len());
    }
    std::fs::read_dir(p)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| size(&e.path().display().to_string()))
                .sum()
        })
        .unwrap_or(0)
}

/// The readers on one 16-rank stencil trace (quick: 2,000 iterations; else 20,000).
pub fn readers_table(setup: &Setup, quick: bool) -> Result<Table, String> {
    let iterations = if quick { "2000" } else { "20000" };
    let ranks = if setup.mpi == "mpich" { 2 } else { 16 };
    let program = vec![
        setup.apps.join("stencil2d").display().to_string(),
        iterations.to_string(),
    ];
    setup.run(&setup.command(ranks, true, false, &program), true)?;
    let calls = setup.traced_calls()?;
    let trace = setup.scratch.join("readers.cft");
    std::fs::copy(setup.scratch.join("bench.cft"), &trace).map_err(|e| e.to_string())?;
    let trace_bytes = trace.metadata().map_or(0, |m| m.len());
    let mut table = Table::new(
        &format!("Reading a large trace ({})", setup.mpi),
        &format!(
            "stencil2d {iterations} on {ranks} ranks ({calls} calls, a {trace_bytes}-byte trace); \
             wall time, user CPU time and peak memory of each reader (GNU time; the machine \
             is shared, so CPU time is the steadier measure), its output and calls per second; \
             sim's events per second of its simulation and per CPU second of the whole run."
        ),
        &[
            "reader",
            "seconds",
            "CPU seconds",
            "peak KiB",
            "output bytes",
            "calls/s",
            "simulated events/s",
            "simulated events/CPU s",
        ],
    );
    let out = setup.scratch.join("readers-out");
    for (name, args, output) in readers(&trace.display().to_string(), &out.display().to_string()) {
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        let peak = setup.scratch.join("reader-peak.txt");
        let mut cmd = vec![
            "/usr/bin/time".to_string(),
            "-f".into(),
            "%M %U".into(),
            "-o".into(),
            peak.display().to_string(),
            setup.bin.join("conifer").display().to_string(),
        ];
        cmd.extend(args);
        let started = Instant::now();
        let result = Command::new(&cmd[0])
            .args(&cmd[1..])
            .env("CONIFER_NO_PROGRESS", "1")
            .output()
            .map_err(|e| format!("cannot run {name}: {e}"))?;
        let seconds = started.elapsed().as_secs_f64();
        if !result.status.success() {
            return Err(format!(
                "{name} failed: {}",
                String::from_utf8_lossy(&result.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            ));
        }
        let measured = std::fs::read_to_string(&peak).unwrap_or_default();
        let mut measured = measured.split_whitespace();
        let peak_kib: u64 = measured.next().and_then(|t| t.parse().ok()).unwrap_or(0);
        let cpu: f64 = measured.next().and_then(|t| t.parse().ok()).unwrap_or(0.0);
        let report = (name == "sim")
            .then(|| serde_json::from_slice::<serde_json::Value>(&result.stdout).ok())
            .flatten();
        let sim_events = report.as_ref().and_then(|v| v["events"].as_f64());
        let events = report
            .as_ref()
            .and_then(|v| Some(sim_events? / v["simulated_in_s"].as_f64()?));
        let events_per_cpu = sim_events.filter(|_| cpu > 0.0).map(|e| e / cpu);
        table.push(
            vec![
                json!(name),
                crate::measure::round(seconds, 2),
                crate::measure::round(cpu, 2),
                json!(peak_kib),
                output.map_or(json!(null), |o| json!(size(&o))),
                crate::measure::round(calls as f64 / seconds, 0),
                events.map_or(json!(null), |e| crate::measure::round(e, 0)),
                events_per_cpu.map_or(json!(null), |e| crate::measure::round(e, 0)),
            ],
            setup.shown(&cmd),
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    Ok(table)
}
