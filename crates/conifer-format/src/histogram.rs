//! Histogram timing (`--timing histogram`): per timing family, pooled over all ranks like the
//! statistics of [`crate::timing`], the counts of call durations and of the intervals before
//! the calls in log bins of a quarter octave: bin 0 holds values below 1 ns, bin `b ≥ 1`
//! the values in `[2^((b−1)/4), 2^(b/4))` ns (each bin 19% wide, so its geometric centre is
//! within 9.1% of every value in it). Stored in section `THST`.

use crate::varint::{put_u64, Reader};

/// Bins per doubling.
pub const BINS_PER_OCTAVE: f64 = 4.0;
/// The most bins a histogram has (values up to 2^64 ns).
pub const MAX_BINS: usize = 1 + 64 * 4;

/// The bin of a value in nanoseconds.
pub fn bin_of(ns: f64) -> usize {
    if ns < 1.0 || ns.is_nan() {
        0
    } else {
        ((ns.log2() * BINS_PER_OCTAVE).floor() as usize + 1).min(MAX_BINS - 1)
    }
}

/// The nanoseconds bin `b` covers, `[low, high)`.
pub fn bin_range(b: usize) -> (f64, f64) {
    if b == 0 {
        (0.0, 1.0)
    } else {
        let low = ((b - 1) as f64 / BINS_PER_OCTAVE).exp2();
        (low, (b as f64 / BINS_PER_OCTAVE).exp2())
    }
}

/// The value that stands for bin `b`: its geometric centre (0 for bin 0).
pub fn bin_centre(b: usize) -> f64 {
    let (low, high) = bin_range(b);
    if b == 0 {
        0.0
    } else {
        (low * high).sqrt()
    }
}

/// Counts per bin, trailing empty bins left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bins(pub Vec<u64>);

impl Bins {
    /// Adds `count` values to bin `b`.
    pub fn add(&mut self, b: usize, count: u64) {
        if self.0.len() <= b {
            self.0.resize(b + 1, 0);
        }
        self.0[b] += count;
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Adds every count of `other`.
    pub fn absorb(&mut self, other: &Bins) {
        for (b, &c) in other.0.iter().enumerate().filter(|(_, &c)| c > 0) {
            self.add(b, c);
        }
    }

    /// The value standing for the `q`-quantile (`0 ≤ q ≤ 1`): the centre of the bin holding
    /// it; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.total();
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.0.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(bin_centre(b));
            }
        }
        None
    }

    /// The non-empty bins: (bin, count).
    pub fn nonempty(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.0.iter().copied().enumerate().filter(|&(_, c)| c > 0)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, self.nonempty().count() as u64);
        let mut previous = 0;
        for (b, c) in self.nonempty() {
            put_u64(out, (b - previous) as u64);
            put_u64(out, c);
            previous = b;
        }
    }

    fn decode(r: &mut Reader) -> Option<Bins> {
        let n = r.count()?;
        let mut bins = Bins::default();
        let mut at = 0usize;
        for _ in 0..n {
            at = at.checked_add(usize::try_from(r.u64()?).ok()?)?;
            if at >= MAX_BINS {
                return None;
            }
            bins.add(at, r.u64()?);
        }
        Some(bins)
    }
}

/// The durations of and intervals before one family's (or signature's) calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimingHistogram {
    /// Call durations.
    pub duration: Bins,
    /// Intervals from the end of the thread's previous call.
    pub interval: Bins,
}

impl TimingHistogram {
    /// Adds both histograms of `other`.
    pub fn absorb(&mut self, other: &TimingHistogram) {
        self.duration.absorb(&other.duration);
        self.interval.absorb(&other.interval);
    }
}

/// `THST`: for every timing family, in order, 0 (no histogram) or 1 then its
/// duration bins and interval bins, each as the count of non-empty bins and per bin the
/// distance from the previous non-empty bin (from 0 for the first) and the count.
pub fn encode_histograms<'a>(
    histograms: impl Iterator<Item = Option<&'a TimingHistogram>>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for histogram in histograms {
        match histogram {
            None => out.push(0),
            Some(h) => {
                out.push(1);
                h.duration.encode(&mut out);
                h.interval.encode(&mut out);
            }
        }
    }
    out
}

/// Reads what [`encode_histograms`] wrote for `families` families.
pub fn decode_histograms(bytes: &[u8], families: usize) -> Option<Vec<Option<TimingHistogram>>> {
    let mut r = Reader::new(bytes);
    let histograms = (0..families)
        .map(|_| match r.byte()? {
            0 => Some(None),
            1 => Some(Some(TimingHistogram {
                duration: Bins::decode(&mut r)?,
                interval: Bins::decode(&mut r)?,
            })),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    (r.remaining() == 0).then_some(histograms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_quarter_octaves_and_centres_within_ten_percent() {
        assert_eq!(bin_of(0.0), 0);
        assert_eq!(bin_of(1.0), 1);
        assert_eq!(bin_of(2.0), 5);
        for v in [1.0, 3.0, 17.0, 1_000.0, 123_456.0, 9.9e9] {
            let b = bin_of(v);
            let (low, high) = bin_range(b);
            assert!(low <= v && v < high, "{v} not in bin {b}");
            assert!((bin_centre(b) / v - 1.0).abs() < 0.091, "{v}");
        }
    }

    #[test]
    fn quantiles_and_round_trip() {
        let mut h = TimingHistogram::default();
        for v in 1..=100 {
            h.duration.add(bin_of(f64::from(v) * 100.0), 1);
            h.interval.add(bin_of(0.0), 1);
        }
        let median = h.duration.quantile(0.5).unwrap();
        assert!((median / 5_000.0 - 1.0).abs() < 0.1, "{median}");
        assert_eq!(h.interval.quantile(0.99), Some(0.0));
        let mut out = Vec::new();
        h.duration.encode(&mut out);
        h.interval.encode(&mut out);
        let mut r = Reader::new(&out);
        assert_eq!(Bins::decode(&mut r).unwrap(), h.duration);
        assert_eq!(Bins::decode(&mut r).unwrap(), h.interval);
        assert_eq!(Bins::decode(&mut Reader::new(&[1, 255, 3, 1])), None);
    }
}
