//! `conifer profile`: an mpiP-style profile. Per rank: application time, time in MPI, MPI%;
//! per function and per call site: calls, total/mean/min/max time, bytes sent and received;
//! the call sites that took the most time. Counts and bytes come from the compressed form
//! (`conifer-analyze`); times from the trace's timing: each timing family's pooled statistics
//! weighted by the calls the site or function made in it (default `--timing aggregate`), or
//! every call's own duration when the run was recorded with `--timing lossless`.

use crate::output::{emit, emit_json};
use crate::site_names::{site_label, what_sites_are};
use conifer_analyze::{human_bytes, Analysis, Site};
use conifer_trace::decode::human_time;
use conifer_trace::timing_mode::TimingMode;
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::ExitCode;

/// Time statistics of a set of calls, nanoseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Time {
    /// Calls timed.
    pub calls: u64,
    /// Total.
    pub total_ns: f64,
    /// Shortest call.
    pub min_ns: f64,
    /// Longest call.
    pub max_ns: f64,
}

impl Time {
    fn add(&mut self, calls: u64, total: f64, min: f64, max: f64) {
        if calls == 0 {
            return;
        }
        if self.calls == 0 || min < self.min_ns {
            self.min_ns = min;
        }
        if max > self.max_ns {
            self.max_ns = max;
        }
        self.calls += calls;
        self.total_ns += total;
    }

    /// Mean per call.
    pub fn mean_ns(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.total_ns / self.calls as f64
        }
    }
}

/// Times per function and per call site.
#[derive(Debug, Default)]
pub struct Times {
    /// Per function.
    pub functions: BTreeMap<String, Time>,
    /// Per call site.
    pub sites: HashMap<Site, Time>,
    /// True when the times are the calls' own (lossless or lossy timing).
    pub exact: bool,
}

/// True when the trace carries every call's time (exact, or within a stated relative error).
pub fn per_call(trace: &Trace) -> bool {
    TimingMode::recorded(&trace.meta.options).keeps_calls()
}

/// The timing the times come from, as reports name it.
pub fn timing_name(trace: &Trace, t: &Times) -> String {
    if t.exact {
        TimingMode::recorded(&trace.meta.options).to_string()
    } else {
        "aggregate".into()
    }
}

/// The times of `analysis`'s functions and sites: per call with lossless or lossy timing;
/// else function totals from the ranks' exact totals (where the trace has them) and site
/// times from the pooled timing families.
pub fn times(trace: &Trace, analysis: &Analysis) -> Times {
    if per_call(trace) {
        if let Some(t) = exact_times(trace) {
            return t;
        }
    }
    let mut t = pooled_times(trace, analysis);
    let figures = conifer_analyze::rank_figures::rank_figures(trace);
    if figures.iter().all(|f| f.exact) {
        for (name, time) in &mut t.functions {
            time.total_ns = figures
                .iter()
                .filter_map(|f| f.functions.get(name))
                .map(|&ns| ns as f64)
                .sum();
        }
    }
    t
}

/// Times from the pooled timing families: each family's mean weighted by its calls.
fn pooled_times(trace: &Trace, analysis: &Analysis) -> Times {
    let fam = &trace.record.timing;
    let of = |families: &BTreeMap<u32, u64>| {
        let mut t = Time::default();
        for (&f, &n) in families {
            if let Some(s) = fam.get(f as usize).map(|f| &f.stats.duration) {
                t.add(n, n as f64 * s.mean(), s.min, s.max);
            }
        }
        t
    };
    Times {
        functions: analysis
            .function_families
            .iter()
            .map(|(name, f)| (name.clone(), of(f)))
            .collect(),
        sites: analysis
            .sites
            .iter()
            .map(|(s, st)| (*s, of(&st.families)))
            .collect(),
        exact: false,
    }
}

