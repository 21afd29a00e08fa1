//! Per-terminal timing statistics kept in integer clock ticks while the program runs: a
//! call adds integers (no conversion to floating point on its path, and sums that stay
//! exact however many calls there are); the record converts them to the trace's nanosecond
//! statistics once.

use conifer_format::rank_record::CallTiming;
use conifer_format::timing::Timing;

/// Count, sum, sum of squares, smallest and largest of a set of tick counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct TickStats {
    count: u64,
    sum: u128,
    sum_sq: u128,
    min: u64,
    max: u64,
}

impl TickStats {
    #[inline]
    fn add(&mut self, ticks: u64) {
        if self.count == 0 || ticks < self.min {
            self.min = ticks;
        }
        self.max = self.max.max(ticks);
        self.count += 1;
        let wide = u128::from(ticks);
        self.sum += wide;
        self.sum_sq = self.sum_sq.saturating_add(wide * wide);
    }

    /// The statistics in nanoseconds, at `ns_per_tick`.
    fn in_ns(&self, ns_per_tick: f64) -> Timing {
        Timing {
            count: self.count,
            sum: self.sum as f64 * ns_per_tick,
            sum_sq: self.sum_sq as f64 * ns_per_tick * ns_per_tick,
            min: self.min as f64 * ns_per_tick,
            max: self.max as f64 * ns_per_tick,
        }
    }
}

/// One terminal's calls: their durations and the intervals before them, in ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallTicks {
    interval: TickStats,
    duration: TickStats,
}

impl CallTicks {
    /// Adds one call: the ticks since the thread's previous call ended, and its duration.
    #[inline]
    pub fn add(&mut self, interval: u64, duration: u64) {
        self.interval.add(interval);
        self.duration.add(duration);
    }

    /// The calls' count and their exact interval and duration sums, in ticks.
    pub fn sums(&self) -> (u64, u128, u128) {
        (self.duration.count, self.interval.sum, self.duration.sum)
    }

    /// The calls' statistics in nanoseconds, at `ns_per_tick`.
    pub fn in_ns(&self, ns_per_tick: f64) -> CallTiming {
        CallTiming {
            duration: self.duration.in_ns(ns_per_tick),
            interval: self.interval.in_ns(ns_per_tick),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_match_the_floating_point_ones() {
        // Durations 3, 5, 4 ticks and intervals 10, 0, 7 at 2.5 ns a tick, by hand:
        // durations sum 12 → 30 ns, squares 50 → 312.5 ns², min 7.5 ns, max 12.5 ns.
        let mut t = CallTicks::default();
        for (interval, duration) in [(10, 3), (0, 5), (7, 4)] {
            t.add(interval, duration);
        }
        let ns = t.in_ns(2.5);
        assert_eq!(ns.duration.count, 3);
        assert_eq!(ns.duration.sum, 30.0);
        assert_eq!(ns.duration.sum_sq, 312.5);
        assert_eq!((ns.duration.min, ns.duration.max), (7.5, 12.5));
        assert_eq!(
            (ns.interval.sum, ns.interval.min, ns.interval.max),
            (42.5, 0.0, 25.0)
        );
        let mut float = CallTiming::default();
        for (interval, duration) in [(10.0, 3.0), (0.0, 5.0), (7.0, 4.0)] {
            float.add(interval, duration);
        }
        assert_eq!(float.scaled(2.5), ns);
    }

    #[test]
    fn no_calls_give_empty_statistics() {
        assert_eq!(CallTicks::default().in_ns(1.0), CallTiming::default());
    }
}
