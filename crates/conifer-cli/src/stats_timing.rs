//! The timing part of `conifer stats`: the timing recorded, its bytes, for lossy timing the
//! relative error achieved (as the recorder measured it against the true values), and for
//! histogram timing the percentiles of each timing family.

use conifer_trace::decode::human_time;
use conifer_trace::histogram::{bin_range, Bins, BINS_PER_OCTAVE};
use conifer_trace::lossy_timeline::header;
use conifer_trace::Trace;
use std::fmt::Write;

/// Sections that hold timing.
const TIMING_SECTIONS: [&str; 6] = ["TIME", "THST", "TMLN", "RECT", "CLCK", "RTOT"];
/// Families the text output lists (by calls, most first); `--json` lists all.
const LISTED_FAMILIES: usize = 20;

/// What a trace keeps of its calls' times.
pub struct TimingSummary {
    /// The recording's `timing=` option (`aggregate` when none was given).
    pub mode: String,
    /// Bytes of the timing sections in the file, by section.
    pub bytes_by_section: Vec<(String, usize)>,
    /// Lossy timing: the largest and the call-weighted mean relative error of any value.
    pub error: Option<(f64, f64)>,
}

impl TimingSummary {
    /// The summary of `trace`, whose sections have the sizes `sections`.
    pub fn of(trace: &Trace, sections: &[(String, usize)]) -> TimingSummary {
        let mode = trace
            .meta
            .options
            .iter()
            .find_map(|o| o.strip_prefix("timing="))
            .unwrap_or("aggregate")
            .to_string();
        let bytes_by_section = sections
            .iter()
            .filter(|(t, _)| TIMING_SECTIONS.contains(&t.as_str()))
            .cloned()
            .collect();
        let (mut max, mut weighted, mut values, mut lossy) = (0.0f64, 0.0, 0u64, false);
        for entry in &trace.record.ranks {
            for (thread, bytes) in entry.timelines.iter().enumerate() {
                if let Some(h) = header(bytes) {
                    let calls = trace.record.thread_calls(entry, thread);
                    lossy = true;
                    max = max.max(h.max_error);
                    weighted += h.mean_error * calls as f64;
                    values += calls;
                }
            }
        }
        let mean = if values == 0 {
            0.0
        } else {
            weighted / values as f64
        };
        TimingSummary {
            mode,
            bytes_by_section,
            error: lossy.then_some((max, mean)),
        }
    }

    /// Bytes of all timing sections.
    pub fn bytes(&self) -> usize {
        self.bytes_by_section.iter().map(|(_, n)| n).sum()
    }

    /// One line: mode, bytes, and the achieved error.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .bytes_by_section
            .iter()
            .map(|(t, n)| format!("{t} {n}"))
            .collect();
        let mut line = format!(
            "{}, {} bytes ({})",
            self.mode,
            self.bytes(),
            parts.join(", ")
        );
        if let Some((max, mean)) = self.error {
            let _ = write!(
                line,
                ", relative error max {:.2}% mean {:.2}%",
                max * 100.0,
                mean * 100.0
            );
        }
        line
    }

    /// The `timing` object of `stats --json`.
    pub fn json(&self, trace: &Trace, functions: &[&str]) -> serde_json::Value {
        serde_json::json!({
            "mode": self.mode,
            "bytes": self.bytes(),
            "bytes_by_section": self.bytes_by_section.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "max_relative_error": self.error.map(|e| e.0),
            "mean_relative_error": self.error.map(|e| e.1),
            "clocks": clocks_json(trace),
            "histogram_bins": histogram_scheme(),
            "histograms": families(trace, functions)
                .iter()
                .map(|f| serde_json::json!({
                    "function": f.function,
                    "terminal": f.terminal,
                    "calls": f.duration.total(),
                    "duration_percentiles_ns": percentiles(f.duration),
                    "interval_percentiles_ns": percentiles(f.interval),
                    "duration_bins": bins_json(f.duration),
                    "interval_bins": bins_json(f.interval),
                }))
                .collect::<Vec<_>>(),
        })
    }
}