/// Every call's own time (lossless or lossy timing): expands the calls, as the per-call times are
/// stored per call.
fn exact_times(trace: &Trace) -> Option<Times> {
    let families = trace.record.timing_index();
    let mut t = Times {
        exact: true,
        ..Times::default()
    };
    let reader = trace.reader();
    for rank in 0..trace.meta.ranks {
        let entry = &trace.record.ranks[rank as usize];
        let terminals =
            (0..entry.threads.len()).flat_map(|th| trace.record.thread_terminals(entry, th));
        for (call, term) in reader.calls(rank).zip(terminals) {
            let call = call.ok()?;
            let d = call.time?.duration_ns as f64;
            t.functions
                .entry(call.name.to_string())
                .or_default()
                .add(1, d, d, d);
            let site = match (call.site, call.signature.caller) {
                (Some(s), _) => Site::Tree(s),
                (None, Some(c)) => Site::Address {
                    module: c.module,
                    offset: c.offset,
                },
                (None, None) => match families.get(term as usize).copied().flatten() {
                    Some(f) => Site::Family(f),
                    None => Site::Signature(term),
                },
            };
            t.sites.entry(site).or_default().add(1, d, d, d);
        }
    }
    Some(t)
}

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
                "exact": f.exact,
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
        "timing": timing_name(trace, t),
        "calls": a.functions.values().map(|f| f.calls).sum::<u64>(),
        "per_rank": ranks,
        "per_rank_times": conifer_analyze::rank_figures::FIGURES_NOTE,
        "functions": functions,
        "call_sites": sites,
        "communicators": comms,
        "communicator_origins": conifer_analyze::comm_origins::comm_origins(trace),
        "unresolved_calls": a.unresolved_calls,
        "partial": trace.meta.partial,
    })
}

/// Call sites by time, longest first (then by calls).
pub fn sorted_sites<'a>(
    a: &'a Analysis,
    t: &Times,
) -> Vec<(&'a Site, &'a conifer_analyze::SiteStats, Time)> {
    let mut v: Vec<_> = a
        .sites
        .iter()
        .map(|(s, st)| (s, st, t.sites.get(s).copied().unwrap_or_default()))
        .collect();
    v.sort_by(|x, y| {
        y.2.total_ns
            .total_cmp(&x.2.total_ns)
            .then(y.1.totals.calls.cmp(&x.1.totals.calls))
            .then(x.0.cmp(y.0))
    });
    v
}

/// What the byte columns mean, printed under the functions.
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
        if t.exact {
            TimingMode::recorded(&m.options).describe()
        } else {
            TimingMode::Aggregate.describe()
        }
    );
    let figures = conifer_analyze::rank_figures::rank_figures(trace);
    let (app, mpi) = figures
        .iter()
        .fold((0.0, 0.0), |(a, m), f| (a + f.busy_ns(), m + f.mpi_ns));
    let exact = figures.iter().all(|f| f.exact);
    let _ = writeln!(
        s,
        "\n@--- time per rank ({}) ---",
        if exact {
            "span: as run; app = in MPI + between calls, without the recorder; exact sums"
        } else {
            "app = in MPI + between calls; this trace keeps per-rank totals within 4.4%"
        }
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
            pct(f.mpi_ns, f.busy_ns()),
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
        pct(mpi, app),
        ""
    );
    let total_time: f64 = t.functions.values().map(|x| x.total_ns).sum();
    let _ = writeln!(s, "\n@--- functions ---");
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
            pct(time.total_ns, total_time),
            human_time(time.mean_ns()),
            human_time(time.min_ns),
            human_time(time.max_ns),
            human_bytes(tot.bytes_sent),
            human_bytes(tot.bytes_received),
            posted(tot)
        );
    }
    let _ = writeln!(s, "{BYTES_NOTE}");
    let sites = sorted_sites(a, t);
    let _ = writeln!(
        s,
        "\n@--- top {} call sites by time (of {}) ---\n({})",
        top.min(sites.len()),
        sites.len(),
        what_sites_are(trace, a)
    );
    let _ = writeln!(
        s,
        "{:<40} {:<20} {:>9} {:>10} {:>6} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}",
        "site",
        "function",
        "calls",
        "time",
        "MPI%",
        "mean",
        "min",
        "max",
        "sent",
        "received",
        "posted"
    );
    for (site, st, time) in sites.iter().take(top) {
        let _ = writeln!(
            s,
            "{:<40} {:<20} {:>9} {:>10} {:>6} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11}",
            site_label(trace, site, &st.function, st.source.as_deref()),
            st.function,
            st.totals.calls,
            human_time(time.total_ns),
            pct(time.total_ns, total_time),
            human_time(time.mean_ns()),
            human_time(time.min_ns),
            human_time(time.max_ns),
            human_bytes(st.totals.bytes_sent),
            human_bytes(st.totals.bytes_received),
            posted(&st.totals)
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
