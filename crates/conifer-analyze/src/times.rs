//! The profile's times, in one place for the CLI, the report and Python: per function and per
//! call site, each timing family's pooled statistics weighted by the calls the site or
//! function made in it (aggregate timing), or every call's own duration when the run kept
//! them (`--timing lossless` or `lossy`); function totals from the ranks' exact totals where
//! the trace has them. Every time is without the recorder's own time.

use crate::{Analysis, Site, SiteStats};
use conifer_trace::decode::human_time;
use conifer_trace::timing_mode::TimingMode;
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Time statistics of a set of calls, nanoseconds (without the recorder).
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
    /// Adds `calls` calls taking `total` ns together, the shortest `min`, the longest `max`.
    pub fn add(&mut self, calls: u64, total: f64, min: f64, max: f64) {
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
    /// The shortest time a call's recorder-free duration can be told from zero, ns: the
    /// largest cost of one clock read over the ranks, which the recorder takes off every
    /// call's duration (0 when the trace does not say).
    pub resolution_ns: f64,
}

impl Times {
    /// The timing the times come from, as reports name it (`aggregate`, `lossless`, ...).
    pub fn timing_name(&self, trace: &Trace) -> String {
        if self.exact {
            recorded_timing(trace)
        } else {
            "aggregate".into()
        }
    }

    /// The timing the times come from, described in a phrase.
    pub fn timing_description(&self, trace: &Trace) -> String {
        if self.exact {
            TimingMode::recorded(&trace.meta.options).describe()
        } else {
            TimingMode::Aggregate.describe()
        }
    }

    /// `ns` as text, or `<R` when it is below the resolution `R` ([`Times::resolution_ns`]):
    /// a duration that short cannot be told from zero.
    pub fn shown(&self, ns: f64) -> String {
        if ns < self.resolution_ns {
            format!("<{}", human_time(self.resolution_ns))
        } else {
            human_time(ns)
        }
    }

    /// What `<R` means, for reports to print under their tables.
    pub fn resolution_note(&self) -> String {
        format!(
            "<{}: shorter than one clock read, which the recorder takes off every call's \
             duration; cannot be told from zero",
            human_time(self.resolution_ns)
        )
    }
}

/// The timing the trace was recorded with (`aggregate`, `histogram`, `lossless`,
/// `lossy:REL`).
pub fn recorded_timing(trace: &Trace) -> String {
    TimingMode::recorded(&trace.meta.options).to_string()
}

/// True when the trace carries every call's time (exact, or within a stated relative error).
pub fn per_call(trace: &Trace) -> bool {
    TimingMode::recorded(&trace.meta.options).keeps_calls()
}

/// The largest cost of a clock read over the ranks, ns (0 when the trace does not say).
pub fn clock_resolution_ns(trace: &Trace) -> f64 {
    trace
        .record
        .ranks
        .iter()
        .map(|r| r.clock.read_ns())
        .fold(0.0, f64::max)
}

/// The times of `analysis`'s functions and sites: per call with lossless or lossy timing;
/// else function totals from the ranks' exact totals (where the trace has them) and site
/// times from the pooled timing families.
pub fn times(trace: &Trace, analysis: &Analysis) -> Times {
    let mut t = if per_call(trace) {
        exact_times(trace).unwrap_or_else(|| pooled(trace, analysis))
    } else {
        pooled(trace, analysis)
    };
    t.resolution_ns = clock_resolution_ns(trace);
    t
}

/// [`pooled_times`], with function totals from the ranks' own totals (exact, or within the
/// trace's stated error) where all ranks have them — but for a function whose total is below
/// what that error allows near zero (1 µs a rank: a few quick calls), whose pooled families
/// say more.
fn pooled(trace: &Trace, analysis: &Analysis) -> Times {
    let mut t = pooled_times(trace, analysis);
    let figures = crate::rank_figures::rank_figures(trace);
    if figures.iter().all(|f| f.recorder_ns.is_some()) {
        let near_zero: f64 = figures
            .iter()
            .map(|f| f.error_floor_ns * f.relative_error)
            .sum();
        for (name, time) in &mut t.functions {
            let total: f64 = figures
                .iter()
                .filter_map(|f| f.functions.get(name))
                .map(|&ns| ns as f64)
                .sum();
            if total >= near_zero {
                time.total_ns = total;
            }
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
        resolution_ns: 0.0,
    }
}

/// Every call's own time (lossless or lossy timing): expands the calls, as the per-call times
/// are stored per call. Each call counts at the site [`crate::analyze`] put it at.
fn exact_times(trace: &Trace) -> Option<Times> {
    let families = crate::Families::new(trace);
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
            let family = families.of(term, &call.signature);
            let (site, _) = crate::site_of(trace, family, term, call.site, call.signature.caller);
            t.sites.entry(site).or_default().add(1, d, d, d);
        }
    }
    Some(t)
}

/// Call sites by time, longest first (then by calls).
pub fn sorted_sites<'a>(a: &'a Analysis, t: &Times) -> Vec<(&'a Site, &'a SiteStats, Time)> {
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
