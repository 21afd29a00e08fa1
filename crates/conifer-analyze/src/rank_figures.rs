//! Each rank's time figures, exact in every timing mode: its span as run (from its first
//! call's entry to its last call's end, the recorder's own time included), and, without the
//! recorder, its time inside MPI (overall and per function) and its computation between
//! calls; and the recorder's own time. Read from the trace's per-rank totals (`RTOT`) and
//! thread spans (`CLCK`); traces written before Conifer kept them give the totals their
//! `TIME` section kept (log-quantised, within 4.4%) and no span or recorder time.

use conifer_trace::Trace;
use serde::Serialize;
use std::collections::BTreeMap;

/// One rank's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RankFigures {
    /// World rank.
    pub rank: u32,
    /// As run: from the rank's first call's entry to its last call's end, ns (`None` for
    /// traces that do not say).
    pub span_ns: Option<f64>,
    /// Without the recorder: time inside MPI, ns.
    pub mpi_ns: f64,
    /// Without the recorder: computation between calls, ns.
    pub compute_ns: f64,
    /// The recorder's own time, ns (`None` for traces that do not say).
    pub recorder_ns: Option<f64>,
    /// True when the figures are exact sums (`RTOT`, `CLCK`); false for figures kept within
    /// a stated error (`RQTM`) and for old traces' quantised totals.
    pub exact: bool,
    /// The relative error the figures carry (0 when exact; 0.044 for old traces' totals).
    pub relative_error: f64,
    /// Below this many ns, figures are within `relative_error` × it instead (0 when exact).
    pub error_floor_ns: f64,
    /// Per MPI function name, the time inside its calls, ns (calls through C and Fortran
    /// together; without the recorder); empty for old traces.
    pub functions: BTreeMap<String, u64>,
}

impl RankFigures {
    /// The rank's time without the recorder: inside MPI plus between calls.
    pub fn busy_ns(&self) -> f64 {
        self.mpi_ns + self.compute_ns
    }

    /// Percentage of `busy_ns` inside MPI.
    pub fn mpi_percent(&self) -> f64 {
        percent(self.mpi_ns, self.busy_ns())
    }

    /// Time inside `MPI_Init` and `MPI_Init_thread`, ns (0 for old traces, which do not keep
    /// per-function totals).
    pub fn init_ns(&self) -> f64 {
        INIT_FUNCTIONS
            .iter()
            .filter_map(|f| self.functions.get(*f))
            .sum::<u64>() as f64
    }

    /// Percentage inside MPI of the rank's time after `MPI_Init` returned, as mpiP counts it:
    /// MPI_Init's time left out of both.
    pub fn mpi_percent_after_init(&self) -> f64 {
        let init = self.init_ns();
        percent(self.mpi_ns - init, self.busy_ns() - init)
    }
}

/// The functions that start MPI, whose time is the launch's rather than the program's.
pub const INIT_FUNCTIONS: [&str; 2] = ["MPI_Init", "MPI_Init_thread"];

/// `100 × part / whole`, 0 when `whole` is not positive.
fn percent(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// The figures of every rank of `trace`.
pub fn rank_figures(trace: &Trace) -> Vec<RankFigures> {
    let names: BTreeMap<u16, &str> = trace
        .catalog
        .iter()
        .map(|f| (f.id, f.name.as_str()))
        .collect();
    let precision = trace.record.rank_precision;
    trace
        .record
        .ranks
        .iter()
        .enumerate()
        .map(|(rank, entry)| {
            let spans = &entry.clock.threads;
            let span_ns = (!spans.is_empty()).then(|| {
                let start = spans.iter().map(|t| t.base_ns).min().unwrap_or(0);
                let end = spans.iter().map(|t| t.end_ns).max().unwrap_or(0);
                (end - start) as f64
            });
            let totals = &entry.totals;
            if totals.is_empty() {
                return RankFigures {
                    rank: rank as u32,
                    span_ns,
                    mpi_ns: entry.time.mpi_ns,
                    compute_ns: entry.time.compute_ns,
                    recorder_ns: None,
                    exact: false,
                    relative_error: OLD_TOTALS_ERROR,
                    error_floor_ns: 0.0,
                    functions: BTreeMap::new(),
                };
            }
            let mut functions: BTreeMap<String, u64> = BTreeMap::new();
            for f in &totals.functions {
                let name = names.get(&f.function).copied().unwrap_or("?");
                // Conifer's `free` records (heap tracking) are not MPI calls; the computation
                // before them stays in the rank's total.
                if name == "free" {
                    continue;
                }
                *functions.entry(name.to_string()).or_default() += f.mpi_ns;
            }
            RankFigures {
                rank: rank as u32,
                span_ns,
                mpi_ns: totals.mpi_ns() as f64,
                compute_ns: totals.compute_ns as f64,
                recorder_ns: Some(totals.recorder_ns as f64),
                exact: precision.is_none(),
                relative_error: precision.map_or(0.0, |p| p.relative),
                error_floor_ns: precision.map_or(0.0, |p| p.floor_ns as f64),
                functions,
            }
        })
        .collect()
}

/// The error of old traces' per-rank totals (the `TIME` section's, log-quantised).
const OLD_TOTALS_ERROR: f64 = 0.044;

/// What the figures of `trace` mean, for reports to print beside them: as run or without
/// the recorder, and exact or within which error.
pub fn figures_note(trace: &Trace) -> String {
    format!(
        "span: as run (first call's entry to last call's end, the recorder's own time \
         included); MPI and computation: without the recorder ({})",
        accuracy(trace)
    )
}

/// How exact the per-rank figures of `trace` are, in a phrase: "exact sums", or the error
/// they were kept within.
pub fn accuracy(trace: &Trace) -> String {
    let old = trace.record.ranks.iter().any(|r| r.totals.is_empty());
    match trace.record.rank_precision {
        _ if old => "this trace keeps per-rank totals within 4.4%".into(),
        None => "exact sums".into(),
        Some(p) => format!(
            "within {} of the exact sums, as aggregate timing keeps them (lossless timing: exact)",
            p.describe()
        ),
    }
}

/// As run, on rank 0's clock: from the first call's entry on any rank to the end of the last
/// call's MPI part on any rank, ns (`None` for traces that do not keep where threads lie).
pub fn run_span_ns(trace: &Trace) -> Option<f64> {
    let ends = trace.record.ranks.iter().flat_map(|entry| {
        let clock = &entry.clock;
        clock.threads.iter().map(move |t| {
            (
                clock.to_global(t.base_ns as f64),
                clock.to_global(t.end_ns as f64),
            )
        })
    });
    let (start, end) = ends.fold((f64::INFINITY, f64::NEG_INFINITY), |(s, e), (a, b)| {
        (s.min(a), e.max(b))
    });
    (start <= end).then_some(end - start)
}
