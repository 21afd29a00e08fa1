//! Histogram timing while recording (`--timing histogram`): per terminal, durations and
//! intervals counted in tick bins cheap enough for every call (eight linear sub-bins per
//! octave of the tick count), turned into the nanosecond bins of
//! [`conifer_format::histogram`] when the record is taken, each tick bin's count going to the
//! nanosecond bin of its centre (within 6.25% of every value in it).

use conifer_format::histogram::{bin_of, TimingHistogram};

/// Per terminal, duration and interval counts per tick bin.
#[derive(Default)]
pub struct TickHistograms {
    per_terminal: Vec<[Vec<u64>; 2]>,
}

/// The tick bin of `t`: 0 for 0, else `1 + 8 e + s` for `t` in `[2^e (1 + s/8), 2^e (1 + (s+1)/8))`.
#[inline(always)]
fn tick_bin(t: u64) -> usize {
    if t == 0 {
        return 0;
    }
    let e = 63 - t.leading_zeros();
    let sub = if e >= 3 { t >> (e - 3) } else { t << (3 - e) } & 7;
    1 + 8 * e as usize + sub as usize
}

/// The centre of tick bin `b`, in ticks.
fn tick_centre(b: usize) -> f64 {
    if b == 0 {
        return 0.0;
    }
    let (e, sub) = ((b - 1) / 8, (b - 1) % 8);
    (e as f64).exp2() * (1.0 + (sub as f64 + 0.5) / 8.0)
}

impl TickHistograms {
    /// Counts one call of `terminal`.
    #[inline]
    pub fn add(&mut self, terminal: u32, interval: u64, duration: u64) {
        let t = terminal as usize;
        if self.per_terminal.len() <= t {
            self.per_terminal.resize_with(t + 1, Default::default);
        }
        for (bins, ticks) in self.per_terminal[t].iter_mut().zip([duration, interval]) {
            let b = tick_bin(ticks);
            if bins.len() <= b {
                bins.resize(b + 1, 0);
            }
            bins[b] += 1;
        }
    }

    /// The histograms in nanoseconds, one per terminal of `terminals`.
    pub fn in_ns(&self, terminals: usize, ns_per_tick: f64) -> Vec<TimingHistogram> {
        (0..terminals)
            .map(|t| {
                let mut h = TimingHistogram::default();
                if let Some([duration, interval]) = self.per_terminal.get(t) {
                    for (to, from) in [(&mut h.duration, duration), (&mut h.interval, interval)] {
                        for (b, &count) in from.iter().enumerate().filter(|(_, &c)| c > 0) {
                            to.add(bin_of(tick_centre(b) * ns_per_tick), count);
                        }
                    }
                }
                h
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_bins_hold_their_values_and_centres_are_close() {
        for t in [1u64, 2, 3, 7, 8, 9, 100, 1_000, 123_456_789] {
            let c = tick_centre(tick_bin(t));
            assert!((c / t as f64 - 1.0).abs() <= 0.0625, "{t}: centre {c}");
        }
        assert_eq!(tick_bin(0), 0);
        assert!(tick_bin(16) > tick_bin(15));
    }
}
