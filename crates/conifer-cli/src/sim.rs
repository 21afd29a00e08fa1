//! `conifer sim FILE.cft`: the run predicted by the trace-driven simulator (`conifer-sim`):
//! total time, each rank's computation / communication / waiting, the critical path's top
//! contributors; `--sweep` predicts over a range of one parameter.

use conifer_sim::collectives::Rule;
use conifer_sim::params::{self, Params};
use conifer_sim::{Options, Report};
use conifer_trace::decode::human_time;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// What the command line asked for.
pub struct Args<'a> {
    /// The trace.
    pub file: &'a Path,
    /// A parameter file.
    pub net: Option<&'a Path>,
    /// `--set` assignments.
    pub set: Option<&'a str>,
    /// `--compute-scale`.
    pub compute_scale: Option<f64>,
    /// `--coll` algorithm overrides.
    pub coll: Option<&'a str>,
    /// `--sweep KEY=A..B[:N]`.
    pub sweep: Option<&'a str>,
    /// `--plot FILE`: the sweep as a picture.
    pub plot: Option<&'a Path>,
    /// Critical-path contributors to list.
    pub top: usize,
    /// JSON output.
    pub json: bool,
}

/// Runs `conifer sim`.
pub fn run(args: &Args) -> Result<ExitCode, String> {
    let mut p = Params::default();
    if let Some(net) = args.net {
        let text = std::fs::read_to_string(net)
            .map_err(|e| format!("cannot read {}: {e}", net.display()))?;
        p.set_file(&text)
            .map_err(|e| format!("{}: {e}", net.display()))?;
    }
    if let Some(set) = args.set {
        p.set_all(set).map_err(|e| format!("--set: {e}"))?;
    }
    if let Some(x) = args.compute_scale {
        if !(x.is_finite() && x >= 0.0) {
            return Err(format!("--compute-scale: {x} is not a number ≥ 0"));
        }
        p.compute_scale = x;
    }
    let rule = Rule::with_overrides(args.coll.unwrap_or("")).map_err(|e| format!("--coll: {e}"))?;
    let sweep = args.sweep.map(parse_sweep).transpose()?;
    if let Some(plot) = args.plot {
        let ext = plot
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if sweep.is_none() || !matches!(ext.as_deref(), Some("svg" | "png")) {
            return Err(format!(
                "--plot {}: needs --sweep and a file ending in .svg or .png",
                plot.display()
            ));
        }
    }
    let trace = conifer_trace::open(args.file)?;
    let mut options = Options {
        params: p,
        rule,
        top: args.top,
    };
    if let Some((key, unit, values)) = sweep {
        let mut points = Vec::new();
        for x in values {
            options.params = p;
            options.params.set(&key, &format!("{x}{unit}"))?;
            let r = conifer_sim::simulate(&trace, &options)?;
            points.push((x, r.total_ns));
        }
        if let Some(plot) = args.plot {
            let name = args.file.file_name().unwrap_or_default().to_string_lossy();
            let s = crate::plot::sweep::Sweep {
                key: &key,
                unit,
                points: &points,
                name: &name,
            };
            crate::plot::sweep::write(&s, plot)?;
        }
        return print_sweep(&key, unit, &points, args.json).map(|()| ExitCode::SUCCESS);
    }
    let warnings = oversubscription_warnings(&trace);
    for w in &warnings {
        eprintln!("conifer sim: warning: {w}");
    }
    let started = Instant::now();
    let report = conifer_sim::simulate(&trace, &options)?;
    let seconds = started.elapsed().as_secs_f64();
    let timing = computation_source(&trace);
    if args.json {
        let mut v = serde_json::to_value(&report).map_err(|e| e.to_string())?;
        v["timing"] = timing.into();
        v["simulated_in_s"] = seconds.into();
        v["hosts"] = serde_json::to_value(conifer_analyze::hosts::hosts(&trace))
            .map_err(|e| e.to_string())?;
        v["warnings"] = warnings.into();
        crate::output::emit_json(&v)?;
    } else {
        crate::output::emit(&text(&report, timing, seconds))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One warning per host where the traced run had more ranks than processors: its measured
/// times include ranks waiting for a core, which the prediction (a core per rank) does not.
fn oversubscription_warnings(trace: &conifer_trace::Trace) -> Vec<String> {
    conifer_analyze::hosts::hosts(trace)
        .into_iter()
        .filter(|h| h.oversubscribed())
        .map(|h| {
            format!(
                "the traced run had {} ranks on host {} with {} processors: its measured times \
                 include ranks waiting for a core, the prediction gives each rank its own; \
                 compare it with a run of at most {} ranks per host",
                h.ranks, h.name, h.cores, h.cores
            )
        })
        .collect()
}

/// Where the simulated computation comes from: always the run without the recorder (the
/// recorder's own time is left out, so the prediction is of an untraced run).
fn computation_source(trace: &conifer_trace::Trace) -> &'static str {
    use conifer_export::timeline::Timestamps;
    let replayed = trace
        .meta
        .options
        .iter()
        .any(|o| o == conifer_sim::replayed::OPTION);
    if replayed {
        return match conifer_export::timeline::timestamps(trace) {
            Timestamps::Reconstructed => {
                "measured by `conifer replay` on the replay's machine: each call's timing \
                 family's mean replayed interval, scaled to the rank's replayed total"
            }
            _ => "each call's interval measured by `conifer replay` on the replay's machine",
        };
    }
    match conifer_export::timeline::timestamps(trace) {
        Timestamps::Exact => {
            "each call's recorded interval, exact (--timing lossless), without the recorder's \
             own time"
        }
        Timestamps::Bounded => {
            "each call's recorded interval within its relative error (--timing lossy:REL), \
             without the recorder's own time"
        }
        Timestamps::Reconstructed => {
            "each call's timing family's mean interval, scaled to the rank's exact total, \
             without the recorder's own time"
        }
    }
}

/// `KEY=A..B[:N]` → the key, the unit of its values and N values from A to B, evenly
/// spaced.
fn parse_sweep(text: &str) -> Result<(String, &'static str, Vec<f64>), String> {
    let bad = || {
        format!("--sweep: bad range {text:?}: expected KEY=FROM..TO[:POINTS], e.g. L=1us..100us")
    };
    let (key, range) = text.split_once('=').ok_or_else(bad)?;
    let (range, points) = match range.rsplit_once(':') {
        Some((r, n)) => (
            r,
            n.parse::<usize>()
                .ok()
                .filter(|n| *n >= 2)
                .ok_or_else(bad)?,
        ),
        None => (range, 5),
    };
    let (from, to) = range.split_once("..").ok_or_else(bad)?;
    let (a, b, unit) = match key {
        "L" | "o" | "os" | "or" | "g" | "R" | "self" => {
            (params::time(from), params::time(to), "ns")
        }
        "G" | "O" | "selfG" => (params::per_byte(from), params::per_byte(to), "ns/B"),
        "compute" => (from.parse().ok(), to.parse().ok(), ""),
        _ => {
            return Err(format!(
            "--sweep: cannot sweep {key:?}: use L, o, os, or, g, G, O, R, self, selfG or compute"
        ))
        }
    };
    let (a, b) = a.zip(b).ok_or_else(bad)?;
    let values = (0..points)
        .map(|i| a + (b - a) * i as f64 / (points - 1) as f64)
        .collect();
    Ok((key.to_string(), unit, values))
}

fn print_sweep(key: &str, unit: &str, rows: &[(f64, f64)], json: bool) -> Result<(), String> {
    let rows: Vec<(String, f64)> = rows
        .iter()
        .map(|(x, t)| (format!("{x}{unit}"), *t))
        .collect();
    if json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(x, t)| serde_json::json!({ key: x, "total_ns": t }))
            .collect();
        return crate::output::emit_json(&serde_json::Value::Array(v));
    }
    let mut s = format!("{key:>14}  predicted time\n");
    for (x, t) in &rows {
        let _ = writeln!(s, "{x:>14}  {}", human_time(*t));
    }
    crate::output::emit(&s)
}

