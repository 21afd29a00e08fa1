//! A thread's calls as they ran, on the synchronised clock (rank 0's; see [`crate::clock`]).
//!
//! The recorder times each call on a clock that stops while it works: a call's *interval*
//! (the program's computation since the previous call returned) and *duration* (its MPI
//! part) are what a run without Conifer would have shown; this is the *without the recorder*
//! view (`conifer sim`). The recorder's own time is kept beside them: per call, its work
//! before the MPI part (`pre`) and after it (`post`), and per rank what one clock read costs
//! (two are taken out of each call's times). From these a reader rebuilds the run *as run*:
//! with `X` a call's exit from its wrapper, `E` its entry, `S`/`F` the start and end of its
//! MPI part,
//!
//! ```text
//! E(i) = X(i-1) + interval(i) + read      X(-1) = the thread's base
//! S(i) = E(i) + pre(i)
//! F(i) = S(i) + duration(i) + read
//! X(i) = F(i) + post(i)
//! ```
//!
//! exact with lossless timing. With lossy timing each value is within its bound, and the
//! thread's exactly recorded end ([`conifer_format::clock::ThreadSpan::end_ns`]) scales the sum back
//! onto the true end, so the error does not accumulate over the run.

pub use conifer_format::call_time::RecorderTime;
use conifer_format::clock::{RankClock, ThreadSpan};
use conifer_format::timeline::CallTime;

/// One call as it ran, ns on the synchronised clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSpan {
    /// The program called the MPI function (entered Conifer's wrapper).
    pub enter_ns: i64,
    /// The MPI library's part started.
    pub start_ns: i64,
    /// The MPI library's part ended.
    pub end_ns: i64,
    /// The call returned to the program.
    pub exit_ns: i64,
}

/// Rebuilds one thread's calls as run, call after call.
#[derive(Debug, Clone)]
pub struct AsRunClock<'c> {
    clock: &'c RankClock,
    /// Where the thread's clock starts, local ns.
    base: f64,
    /// The previous call's exit, local ns before scaling (relative to `base`).
    exit: f64,
    /// Stretch of the summed values onto the recorded end (1 with lossless timing, up to
    /// rounding).
    scale: f64,
    read: f64,
}

impl<'c> AsRunClock<'c> {
    /// The clock of thread `thread` of a rank with clock `clock`, whose calls have `times`
    /// and recorder times `recorder` (empty in traces written without them: then the
    /// recorder's time is not shown).
    pub fn new(
        clock: &'c RankClock,
        thread: usize,
        times: &[CallTime],
        recorder: &[RecorderTime],
    ) -> AsRunClock<'c> {
        let span = clock.threads.get(thread).copied();
        let read = if recorder.is_empty() {
            0.0
        } else {
            clock.read_ns()
        };
        let mut total = 0.0;
        for (i, t) in times.iter().enumerate() {
            let r = recorder.get(i).copied().unwrap_or_default();
            total += (t.interval_ns + t.duration_ns + r.pre_ns + r.post_ns) as f64 + 2.0 * read;
        }
        // The exact end is the last call's MPI end: the sum without its `post`.
        let last_post = recorder
            .get(times.len().wrapping_sub(1))
            .map_or(0.0, |r| r.post_ns as f64);
        let scale = match span {
            Some(ThreadSpan { base_ns, end_ns }) if total - last_post > 0.0 => {
                let exact = (end_ns - base_ns) as f64;
                let ratio = exact / (total - last_post);
                // Only a stretch within the values' own error bound is a correction; anything
                // else means the anchors do not describe these values.
                if (0.5..2.0).contains(&ratio) {
                    ratio
                } else {
                    1.0
                }
            }
            _ => 1.0,
        };
        AsRunClock {
            clock,
            base: span.map_or(0.0, |s| s.base_ns as f64),
            exit: 0.0,
            scale,
            read,
        }
    }

    /// The next call of the thread, with its times and the recorder's around it.
    pub fn next(&mut self, time: CallTime, recorder: RecorderTime) -> RunSpan {
        let enter = self.exit + time.interval_ns as f64 + self.read;
        let start = enter + recorder.pre_ns as f64;
        let end = start + time.duration_ns as f64 + self.read;
        let exit = end + recorder.post_ns as f64;
        self.exit = exit;
        let global = |t: f64| {
            let local = self.base + t * self.scale;
            self.clock.to_global(local).round() as i64
        };
        RunSpan {
            enter_ns: global(enter),
            start_ns: global(start),
            end_ns: global(end),
            exit_ns: global(exit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_format::clock::ClockSample;

    fn t(interval_ns: u64, duration_ns: u64) -> CallTime {
        CallTime {
            interval_ns,
            duration_ns,
        }
    }

    fn r(pre_ns: u64, post_ns: u64) -> RecorderTime {
        RecorderTime { pre_ns, post_ns }
    }

    #[test]
    fn rebuilds_the_timestamps_by_hand() {
        // Base 1,000 local; read 10 ns; offset +500 at both measurements.
        // Call 0: E = 1000 + 0 + 10 = 1010, S = 1030, F = 1030 + 100 + 10 = 1140, X = 1145.
        // Call 1: E = 1145 + 50 + 10 = 1205, S = 1225, F = 1225 + 200 + 10 = 1435, X = 1435.
        // Exact end 1435: scale 1.
        let clock = RankClock {
            read_ps: 10_000,
            init: Some(ClockSample {
                local_ns: 0,
                offset_ns: 500,
            }),
            finalize: Some(ClockSample {
                local_ns: 10_000,
                offset_ns: 500,
            }),
            threads: vec![ThreadSpan {
                base_ns: 1_000,
                end_ns: 1_435,
            }],
        };
        let times = [t(0, 100), t(50, 200)];
        let rec = [r(20, 5), r(20, 0)];
        let mut c = AsRunClock::new(&clock, 0, &times, &rec);
        assert_eq!(
            c.next(times[0], rec[0]),
            RunSpan {
                enter_ns: 1_510,
                start_ns: 1_530,
                end_ns: 1_640,
                exit_ns: 1_645
            }
        );
        assert_eq!(
            c.next(times[1], rec[1]),
            RunSpan {
                enter_ns: 1_705,
                start_ns: 1_725,
                end_ns: 1_935,
                exit_ns: 1_935
            }
        );
    }

    #[test]
    fn lossy_sums_are_stretched_onto_the_recorded_end() {
        // Values sum to 1,000 but the thread really ran 1,010 ns: every time stretches 1%.
        let clock = RankClock {
            threads: vec![ThreadSpan {
                base_ns: 0,
                end_ns: 1_010,
            }],
            ..RankClock::default()
        };
        let times = [t(0, 500), t(400, 100)];
        let rec = [r(0, 0), r(0, 0)];
        let mut c = AsRunClock::new(&clock, 0, &times, &rec);
        assert_eq!(c.next(times[0], rec[0]).end_ns, 505);
        let second = c.next(times[1], rec[1]);
        assert_eq!((second.start_ns, second.end_ns), (909, 1_010));
    }

    #[test]
    fn old_traces_show_the_recorder_free_clock() {
        let clock = RankClock::default();
        let times = [t(0, 100), t(50, 200)];
        let mut c = AsRunClock::new(&clock, 0, &times, &[]);
        c.next(times[0], RecorderTime::default());
        let second = c.next(times[1], RecorderTime::default());
        assert_eq!((second.enter_ns, second.exit_ns), (150, 350));
    }
}
