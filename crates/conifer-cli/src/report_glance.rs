//! The report's opening table, what a reader asks first: the command, ranks per host, the
//! run's span as run, where the steady state's time goes (computation and MPI between
//! `MPI_Init` and `MPI_Finalize`), start-up, shutdown and the recorder's own time apart, the
//! three most expensive call sites and the largest imbalance. Computed from the analysis;
//! this module only lays it out.

use conifer_analyze::imbalance::Spread;
use conifer_analyze::rank_figures::RankFigures;
use conifer_trace::decode::human_time;
use conifer_trace::Trace;
use std::collections::BTreeMap;
use std::fmt::Write;

/// All ranks' time, ns: the steady state (between `MPI_Init` and `MPI_Finalize`, without the
/// recorder) and what is shown apart from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steady {
    /// Computation between calls.
    pub compute_ns: f64,
    /// Inside MPI, start-up and shutdown left out.
    pub mpi_ns: f64,
    /// Inside `MPI_Init`/`MPI_Init_thread`.
    pub startup_ns: f64,
    /// Inside `MPI_Finalize` (waiting there for the last rank included).
    pub shutdown_ns: f64,
    /// The recorder's own time (`None` for traces that do not say).
    pub recorder_ns: Option<f64>,
}

impl Steady {
    /// The figures of every rank summed.
    pub fn of(figures: &[RankFigures]) -> Option<Steady> {
        if figures.is_empty() {
            return None;
        }
        let sum = |f: &dyn Fn(&RankFigures) -> f64| figures.iter().map(f).sum::<f64>();
        let of = |names: &[&str]| {
            sum(&|r| {
                names
                    .iter()
                    .filter_map(|n| r.functions.get(*n))
                    .sum::<u64>() as f64
            })
        };
        let startup_ns = of(&["MPI_Init", "MPI_Init_thread"]);
        let shutdown_ns = of(&["MPI_Finalize"]);
        let recorded = figures.iter().all(|f| f.recorder_ns.is_some());
        Some(Steady {
            compute_ns: sum(&|r| r.compute_ns),
            mpi_ns: (sum(&|r| r.mpi_ns) - startup_ns - shutdown_ns).max(0.0),
            startup_ns,
            shutdown_ns,
            recorder_ns: recorded.then(|| sum(&|r| r.recorder_ns.unwrap_or(0.0))),
        })
    }

    /// The steady state's length: computation and MPI.
    pub fn total_ns(&self) -> f64 {
        self.compute_ns + self.mpi_ns
    }
}

/// `part` as a percentage of `whole`.
fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// The facts of the opening table.
pub struct Glance {
    /// The command line run.
    pub command: String,
    /// Ranks per host, by host name.
    pub hosts: BTreeMap<String, u32>,
    /// The run's span as run (first call's entry to last call's end, any rank).
    pub span_ns: Option<f64>,
    /// Where the time goes, all ranks (`None` when no rank has figures).
    pub time: Option<Steady>,
    /// The most expensive call sites (start-up and shutdown left out): label and time.
    pub top_sites: Vec<(String, f64)>,
    /// The function whose slowest rank spent the most above the mean (`MPI_Init` left out:
    /// its time is the launch's, not the program's).
    pub imbalance: Option<Spread>,
}

impl Glance {
    /// The facts of `trace`, given its ranks' figures, its call sites by time (label, time)
    /// and its functions' spreads (largest excess first).
    pub fn of(
        trace: &Trace,
        figures: &[RankFigures],
        sites: impl IntoIterator<Item = (String, f64)>,
        spreads: &[Spread],
    ) -> Glance {
        let mut hosts = BTreeMap::new();
        for entry in &trace.record.ranks {
            *hosts.entry(entry.host.clone()).or_insert(0) += 1;
        }
        Glance {
            command: trace.meta.command_line.join(" "),
            hosts,
            span_ns: conifer_analyze::rank_figures::run_span_ns(trace),
            time: Steady::of(figures),
            top_sites: sites.into_iter().take(3).collect(),
            imbalance: spreads
                .iter()
                .find(|s| !s.function.starts_with("MPI_Init"))
                .filter(|s| s.excess_ns() > 0.0)
                .cloned(),
        }
    }

    /// The table, with `esc` escaping text for HTML.
    pub fn html(&self, esc: impl Fn(&str) -> String) -> String {
        let ranks: u32 = self.hosts.values().sum();
        let per_host = self
            .hosts
            .iter()
            .map(|(h, n)| format!("{h}: {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let hosts = format!(
            "{ranks} ranks on {} host{} ({per_host})",
            self.hosts.len(),
            if self.hosts.len() == 1 { "" } else { "s" }
        );
        let sites = if self.top_sites.is_empty() {
            "-".to_string()
        } else {
            self.top_sites
                .iter()
                .map(|(label, t)| format!("{label} ({})", human_time(*t)))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let imbalance = self.imbalance.as_ref().map_or_else(
            || "- (the trace keeps no per-function totals per rank)".to_string(),
            |s| {
                format!(
                    "{}: {} on rank {} against a mean of {} ({:.1}x; least {} on rank {})",
                    s.function,
                    human_time(s.max_ns as f64),
                    s.max_rank,
                    human_time(s.mean_ns),
                    s.ratio(),
                    human_time(s.min_ns as f64),
                    s.min_rank
                )
            },
        );
        let dash = || "-".to_string();
        let steady = self.time.map_or_else(dash, |t| {
            let all = t.total_ns();
            format!(
                "MPI {} ({:.1}%), computation {} ({:.1}%): all ranks' time between MPI_Init \
                 and MPI_Finalize",
                human_time(t.mpi_ns),
                pct(t.mpi_ns, all),
                human_time(t.compute_ns),
                pct(t.compute_ns, all)
            )
        });
        let ends = self.time.map_or_else(dash, |t| {
            format!(
                "MPI_Init {}, MPI_Finalize {} (all ranks; MPI_Finalize's includes waiting for \
                 the last rank)",
                human_time(t.startup_ns),
                human_time(t.shutdown_ns)
            )
        });
        let recorder = self
            .time
            .and_then(|t| t.recorder_ns.map(|r| (r, t.total_ns())))
            .map_or_else(dash, |(r, all)| {
                format!(
                    "{} (all ranks; {:.1}% on top of the steady state)",
                    human_time(r),
                    pct(r, all)
                )
            });
        let rows = [
            ("command", self.command.clone()),
            ("ranks", hosts),
            (
                "run span (as run)",
                self.span_ns.map_or_else(|| "-".into(), human_time),
            ),
            ("steady state (without the recorder)", steady),
            ("apart: start-up and shutdown", ends),
            ("apart: the recorder's own time", recorder),
            ("most expensive call sites (steady state)", sites),
            ("largest imbalance (time in MPI per rank)", imbalance),
        ];
        let mut h = String::from("<h2>At a glance</h2><table class=\"facts glance\">");
        for (k, v) in rows {
            let _ = write!(h, "<tr><td>{k}</td><td class=\"l\">{}</td></tr>", esc(&v));
        }
        h.push_str("</table>\n");
        h
    }
}
