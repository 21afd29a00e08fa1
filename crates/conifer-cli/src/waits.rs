//! `conifer waits`: wait states (Scalasca's patterns) per rank and per call site, and the
//! critical path of the recorded run, as `conifer_analyze::waits` computes them on the
//! synchronised timeline; text, JSON, and the HTML report's section. Needs per-call timing.

use crate::output::outln;
use crate::output::{emit, emit_json};
use conifer_analyze::callers::Resolver;
use conifer_analyze::site_names::site_label;
use conifer_analyze::waits::path::is_startup;
use conifer_analyze::waits::{self, CriticalPath, Pattern, WaitEntry, Waits};
use conifer_analyze::Site;
use conifer_trace::decode::human_time;
use conifer_trace::Trace;
use std::path::Path;
use std::process::ExitCode;

/// Ranks the per-rank table lists in full; beyond, the ones that waited most.
const RANKS_SHOWN: usize = 32;

/// The wait states of `trace`, with a progress bar over ranks on a terminal.
pub fn compute(trace: &Trace) -> Result<Waits, String> {
    let bar = crate::output::progress("waits", u64::from(trace.meta.ranks));
    let result = waits::analyze(trace, &mut |done, _| bar.set_position(done));
    bar.finish_and_clear();
    result.map_err(|e| e.to_string())
}

/// Names the call sites of `w`'s entries: `file:line` for tree sites and recorded callers.
pub struct Labels<'t> {
    trace: &'t Trace,
    resolver: Resolver<'t>,
}

