//! When each call started and ended, per thread, in nanoseconds from the thread's first call:
//! exact with `--timing lossless`, within the recorded relative error with `--timing lossy:REL`,
//! else reconstructed from the trace's timing statistics
//! (each call lasts its timing family's mean duration and starts its family's mean interval
//! after the thread's previous call ended).

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
            Timestamps::Exact => "exact (recorded with --timing lossless)",
            Timestamps::Bounded => {
                "per call, each interval and duration within the relative error it was \
                 recorded with (--timing lossy:REL)"
            }
            Timestamps::Reconstructed => {
                "reconstructed: each call lasts its signature family's mean duration and \
                 starts the family's mean interval after the previous call"
            }
        }
    }
}

/// Start and end of one call, nanoseconds from its thread's first call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Start.
    pub start_ns: u64,
    /// End (≥ start).
    pub end_ns: u64,
}

/// One thread's clock.
#[derive(Debug, Default)]
pub struct Clock {
    /// End of the thread's previous call (reconstructed timing).
    previous_end: f64,
    /// True once a call was timed.
    started: bool,
}

impl Clock {
    /// The span of `call`, the thread's next call.
    pub fn next(&mut self, call: &Call) -> Span {
        if let (Some(start), Some(time)) = (call.start_ns, call.time) {
            self.previous_end = (start + time.duration_ns) as f64;
            self.started = true;
            return Span {
                start_ns: start,
                end_ns: start + time.duration_ns,
            };
        }
        let (interval, duration) = call
            .timing
            .map_or((0.0, 0.0), |t| (t.interval.mean(), t.duration.mean()));
        let start = if self.started {
            self.previous_end + interval.max(0.0)
        } else {
            0.0
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
