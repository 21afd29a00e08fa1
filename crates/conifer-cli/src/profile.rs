//! `conifer profile`: an mpiP-style profile. Per rank: application time, time in MPI, MPI%;
//! per function and per call site: calls, total/mean/min/max time, bytes sent and received;
//! the call sites that took the most time. Every figure comes from `conifer-analyze` (counts
//! and bytes from the compressed form, times from `conifer_analyze::times`); this file only
//! formats them.

use crate::output::{emit, emit_json};
use conifer_analyze::rank_figures::INIT_FUNCTIONS;
use conifer_analyze::site_names::{short_site_label, site_label, site_noun, what_sites_are};
use conifer_analyze::times::{sorted_sites, times, Times};
use conifer_analyze::{human_bytes, Analysis};
use conifer_trace::decode::human_time;
use conifer_trace::Trace;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// The whole profile as JSON.
pub fn json(trace: &Trace, a: &Analysis, t: &Times) -> serde_json::Value {
    let ranks: Vec<_> = conifer_analyze::rank_figures::rank_figures(trace)
        .into_iter()
        .map(|f| {
            let r = f.rank as usize;
            serde_json::json!({
                "rank": r,
                "span_ns": f.span_ns,
                "app_ns": f.busy_ns(),
                "mpi_ns": f.mpi_ns,
                "compute_ns": f.compute_ns,
                "recorder_ns": f.recorder_ns,
                "mpi_percent": f.mpi_percent(),
                "init_ns": f.init_ns(),
                "mpi_percent_after_init": f.mpi_percent_after_init(),
                "exact": f.exact,
                "relative_error": f.relative_error,
                "error_floor_ns": f.error_floor_ns,
                "function_mpi_ns": f.functions,
                "calls": a.per_rank[r].calls,
                "bytes_sent": a.per_rank[r].bytes_sent,
                "bytes_received": a.per_rank[r].bytes_received,
                "bytes_posted": a.per_rank[r].bytes_posted,
            })
        })
        .collect();
    let functions: Vec<_> = a
        .functions
        .iter()
        .map(|(name, tot)| {
            let time = t.functions.get(name).copied().unwrap_or_default();
            serde_json::json!({
                "function": name,
                "calls": tot.calls,
                "bytes_sent": tot.bytes_sent,
                "bytes_received": tot.bytes_received,
                "bytes_posted": tot.bytes_posted,
                "time_ns": time.total_ns,
                "mean_ns": time.mean_ns(),
                "min_ns": time.min_ns,
                "max_ns": time.max_ns,
            })
        })
        .collect();
    let sites: Vec<_> = sorted_sites(a, t)
        .into_iter()
        .map(|(site, st, time)| {
            serde_json::json!({
                "site": site,
                "label": site_label(trace, site, &st.function, st.source.as_deref()),
                "function": st.function,
                "source": st.source,
                "calls": st.totals.calls,
                "bytes_sent": st.totals.bytes_sent,
                "bytes_received": st.totals.bytes_received,
                "bytes_posted": st.totals.bytes_posted,
                "time_ns": time.total_ns,
                "mean_ns": time.mean_ns(),
                "min_ns": time.min_ns,
                "max_ns": time.max_ns,
                "calls_per_rank": st.per_rank,
            })
        })
        .collect();
    let comms: BTreeMap<_, _> = a.comms.iter().collect();
    serde_json::json!({
        "ranks": trace.meta.ranks,
        "command_line": trace.meta.command_line,
        "timing": t.timing_name(trace),
        "clock_resolution_ns": t.resolution_ns,
        "calls": a.functions.values().map(|f| f.calls).sum::<u64>(),
        "per_rank": ranks,
        "per_rank_times": conifer_analyze::rank_figures::figures_note(trace),
        "functions": functions,
        "sites_are": site_noun(a),
        "sites_note": what_sites_are(trace, a),
        "call_sites": sites,
        "communicators": comms,
        "communicator_origins": conifer_analyze::comm_origins::comm_origins(trace),
        "unresolved_calls": a.unresolved_calls,
        "partial": trace.meta.partial,
    })
}

