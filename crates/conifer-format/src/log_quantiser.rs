//! The quantiser of lossy timing (`--timing lossy:REL`): a nanosecond value to a bin code and
//! back, the reconstruction within relative error REL of the value.
//!
//! Values below `E = ceil(5 / REL) + 1` are their own code (exact). Larger values fall in
//! log-space bins of width `w = 2 ln(1 + 0.9 REL)`: bin `k = floor(ln v / w)`, code
//! `E + k − floor(ln E / w)`, reconstructed as `round(exp((k + ½) w))`. The bin centre is
//! within `exp(w/2) − 1 = 0.9 REL` of the value and rounding to a nanosecond adds at most
//! `0.5 / v ≤ 0.1 REL` for `v ≥ E`, so every value is reconstructed within REL (0 exactly).

/// The quantiser for one relative error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogQuantiser {
    /// Bin width in natural-log space.
    width: f64,
    /// The smallest value that is binned (smaller ones are exact).
    exact_below: u64,
    /// The bin of `exact_below`.
    first_bin: i64,
}

impl LogQuantiser {
    /// The quantiser that keeps relative error `rel` (in `(0, 1)`).
    pub fn new(rel: f64) -> LogQuantiser {
        let width = 2.0 * (0.9 * rel).ln_1p();
        let exact_below = (5.0 / rel).ceil() as u64 + 1;
        LogQuantiser {
            width,
            exact_below,
            first_bin: ((exact_below as f64).ln() / width).floor() as i64,
        }
    }

    /// The code of value `v`.
    pub fn code(&self, v: u64) -> u64 {
        if v < self.exact_below {
            return v;
        }
        let bin = ((v as f64).ln() / self.width).floor() as i64;
        self.exact_below + (bin - self.first_bin).max(0) as u64
    }

    /// The value code `code` stands for; `None` for codes no value has.
    pub fn value(&self, code: u64) -> Option<u64> {
        if code < self.exact_below {
            return Some(code);
        }
        let bin = self.first_bin + i64::try_from(code - self.exact_below).ok()?;
        let v = ((bin as f64 + 0.5) * self.width).exp().round();
        (v.is_finite() && v < u64::MAX as f64).then_some(v as u64)
    }
}

/// The relative error of `back` against the true value `v` (0 for `v = 0` reconstructed as 0).
pub fn relative_error(v: u64, back: u64) -> f64 {
    if v == 0 {
        if back == 0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (back as f64 - v as f64).abs() / v as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_is_reconstructed_within_the_bound() {
        for rel in [0.5, 0.1, 0.01, 0.001] {
            let q = LogQuantiser::new(rel);
            let values = (0..20_000u64).chain((0..2_000).map(|i| 1u64 << (i % 60) | i));
            for v in values {
                let back = q.value(q.code(v)).unwrap();
                let err = relative_error(v, back);
                assert!(err <= rel, "rel {rel}: {v} -> {back} ({err})");
            }
        }
    }

    #[test]
    fn codes_are_dense_and_far_fewer_than_values() {
        let q = LogQuantiser::new(0.1);
        assert_eq!(q.code(0), 0);
        assert_eq!(q.code(7), 7);
        // A factor of 2^20 is 20 ln 2 / w ≈ 81 bins at 10%.
        let span = q.code(50 << 20) - q.code(50);
        assert!((75..=90).contains(&span), "{span}");
    }
}