/// Per rank, its clock: offsets to rank 0 measured at `MPI_Init` and `MPI_Finalize`, the
/// cost of one clock read, and where its threads lie on its own clock.
fn clocks_json(trace: &Trace) -> Vec<serde_json::Value> {
    let sample = |s: Option<conifer_trace::clock::ClockSample>| {
        s.map(|s| serde_json::json!({"local_ns": s.local_ns, "offset_ns": s.offset_ns}))
    };
    trace
        .record
        .ranks
        .iter()
        .map(|r| {
            serde_json::json!({
                "init": sample(r.clock.init),
                "finalize": sample(r.clock.finalize),
                "clock_read_ps": r.clock.read_ps,
                "threads": r.clock.threads.iter().map(|t| serde_json::json!({
                    "base_ns": t.base_ns, "end_ns": t.end_ns,
                })).collect::<Vec<_>>(),
                "recorder_ns": r.totals.recorder_ns,
            })
        })
        .collect()
}

/// One line on the clocks: the largest offset to rank 0 and the largest drift between the
/// two measurements; `None` for traces without measured offsets.
pub fn clocks_line(trace: &Trace) -> Option<String> {
    let ranks = &trace.record.ranks;
    if ranks.iter().all(|r| r.clock.init.is_none()) {
        return None;
    }
    let measured = ranks.iter().filter(|r| r.clock.init.is_some()).count();
    let largest = ranks
        .iter()
        .filter_map(|r| r.clock.init)
        .map(|s| s.offset_ns.unsigned_abs())
        .max()
        .unwrap_or(0);
    let drift = ranks
        .iter()
        .filter_map(|r| Some((r.clock.init?, r.clock.finalize?)))
        .map(|(a, b)| (b.offset_ns - a.offset_ns).unsigned_abs())
        .max();
    let recorder: u64 = ranks.iter().map(|r| r.totals.recorder_ns).sum();
    Some(format!(
        "offsets to rank 0 measured on {measured} of {} ranks (largest {}{}); recorder's own time {} over all ranks",
        ranks.len(),
        human_time(largest as f64),
        drift.map_or(String::new(), |d| format!(", drift up to {} by MPI_Finalize", human_time(d as f64))),
        human_time(recorder as f64),
    ))
}

/// A timing family with a histogram.
struct Family<'t> {
    function: &'t str,
    terminal: u32,
    duration: &'t Bins,
    interval: &'t Bins,
}

/// The families of `trace` that have histograms, most calls first.
fn families<'t>(trace: &'t Trace, functions: &[&'t str]) -> Vec<Family<'t>> {
    let mut families: Vec<Family> = trace
        .record
        .timing
        .iter()
        .filter_map(|f| {
            let h = f.histogram.as_ref()?;
            Some(Family {
                function: functions.get(f.terminal as usize).copied().unwrap_or("?"),
                terminal: f.terminal,
                duration: &h.duration,
                interval: &h.interval,
            })
        })
        .collect();
    families.sort_by_key(|f| std::cmp::Reverse(f.duration.total()));
    families
}

fn histogram_scheme() -> String {
    format!(
        "bin 0: below 1 ns; bin b >= 1: [2^((b-1)/{0}), 2^(b/{0})) ns",
        BINS_PER_OCTAVE
    )
}

fn percentiles(bins: &Bins) -> serde_json::Value {
    serde_json::json!({
        "p50": bins.quantile(0.5),
        "p90": bins.quantile(0.9),
        "p99": bins.quantile(0.99),
    })
}

/// Non-empty bins as `[bin, low_ns, high_ns, count]`.
fn bins_json(bins: &Bins) -> Vec<serde_json::Value> {
    bins.nonempty()
        .map(|(b, c)| {
            let (low, high) = bin_range(b);
            serde_json::json!([b, low, high, c])
        })
        .collect()
}

/// The text table of histogram families: calls and duration percentiles.
pub fn histogram_table(trace: &Trace, functions: &[&str]) -> String {
    let families = families(trace, functions);
    if families.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n{:<28} {:>12} {:>10} {:>10} {:>10} {:>12}\n",
        "timing family (histogram)", "calls", "p50", "p90", "p99", "p50 before"
    );
    let time = |v: Option<f64>| v.map_or("-".to_string(), human_time);
    for f in families.iter().take(LISTED_FAMILIES) {
        let _ = writeln!(
            out,
            "{:<28} {:>12} {:>10} {:>10} {:>10} {:>12}",
            format!("{} #{}", f.function, f.terminal),
            f.duration.total(),
            time(f.duration.quantile(0.5)),
            time(f.duration.quantile(0.9)),
            time(f.duration.quantile(0.99)),
            time(f.interval.quantile(0.5)),
        );
    }
    if families.len() > LISTED_FAMILIES {
        let _ = writeln!(
            out,
            "({} more families: stats --json lists them all)",
            families.len() - LISTED_FAMILIES
        );
    }
    out
}