/// What the received and posted byte columns count.
pub const BYTES_NOTE: &str = "(received: bytes that arrived, from the receives' statuses, else \
     from the matching sends; posted: receive capacity posted, count × type size, \
     not data moved)";

/// How communicator `name` was made, from [`conifer_analyze::comm_origins::comm_origins`]
/// (by its id: `comm5@4` was made as `comm5`): the predefined ones say so, one whose creation
/// the trace lacks is `-`.
pub fn origin(origins: &BTreeMap<String, String>, name: &str) -> String {
    let id = conifer_analyze::context::comm_id_of_name(name);
    match origins.get(id) {
        Some(text) => text.clone(),
        None if name.starts_with("MPI_COMM_") => "predefined".into(),
        None => "-".into(),
    }
}

/// A row's posted receive capacity, `-` when it posts none.
pub fn posted(t: &conifer_analyze::Totals) -> String {
    match t.bytes_posted {
        0 => "-".into(),
        b => human_bytes(b),
    }
}

fn pct(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{:.1}", 100.0 * part / whole)
    } else {
        "-".into()
    }
}

/// The profile as text.
pub fn text(trace: &Trace, a: &Analysis, t: &Times, top: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let m = &trace.meta;
    let calls: u64 = a.functions.values().map(|f| f.calls).sum();
    let _ = writeln!(s, "command     {}", m.command_line.join(" "));
    if m.partial {
        let _ = writeln!(s, "PARTIAL     {}", crate::stats::partial_summary(m));
    }
    let _ = writeln!(
        s,
        "ranks       {}   calls {calls}   timing {}",
        m.ranks,
        t.timing_description(trace)
    );
    let figures = conifer_analyze::rank_figures::rank_figures(trace);
    let (app, mpi, init) = figures.iter().fold((0.0, 0.0, 0.0), |(a, m, i), f| {
        (a + f.busy_ns(), m + f.mpi_ns, i + f.init_ns())
    });
    let _ = writeln!(
        s,
        "\n@--- time per rank (span: as run; app = in MPI + between calls, without the recorder; {}) ---",
        conifer_analyze::rank_figures::accuracy(trace)
    );
    let _ = writeln!(
        s,
        "(MPI% as mpiP counts it: MPI_Init's time, {} over all ranks, left out of both MPI and app)",
        human_time(init)
    );
    let opt = |v: Option<f64>| v.map_or_else(|| "-".to_string(), human_time);
    let _ = writeln!(
        s,
        "{:>6} {:>12} {:>12} {:>12} {:>7} {:>12}",
        "rank", "span", "app", "MPI", "MPI%", "recorder"
    );
    for f in &figures {
        let _ = writeln!(
            s,
            "{:>6} {:>12} {:>12} {:>12} {:>7} {:>12}",
            f.rank,
            opt(f.span_ns),
            human_time(f.busy_ns()),
            human_time(f.mpi_ns),
            pct(f.mpi_ns - f.init_ns(), f.busy_ns() - f.init_ns()),
            opt(f.recorder_ns)
        );
    }
    let _ = writeln!(
        s,
        "{:>6} {:>12} {:>12} {:>12} {:>7} {:>12}",
        "*",
        "",
        human_time(app),
        human_time(mpi),
        pct(mpi - init, app - init),
        ""
    );
    // Shares of MPI time after MPI_Init, as mpiP's.
    let total_time: f64 = t
        .functions
        .iter()
        .filter(|(name, _)| !INIT_FUNCTIONS.contains(&name.as_str()))
        .map(|(_, x)| x.total_ns)
        .sum();
    let share = |name: &str, ns: f64| {
        if INIT_FUNCTIONS.contains(&name) {
            "-".to_string()
        } else {
            pct(ns, total_time)
        }
    };
    let _ = writeln!(
        s,
        "\n@--- functions (MPI%: share of the time in MPI after MPI_Init) ---"
    );
    let _ = writeln!(
        s,
        "{:<24} {:>10} {:>10} {:>6} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}",
        "function", "calls", "time", "MPI%", "mean", "min", "max", "sent", "received", "posted"
    );
    let mut fns: Vec<_> = a.functions.iter().collect();
    fns.sort_by(|x, y| {
        let tx = t.functions.get(x.0).map_or(0.0, |t| t.total_ns);
        let ty = t.functions.get(y.0).map_or(0.0, |t| t.total_ns);
        ty.total_cmp(&tx).then(x.0.cmp(y.0))
    });
    for (name, tot) in fns {
        let time = t.functions.get(name).copied().unwrap_or_default();
        let _ = writeln!(
            s,
            "{:<24} {:>10} {:>10} {:>6} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}",
            name,
            tot.calls,
            human_time(time.total_ns),
            share(name, time.total_ns),
            t.shown(time.mean_ns()),
            t.shown(time.min_ns),
            t.shown(time.max_ns),
            human_bytes(tot.bytes_sent),
            human_bytes(tot.bytes_received),
            posted(tot)
        );
    }
    let _ = writeln!(s, "{BYTES_NOTE}");
    if t.resolution_ns > 0.0 {
        let _ = writeln!(s, "({})", t.resolution_note());
    }
    let sites = sorted_sites(a, t);
    let _ = writeln!(
        s,
        "\n@--- top {} {} by time (of {}) ---\n({})",
        top.min(sites.len()),
        site_noun(a),
        sites.len(),
        what_sites_are(trace, a)
    );
    let _ = writeln!(
        s,
        "{:<20} {:>9} {:>10} {:>6} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}  site",
        "function", "calls", "time", "MPI%", "mean", "min", "max", "sent", "received", "posted",
    );
    for (site, st, time) in sites.iter().take(top) {
        let _ = writeln!(
            s,
            "{:<20} {:>9} {:>10} {:>6} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}  {}",
            st.function,
            st.totals.calls,
            human_time(time.total_ns),
            share(&st.function, time.total_ns),
            t.shown(time.mean_ns()),
            t.shown(time.min_ns),
            t.shown(time.max_ns),
            human_bytes(st.totals.bytes_sent),
            human_bytes(st.totals.bytes_received),
            posted(&st.totals),
            short_site_label(trace, site, &st.function, st.source.as_deref()),
        );
    }
    if !a.comms.is_empty() {
        let origins = conifer_analyze::comm_origins::comm_origins(trace);
        let _ = writeln!(s, "\n@--- communicators ---");
        let _ = writeln!(
            s,
            "{:<24} {:>10} {:>11} {:>11} {:>11}  made by",
            "communicator", "calls", "sent", "received", "posted"
        );
        for (c, tot) in &a.comms {
            let _ = writeln!(
                s,
                "{c:<24} {:>10} {:>11} {:>11} {:>11}  {}",
                tot.calls,
                human_bytes(tot.bytes_sent),
                human_bytes(tot.bytes_received),
                posted(tot),
                origin(&origins, c)
            );
        }
    }
    if a.unresolved_calls > 0 {
        let _ = writeln!(
            s,
            "\n{} calls move data to or from peers the analysis cannot name \
             (inter-communicators, unknown datatypes): counted above, not in the matrix",
            a.unresolved_calls
        );
    }
    s
}

/// Runs `conifer profile`.
pub fn run(path: &Path, json_out: bool, top: usize, expand: bool) -> Result<ExitCode, String> {
    let trace = conifer_trace::open(path)?;
    let a = if expand {
        crate::analysis::analyze_expanded(&trace, &Default::default())?
    } else {
        crate::analysis::analyze(&trace, &Default::default())?
    };
    let t = times(&trace, &a);
    if json_out {
        emit_json(&json(&trace, &a, &t))?;
    } else {
        emit(&text(&trace, &a, &t, top))?;
    }
    Ok(ExitCode::SUCCESS)
}
