//! When each call started and ended, as run, in nanoseconds on the synchronised clock (rank
//! 0's, see `conifer_trace::clock`) counted from the earliest moment of the run: exact with
//! `--timing lossless`, within the recorded relative error with `--timing lossy:REL` (both
//! with the recorder's own time in place, as the program saw it), else reconstructed from
//! the trace's timing statistics (each call lasts its timing family's mean duration and
//! starts its family's mean interval after the thread's previous call ended, from where the
//! thread started).

use conifer_trace::clock::RankClock;
use conifer_trace::decode::Call;

/// How a trace's timestamps are obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timestamps {
    /// Every call's own start and duration (`--timing lossless`).
    Exact,
    /// Every call's own start and duration, each interval and duration within the relative
    /// error it was recorded with (`--timing lossy:REL`).
    Bounded,
    /// Reconstructed from per-family means (aggregate timing).
    Reconstructed,
}

impl Timestamps {
    /// What the exports write in their metadata.
    pub fn describe(self) -> &'static str {
        match self {
            Timestamps::Exact => {
                "as run (the recorder's own time included), exact (recorded with --timing \
                 lossless), every rank on rank 0's clock"
            }
            Timestamps::Bounded => {
                "as run (the recorder's own time included), each interval and duration within \
                 the relative error it was recorded with (--timing lossy:REL), every rank on \
                 rank 0's clock"
            }
            Timestamps::Reconstructed => {
                "reconstructed: each call lasts its signature family's mean duration and \
                 starts the family's mean interval after the previous call (the recorder's \
                 own time left out), from where each thread started on rank 0's clock"
            }
        }
    }
}

/// Start and end of one call, nanoseconds from the run's earliest moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Start.
    pub start_ns: u64,
    /// End (≥ start).
    pub end_ns: u64,
}

/// One thread's clock.
#[derive(Debug)]
pub struct Clock {
    /// Where the thread started, ns from the run's earliest moment (reconstructed timing).
    base: f64,
    /// End of the thread's previous call (reconstructed timing).
    previous_end: f64,
    /// True once a call was timed.
    started: bool,
    /// The run's earliest moment on the synchronised clock.
    origin_ns: i64,
}

impl Clock {
    /// The clock of thread `thread` of a rank with clock `rank`, timestamps counted from
    /// `origin_ns` on the synchronised clock ([`conifer_trace::clock::earliest_ns`]).
    pub fn new(rank: &RankClock, thread: usize, origin_ns: i64) -> Clock {
        let base = rank
            .threads
            .get(thread)
            .map_or(0.0, |t| rank.to_global(t.base_ns as f64) - origin_ns as f64);
        Clock {
            base: base.max(0.0),
            previous_end: 0.0,
            started: false,
            origin_ns,
        }
    }

    /// The span of `call`, the thread's next call.
    pub fn next(&mut self, call: &Call) -> Span {
        if let Some(run) = call.run {
            let at = |t: i64| u64::try_from(t - self.origin_ns).unwrap_or(0);
            let (start_ns, end_ns) = (at(run.enter_ns), at(run.exit_ns));
            self.previous_end = end_ns as f64;
            self.started = true;
            return Span {
                start_ns,
                end_ns: end_ns.max(start_ns),
            };
        }
        let (interval, duration) = call
            .timing
            .map_or((0.0, 0.0), |t| (t.interval.mean(), t.duration.mean()));
        let start = if self.started {
            self.previous_end + interval.max(0.0)
        } else {
            self.base
        };
        self.started = true;
        self.previous_end = start + duration.max(0.0);
        // Whole nanoseconds, never before the previous call's end.
        let start_ns = start.round() as u64;
        Span {
            start_ns,
            end_ns: (self.previous_end.round() as u64).max(start_ns),
        }
    }
}

/// How `trace` has its timestamps.
pub fn timestamps(trace: &conifer_trace::Trace) -> Timestamps {
    match conifer_trace::timing_mode::TimingMode::recorded(&trace.meta.options) {
        conifer_trace::timing_mode::TimingMode::Lossless => Timestamps::Exact,
        conifer_trace::timing_mode::TimingMode::Lossy(_) => Timestamps::Bounded,
        _ => Timestamps::Reconstructed,
    }
}
