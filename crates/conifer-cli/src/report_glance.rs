//! The report's opening table, what a reader asks first: the command, ranks per host, the
//! run's span as run, the share of time in MPI, the three most expensive call sites and the
//! largest imbalance. Computed from the analysis; this module only lays it out.

use conifer_analyze::imbalance::Spread;
use conifer_analyze::rank_figures::RankFigures;
use conifer_trace::decode::human_time;
use conifer_trace::Trace;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The facts of the opening table.
pub struct Glance {
    /// The command line run.
    pub command: String,
    /// Ranks per host, by host name.
    pub hosts: BTreeMap<String, u32>,
    /// The run's span as run (first call's entry to last call's end, any rank).
    pub span_ns: Option<f64>,
    /// Time in MPI over time in MPI and between calls, all ranks, without the recorder (%).
    pub mpi_percent: Option<f64>,
    /// The most expensive call sites (`MPI_Init`'s left out): label and time.
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
        let (mpi, busy) = figures
            .iter()
            .fold((0.0, 0.0), |(m, b), f| (m + f.mpi_ns, b + f.busy_ns()));
        Glance {
            command: trace.meta.command_line.join(" "),
            hosts,
            span_ns: conifer_analyze::rank_figures::run_span_ns(trace),
            mpi_percent: (busy > 0.0).then(|| 100.0 * mpi / busy),
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
        let rows = [
            ("command", self.command.clone()),
            ("ranks", hosts),
            (
                "run span (as run)",
                self.span_ns.map_or_else(|| "-".into(), human_time),
            ),
            (
                "in MPI (without the recorder)",
                self.mpi_percent
                    .map_or_else(|| "-".into(), |p| format!("{p:.1}% of the ranks' time")),
            ),
            ("most expensive call sites (after MPI_Init)", sites),
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