/// The report as text.
fn text(r: &Report, timing: &str, seconds: f64) -> String {
    let p = &r.params;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "predicted run time: {}  ({} ranks; {} events, {} messages simulated in {:.2}s, {:.1} M events/s)",
        human_time(r.total_ns),
        r.ranks.len(),
        r.events,
        r.messages,
        seconds,
        r.events as f64 / seconds.max(1e-9) / 1e6
    );
    let _ = writeln!(
        s,
        "model: L={} o_s={} o_r={} g={} G={}ns/B O={}ns/B eager={}B compute×{}",
        human_time(p.latency),
        human_time(p.send_overhead),
        human_time(p.recv_overhead),
        human_time(p.gap),
        p.gap_per_byte,
        p.copy_per_byte,
        p.eager_limit,
        p.compute_scale
    );
    let _ = writeln!(s, "computation: {timing}\n");
    let _ = writeln!(
        s,
        "{:>6} {:>10} {:>10} {:>10} {:>10}",
        "rank", "end", "compute", "comm", "wait"
    );
    const SHOWN: usize = 32;
    for rank in r.ranks.iter().take(SHOWN) {
        let _ = writeln!(
            s,
            "{:>6} {:>10} {:>10} {:>10} {:>10}",
            rank.rank,
            human_time(rank.end_ns),
            human_time(rank.compute_ns),
            human_time(rank.comm_ns),
            human_time(rank.wait_ns)
        );
    }
    if r.ranks.len() > SHOWN {
        let _ = writeln!(
            s,
            "   ... {} more ranks (--json lists all)",
            r.ranks.len() - SHOWN
        );
    }
    let _ = writeln!(s, "\ncritical path, largest contributors:");
    for c in &r.critical_path {
        let name = match &c.site {
            Some(site) => format!("{} @{site}", c.function),
            None => c.function.clone(),
        };
        let example = match (c.example_rank, c.example_call) {
            (Some(rank), Some(call)) => format!("  (first: rank {rank} call #{call})"),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "{:>6.1}% {:>10}  {name}{example}",
            100.0 * c.share,
            human_time(c.ns)
        );
    }
    s
}
