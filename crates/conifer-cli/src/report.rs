//! `conifer report`: one self-contained HTML page (no script, no external resource; pictures
//! inlined as SVG data URIs): the run, the profile, the matrix, the pictures and the trace's
//! own compression facts, and with per-call timing the wait states and critical path
//! (`conifer waits`).

use crate::matrix::Select;
use crate::plot::{self, Inputs};
use crate::profile;
use crate::report_glance::Glance;
use crate::report_timeline::Export;
use conifer_analyze::site_names::{short_site_label, site_label, site_noun, what_sites_are};
use conifer_analyze::times::{per_call, sorted_sites};
use conifer_analyze::{human_bytes, Totals};
use conifer_trace::decode::human_time;
use conifer_trace::TraceFile;
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

/// HTML-escapes text.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "
body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;background:#fff}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid #3b518b;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em;display:block;max-width:100%;overflow-x:auto}
.glance td.l{overflow-wrap:anywhere}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#eef}td.l,th.l{text-align:left}
.facts td:first-child{text-align:left;font-weight:bold}
figure.chart{margin:.5em 0}figure.chart svg{max-width:100%;height:auto;border:1px solid #ddd}
.note{color:#555;font-size:.9em}
.matrix td{padding:.1em .3em;font-size:.8em}
";

/// The spread of each function's time over the ranks, largest excess first (mpiP's
/// imbalance table), into `h`.
fn imbalance_table(h: &mut String, spreads: &[conifer_analyze::imbalance::Spread]) {
    if spreads.is_empty() {
        return;
    }
    h.push_str(
        "<h3>Time in MPI per rank, by function</h3><p class=\"note\">Without the recorder; \
         a rank that never called the function counts 0. Largest excess of the slowest rank \
         over the mean first.</p><table><tr><th class=\"l\">function</th><th>min</th>\
         <th>rank</th><th>mean</th><th>max</th><th>rank</th><th>max/mean</th></tr>",
    );
    for s in spreads.iter().take(15) {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{:.2}</td></tr>",
            esc(&s.function),
            human_time(s.min_ns as f64),
            s.min_rank,
            human_time(s.mean_ns),
            human_time(s.max_ns as f64),
            s.max_rank,
            s.ratio()
        );
    }
    h.push_str("</table>\n");
}

/// The report's HTML (the page to be written to `output`: a large timeline export is
/// written beside it).
pub fn html(path: &Path, file: &TraceFile, output: &Path) -> Result<String, String> {
    let (trace, file_bytes) = (&file.trace, &file.bytes);
    let sections = conifer_trace::section_sizes(&file.bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let a = crate::analysis::analyze(trace, &Default::default())?;
    let t = conifer_analyze::times::times(trace, &a);
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let inp = Inputs {
        trace,
        analysis: &a,
        times: &t,
        name: name.clone(),
        window: Default::default(),
    };
    let m = &trace.meta;
    let calls: u64 = a.functions.values().map(|f| f.calls).sum();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Conifer report: {}</title><style>{STYLE}</style></head><body>\n",
        esc(&name)
    );
    let _ = writeln!(h, "<h1>Conifer report: {}</h1>", esc(&name));
    let _ = writeln!(
        h,
        "<p class=\"note\">{} ranks, {calls} MPI calls, {} file. Counts, bytes and the \
         matrix are computed on the compressed trace; times from its {} timing.</p>",
        m.ranks,
        human_bytes(file_bytes.len() as u64),
        t.timing_name(trace)
    );
    let figures = conifer_analyze::rank_figures::rank_figures(trace);
    let spreads = conifer_analyze::imbalance::spreads(&figures);
    let sites = sorted_sites(&a, &t);
    // Start-up and shutdown are the launch's, not the program's steady state.
    let program_sites = sites.iter().filter(|s| !plot::start_or_end(&s.1.function));
    let labelled = program_sites.map(|(site, st, time)| {
        let label = site_label(trace, site, &st.function, st.source.as_deref());
        (label, time.total_ns)
    });
    h.push_str(&Glance::of(trace, &figures, labelled, &spreads).html(esc));
    // Run: what "At a glance" does not say already (command, ranks, hosts).
    h.push_str("<h2>Run</h2><table class=\"facts\">");
    let start = m.start_unix_seconds;
    for (k, v) in [
        ("MPI", format!("{} ({})", m.mpi, m.mpi_library_version)),
        ("started", utc(start)),
        (
            "recording options",
            if m.options.is_empty() {
                "none: the defaults (aggregate timing, every MPI function)".into()
            } else {
                m.options.join(", ")
            },
        ),
        ("Conifer", m.conifer_version.clone()),
        (
            "partial",
            if m.partial {
                crate::stats::partial_summary(m)
            } else {
                "no".into()
            },
        ),
    ] {
        let _ = write!(h, "<tr><td>{k}</td><td class=\"l\">{}</td></tr>", esc(&v));
    }
    h.push_str("</table>\n");
    // Profile: functions.
    h.push_str("<h2>Time and data per function</h2>");
    h.push_str(&figure("functions", &inp)?);
    let _ = write!(h, "<p class=\"note\">{}</p>", esc(profile::BYTES_NOTE));
    let _ = write!(
        h,
        "<table><tr><th class=\"l\">function</th><th>calls</th><th>time</th><th>mean</th>\
         <th>min</th><th>max</th>{BYTE_HEADS}</tr>",
    );
    let mut fns: Vec<_> = a.functions.iter().collect();
    fns.sort_by(|x, y| {
        let tx = t.functions.get(x.0).map_or(0.0, |t| t.total_ns);
        let ty = t.functions.get(y.0).map_or(0.0, |t| t.total_ns);
        ty.total_cmp(&tx).then(x.0.cmp(y.0))
    });
    for (f, tot) in fns {
        let time = t.functions.get(f).copied().unwrap_or_default();
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             {}</tr>",
            esc(f),
            tot.calls,
            human_time(time.total_ns),
            t.shown(time.mean_ns()),
            t.shown(time.min_ns),
            t.shown(time.max_ns),
            byte_cells(tot)
        );
    }
    h.push_str("</table>\n");
    imbalance_table(&mut h, &spreads);
    // Call sites.
    let _ = write!(
        h,
        "<h2>Top {noun} by time</h2><p class=\"note\">{} {noun}; {}.</p>",
        sites.len(),
        what_sites_are(trace, &a),
        noun = site_noun(&a)
    );
    let _ = write!(
        h,
        "<table><tr><th class=\"l\">site</th><th class=\"l\">function</th><th>calls</th>\
         <th>time</th><th>mean</th><th>min</th><th>max</th>{BYTE_HEADS}</tr>",
    );
    for (site, st, time) in sites.iter().take(25) {
        let _ = write!(
            h,
            "<tr><td class=\"l\" title=\"{}\">{}</td><td class=\"l\">{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>",
            esc(&site_label(trace, site, &st.function, st.source.as_deref())),
            esc(&short_site_label(
                trace,
                site,
                &st.function,
                st.source.as_deref()
            )),
            esc(&st.function),
            st.totals.calls,
            human_time(time.total_ns),
            t.shown(time.mean_ns()),
            t.shown(time.min_ns),
            t.shown(time.max_ns),
            byte_cells(&st.totals)
        );
    }
    h.push_str("</table>\n");
    // Ranks.
    h.push_str("<h2>Time per rank</h2>");
    h.push_str(&figure("ranks", &inp)?);
    let app_mpi: Vec<(f64, f64)> = figures.iter().map(|f| (f.busy_ns(), f.mpi_ns)).collect();
    let pct = |(app, mpi): (f64, f64)| if app > 0.0 { 100.0 * mpi / app } else { 0.0 };
    let _ = write!(
        h,
        "<p class=\"note\">{}</p>",
        esc(&conifer_analyze::rank_figures::figures_note(trace))
    );
    let _ = write!(
        h,
        "<table><tr><th>rank</th><th>span</th><th>app time</th><th>MPI time</th><th>MPI%</th>\
         <th>recorder</th><th>calls</th>{BYTE_HEADS}</tr>",
    );
    let opt = |v: Option<f64>| v.map_or_else(|| "-".to_string(), human_time);
    let shown: Vec<usize> = if app_mpi.len() <= 64 {
        (0..app_mpi.len()).collect()
    } else {
        // The 16 ranks with the most and the 16 with the least MPI time.
        let mut order: Vec<usize> = (0..app_mpi.len()).collect();
        order.sort_by(|&x, &y| app_mpi[y].1.total_cmp(&app_mpi[x].1));
        let mut v: Vec<usize> = order[..16].to_vec();
        v.extend_from_slice(&order[order.len() - 16..]);
        v
    };
    for r in shown {
        let _ = write!(
            h,
            "<tr><td>{r}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td>\
             {}</tr>",
            opt(figures[r].span_ns),
            human_time(app_mpi[r].0),
            human_time(app_mpi[r].1),
            pct(app_mpi[r]),
            opt(figures[r].recorder_ns),
            a.per_rank[r].calls,
            byte_cells(&a.per_rank[r])
        );
    }
    h.push_str("</table>\n");
    // Matrix.
    h.push_str("<h2>Communication matrix</h2>");
    let _ = write!(h, "<p class=\"note\">{}</p>", esc(crate::matrix::RULE));
    h.push_str(&figure("matrix", &inp)?);
    if a.ranks <= 16 {
        let rows = sel_all().rows(&a.matrix);
        h.push_str("<table class=\"matrix\"><tr><th>bytes: sender \\ receiver</th>");
        for j in 0..a.ranks {
            let _ = write!(h, "<th>{j}</th>");
        }
        h.push_str("</tr>");
        for (i, row) in rows.iter().enumerate() {
            let _ = write!(h, "<tr><th>{i}</th>");
            for v in row {
                let _ = write!(h, "<td>{v}</td>");
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>\n");
    }
    // Sizes.
    h.push_str("<h2>Message sizes</h2>");
    h.push_str(&figure("sizes", &inp)?);
    if per_call(trace) {
        h.push_str("<h2>Timeline</h2>");
        h.push_str(&figure("timeline", &inp)?);
        h.push_str(&Export::of(trace, output)?.html(&name, esc));
        match crate::waits::compute(trace) {
            Ok(w) => h.push_str(&crate::waits::html(trace, &w)),
            Err(e) => {
                let _ = write!(
                    h,
                    "<h2>Wait states and critical path</h2><p class=\"note\">not computed: \
                     {}</p>",
                    esc(&e)
                );
            }
        }
    }
    // Communicators.
    if !a.comms.is_empty() {
        let _ = write!(
            h,
            "<h2>Communicators</h2><table><tr><th class=\"l\">communicator</th><th>calls</th>\
             {BYTE_HEADS}<th class=\"l\">made by</th></tr>",
        );
        let origins = conifer_analyze::comm_origins::comm_origins(trace);
        for (c, tot) in &a.comms {
            let _ = write!(
                h,
                "<tr><td class=\"l\">{}</td><td>{}</td>{}<td class=\"l\">{}</td></tr>",
                esc(c),
                tot.calls,
                byte_cells(tot),
                esc(&profile::origin(&origins, c))
            );
        }
        h.push_str("</table>\n");
    }
    // Compression facts.
    h.push_str("<h2>The trace itself</h2><table class=\"facts\">");
    let rules: usize = trace.record.grammars.iter().map(|g| g.rule_count()).sum();
    let mut facts = vec![
        ("file size", human_bytes(file_bytes.len() as u64)),
        ("calls", calls.to_string()),
        (
            "bytes per call",
            format!("{:.3}", file_bytes.len() as f64 / calls.max(1) as f64),
        ),
        (
            "distinct signatures",
            trace.record.signatures.len().to_string(),
        ),
        (
            "distinct grammars",
            format!(
                "{} ({} rules) for {} ranks",
                trace.record.grammars.len(),
                rules,
                m.ranks
            ),
        ),
        ("timing families", trace.record.timing.len().to_string()),
    ];
    if let Some(f) = &trace.record.forest {
        facts.push((
            "trace trees",
            format!(
                "{} structure-tree vertices, {} distinct thread trees",
                f.structure.shape.len(),
                f.trees.len()
            ),
        ));
    }
    for (k, v) in facts {
        let _ = write!(h, "<tr><td>{k}</td><td class=\"l\">{}</td></tr>", esc(&v));
    }
    h.push_str("</table><table><tr><th class=\"l\">section</th><th>bytes</th><th>share</th></tr>");
    for (tag, n) in &sections {
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{n}</td><td>{:.1}%</td></tr>",
            esc(tag),
            100.0 * *n as f64 / file_bytes.len().max(1) as f64
        );
    }
    h.push_str("</table>\n");
    if a.unresolved_calls > 0 {
        let _ = write!(
            h,
            "<p class=\"note\">{} calls move data to or from peers the analysis cannot name \
             (inter-communicators, unknown datatypes): counted in the tables, not in the \
             matrix.</p>",
            a.unresolved_calls
        );
    }
    h.push_str("<p class=\"note\">Made by <code>conifer report</code>.</p></body></html>\n");
    Ok(h)
}

/// Seconds since the Unix epoch as a UTC date and time.
fn utc(seconds: f64) -> String {
    let s = seconds.max(0.0) as i64;
    let (days, rest) = (s.div_euclid(86400), s.rem_euclid(86400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

fn sel_all() -> Select {
    Select {
        messages: false,
        p2p: true,
        coll: true,
    }
}

/// Picture `kind` inline (its SVG in the page, so its bars are elements a browser lays out
/// and a test can measure), in a `figure` naming the kind.
fn figure(kind: &str, inp: &Inputs) -> Result<String, String> {
    let svg = plot::svg(kind, inp, sel_all())?;
    let svg = svg.trim_start_matches(|c| c != '<');
    let svg = match svg.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or(rest, |r| r.1),
        None => svg,
    };
    // Inline SVG needs no namespace in HTML (and the page names no address).
    let svg = svg
        .trim()
        .replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    Ok(format!(
        "<figure class=\"chart\" data-kind=\"{kind}\">{svg}</figure>\n"
    ))
}

/// Runs `conifer report`.
pub fn run(file: &Path, output: &Path) -> Result<ExitCode, String> {
    let page = html(file, &TraceFile::open(file)?, output)?;
    std::fs::write(output, page).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// The byte columns' headers: sent, received (the bytes that arrived) and posted (receive
/// capacity), each labelled, as `profile` has them.
const BYTE_HEADS: &str = "<th>sent</th><th title=\"bytes that arrived, from the receives' \
     statuses, else from the matching sends\">received (arrived)</th><th title=\"receive \
     capacity posted: count x type size, not data moved\">posted</th>";

/// A row's sent, received and posted bytes, as [`BYTE_HEADS`] heads them.
fn byte_cells(t: &Totals) -> String {
    format!(
        "<td>{}</td><td>{}</td><td>{}</td>",
        human_bytes(t.bytes_sent),
        human_bytes(t.bytes_received),
        profile::posted(t)
    )
}