impl<'t> Labels<'t> {
    /// Labels for the sites of `trace`.
    pub fn new(trace: &'t Trace) -> Labels<'t> {
        Labels {
            trace,
            resolver: Resolver::new(&trace.meta),
        }
    }

    /// The site's label, as `conifer profile` names it.
    pub fn of(&mut self, e: &WaitEntry) -> String {
        let source = match e.site {
            Site::Address { module, offset } => Some(
                self.resolver
                    .name(conifer_trace::caller::Caller { module, offset }),
            ),
            _ => e.source.clone(),
        };
        site_label(self.trace, &e.site, &e.function, source.as_deref())
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Per rank, total waiting time.
fn rank_totals(w: &Waits) -> Vec<u64> {
    w.per_rank.iter().map(|m| m.values().sum()).collect()
}

/// The ranks the per-rank table lists: all, or the [`RANKS_SHOWN`] that waited most (in
/// rank order).
fn shown_ranks(w: &Waits) -> Vec<usize> {
    let totals = rank_totals(w);
    let mut ranks: Vec<usize> = (0..totals.len()).collect();
    if ranks.len() > RANKS_SHOWN {
        ranks.sort_by(|&a, &b| totals[b].cmp(&totals[a]).then(a.cmp(&b)));
        ranks.truncate(RANKS_SHOWN);
        ranks.sort_unstable();
    }
    ranks
}

/// What the critical path's tables show: with start-up, or without it (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Startup {
    /// Start-up rows listed and shares taken of the whole path.
    Included,
    /// Start-up on its own line; rows and shares of the steady state.
    Apart,
}

/// The path's view under `startup`: (length the shares are of, per-rank times, whether a
/// (rank, activity) row is listed).
fn path_view(p: &CriticalPath, startup: Startup) -> (u64, Vec<u64>, fn(&str) -> bool) {
    match startup {
        Startup::Included => (p.length_ns(), p.per_rank.clone(), |_| true),
        Startup::Apart => (p.steady_ns, p.steady_per_rank(), |a| !is_startup(a)),
    }
}

/// The sentence saying how start-up is shown (`hint`: say which flag includes it).
fn startup_note(p: &CriticalPath, startup: Startup, hint: bool) -> String {
    match startup {
        Startup::Included => format!(
            "start-up (MPI_Init*) {} of the path is included in the shares below",
            human_time(p.startup_ns as f64)
        ),
        Startup::Apart => format!(
            "start-up (MPI_Init*) {} of the path, shown apart: the shares below are of the \
             {} after it{}",
            human_time(p.startup_ns as f64),
            human_time(p.steady_ns as f64),
            if hint {
                " (`--with-startup` to include it)"
            } else {
                ""
            }
        ),
    }
}

/// The text output.
pub fn text(path: &Path, trace: &Trace, w: &Waits, top: usize, startup: Startup) -> String {
    let mut s = String::new();
    let mut labels = Labels::new(trace);
    outln!(
        s,
        "waits       {}   {} ranks   timing {}",
        path.display(),
        w.ranks,
        w.timing
    );
    outln!(
        s,
        "times       as run, on rank 0's clock (the recorder's own time included)"
    );
    let width = 16;
    outln!(s, "\n@--- waiting time per rank and pattern ---");
    let mut header = format!("{:>6}", "rank");
    for p in Pattern::ALL {
        header.push_str(&format!(" {:>width$}", p.label()));
    }
    header.push_str(&format!(" {:>10}", "total"));
    outln!(s, "{header}");
    let totals = rank_totals(w);
    for r in shown_ranks(w) {
        let mut line = format!("{r:>6}");
        for p in Pattern::ALL {
            let ns = w.per_rank[r].get(&p).copied().unwrap_or(0);
            line.push_str(&format!(" {:>width$}", human_time(ns as f64)));
        }
        line.push_str(&format!(" {:>10}", human_time(totals[r] as f64)));
        outln!(s, "{line}");
    }
    let mut line = format!("{:>6}", "*");
    for p in Pattern::ALL {
        line.push_str(&format!(" {:>width$}", human_time(w.total(p) as f64)));
    }
    line.push_str(&format!(
        " {:>10}",
        human_time(totals.iter().sum::<u64>() as f64)
    ));
    outln!(s, "{line}");
    if w.per_rank.len() > RANKS_SHOWN {
        outln!(
            s,
            "(the {RANKS_SHOWN} of {} ranks that waited most; `--json` lists all)",
            w.per_rank.len()
        );
    }
    outln!(
        s,
        "\n@--- top {} call sites by waiting time (of {}) ---",
        top.min(w.entries.len()),
        w.entries.len()
    );
    outln!(
        s,
        "{:<16} {:>5} {:<40} {:<16} {:>9} {:>10} {:>10}",
        "pattern",
        "rank",
        "site",
        "function",
        "calls",
        "time",
        "mean"
    );
    for e in w.entries.iter().take(top) {
        outln!(
            s,
            "{:<16} {:>5} {:<40} {:<16} {:>9} {:>10} {:>10}",
            e.pattern.label(),
            e.rank,
            labels.of(e),
            e.function,
            e.instances,
            human_time(e.time_ns as f64),
            human_time(e.time_ns as f64 / e.instances.max(1) as f64)
        );
    }
    match &w.critical_path {
        Some(p) => path_text(&mut s, p, top, startup),
        None => outln!(s, "\nno calls: no critical path"),
    }
    let u = &w.unmatched;
    if u.sends + u.receives + u.collectives + u.other_threads > 0 {
        outln!(
            s,
            "\nnot analysed: {} sends and {} receives without a partner (or whose sender the \
             trace cannot tell), {} collective calls on incomplete or unknown communicators, \
             {} calls of threads other than the main one",
            u.sends,
            u.receives,
            u.collectives,
            u.other_threads
        );
    }
    s
}

fn path_text(s: &mut String, p: &CriticalPath, top: usize, startup: Startup) {
    let (len, per_rank, listed) = path_view(p, startup);
    outln!(s, "\n@--- critical path ---");
    outln!(
        s,
        "ends on rank {} {} at {}; {} long (from {}), {} jumps from a waiting call to its cause",
        p.end_rank,
        if p.ends_at_finalize {
            "entering MPI_Finalize"
        } else {
            "returning from its last call"
        },
        human_time(p.end_ns as f64),
        human_time(p.length_ns() as f64),
        human_time(p.start_ns as f64),
        p.jumps
    );
    outln!(s, "{}", startup_note(p, startup, true));
    outln!(s, "\n{:>6} {:>10} {:>7}", "rank", "time", "path%");
    let mut ranks: Vec<(usize, u64)> = per_rank
        .iter()
        .copied()
        .enumerate()
        .filter(|r| r.1 > 0)
        .collect();
    ranks.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (r, ns) in ranks.iter().take(top) {
        outln!(
            s,
            "{r:>6} {:>10} {:>7.1}",
            human_time(*ns as f64),
            pct(*ns, len)
        );
    }
    outln!(s, "\n{:<24} {:>10} {:>7}", "activity", "time", "path%");
    let mut acts: Vec<(&String, &u64)> = p.per_activity.iter().filter(|(a, _)| listed(a)).collect();
    acts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (a, ns) in acts.iter().take(top) {
        outln!(
            s,
            "{a:<24} {:>10} {:>7.1}",
            human_time(**ns as f64),
            pct(**ns, len)
        );
    }
    outln!(
        s,
        "\n{:>6} {:<24} {:>10} {:>7}",
        "rank",
        "activity",
        "time",
        "path%"
    );
    for sh in p.shares.iter().filter(|sh| listed(&sh.activity)).take(top) {
        outln!(
            s,
            "{:>6} {:<24} {:>10} {:>7.1}",
            sh.rank,
            sh.activity,
            human_time(sh.time_ns as f64),
            pct(sh.time_ns, len)
        );
    }
}

/// The JSON output.
pub fn json(path: &Path, trace: &Trace, w: &Waits) -> serde_json::Value {
    let mut labels = Labels::new(trace);
    let waits: Vec<serde_json::Value> = w
        .entries
        .iter()
        .map(|e| {
            serde_json::json!({
                "pattern": e.pattern,
                "rank": e.rank,
                "site": labels.of(e),
                "site_id": e.site,
                "function": e.function,
                "source": e.source,
                "time_ns": e.time_ns,
                "calls": e.instances,
            })
        })
        .collect();
    let per_rank: Vec<serde_json::Value> = w
        .per_rank
        .iter()
        .enumerate()
        .map(|(r, m)| {
            let mut o = serde_json::Map::new();
            o.insert("rank".into(), r.into());
            for p in Pattern::ALL {
                o.insert(p.key().into(), m.get(&p).copied().unwrap_or(0).into());
            }
            o.insert("total_ns".into(), m.values().sum::<u64>().into());
            serde_json::Value::Object(o)
        })
        .collect();
    let totals: serde_json::Map<String, serde_json::Value> = Pattern::ALL
        .iter()
        .map(|p| (p.key().to_string(), w.total(*p).into()))
        .collect();
    let path_json = w.critical_path.as_ref().map(|p| {
        let mut v = serde_json::to_value(p).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("length_ns".into(), p.length_ns().into());
        }
        v
    });
    serde_json::json!({
        "file": path.display().to_string(),
        "ranks": w.ranks,
        "timing": w.timing,
        "clock": "as run, on rank 0's clock, the recorder's own time included",
        "waits": waits,
        "per_rank": per_rank,
        "totals": totals,
        "critical_path": path_json,
        "unmatched": w.unmatched,
    })
}

/// HTML-escapes text.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The HTML report's section (tables only).
pub fn html(trace: &Trace, w: &Waits) -> String {
    use std::fmt::Write;
    let mut h = String::new();
    let mut labels = Labels::new(trace);
    h.push_str(
        "<h2>Wait states and critical path</h2><p class=\"note\">Scalasca's patterns on the \
         synchronised timeline (calls as run, on rank 0's clock): time a rank spent in MPI \
         waiting for a peer that was late.</p>",
    );
    h.push_str("<table><tr><th>rank</th>");
    for p in Pattern::ALL {
        let _ = write!(h, "<th>{}</th>", p.label());
    }
    h.push_str("<th>total</th></tr>");
    let totals = rank_totals(w);
    for r in shown_ranks(w) {
        let _ = write!(h, "<tr><td>{r}</td>");
        for p in Pattern::ALL {
            let ns = w.per_rank[r].get(&p).copied().unwrap_or(0);
            let _ = write!(h, "<td>{}</td>", human_time(ns as f64));
        }
        let _ = write!(h, "<td>{}</td></tr>", human_time(totals[r] as f64));
    }
    h.push_str("</table>\n");
    if !w.entries.is_empty() {
        h.push_str(
            "<table><tr><th class=\"l\">pattern</th><th>rank</th><th class=\"l\">site</th>\
             <th class=\"l\">function</th><th>calls</th><th>time</th></tr>",
        );
        for e in w.entries.iter().take(15) {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td>\
                 <td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
                e.pattern.label(),
                e.rank,
                esc(&labels.of(e)),
                esc(&e.function),
                e.instances,
                human_time(e.time_ns as f64)
            );
        }
        h.push_str("</table>\n");
    }
    if let Some(p) = &w.critical_path {
        let (len, _, listed) = path_view(p, Startup::Apart);
        let _ = write!(
            h,
            "<p class=\"note\">Critical path: {} long, ending on rank {}; {} jumps from a \
             waiting call to its cause (the late peer's computation or call); {}.</p>",
            human_time(p.length_ns() as f64),
            p.end_rank,
            p.jumps,
            esc(&startup_note(p, Startup::Apart, false))
        );
        h.push_str(
            "<table><tr><th>rank</th><th class=\"l\">activity</th><th>time</th>\
             <th>path%</th></tr>",
        );
        for sh in p.shares.iter().filter(|sh| listed(&sh.activity)).take(15) {
            let _ = write!(
                h,
                "<tr><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1}</td></tr>",
                sh.rank,
                esc(&sh.activity),
                human_time(sh.time_ns as f64),
                pct(sh.time_ns, len)
            );
        }
        h.push_str("</table>\n");
    }
    h
}

/// Runs `conifer waits`.
pub fn run(
    path: &Path,
    json_out: bool,
    top: usize,
    with_startup: bool,
) -> Result<ExitCode, String> {
    let trace = conifer_trace::open(path)?;
    let w = compute(&trace)?;
    let startup = if with_startup {
        Startup::Included
    } else {
        Startup::Apart
    };
    if json_out {
        emit_json(&json(path, &trace, &w))?;
    } else {
        emit(&text(path, &trace, &w, top, startup))?;
    }
    Ok(ExitCode::SUCCESS)
}
