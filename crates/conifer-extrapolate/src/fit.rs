//! Fitting one leaf: the forms a field of a call can take as a function of the run (see
//! [`crate::classing::FEATURES`]) and the search for the first that every sample obeys.

use crate::classing::FEATURES;

/// A leaf as a function of the features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The same value everywhere.
    Constant(i64),
    /// `a · feature + b`.
    Linear {
        /// Index into [`FEATURES`].
        feature: usize,
        /// Slope.
        a: i64,
        /// Intercept.
        b: i64,
    },
    /// `⌊a / feature⌋`: a total divided among the ranks or along a grid dimension.
    Inverse {
        /// Index into [`FEATURES`].
        feature: usize,
        /// The total.
        a: i64,
    },
}

/// One observation of a leaf: the sample's features and the value recorded.
#[derive(Debug, Clone, Copy)]
pub struct Sample<'a> {
    /// The run's and rank's features (see [`FEATURES`]).
    pub features: &'a [Option<i64>],
    /// The value recorded.
    pub value: i64,
    /// The extent the value is known modulo (an offset along a periodic grid dimension), or 0
    /// when it is known exactly.
    pub modulus: i64,
}

impl Sample<'_> {
    /// Whether `form` gives this sample's value (modulo its modulus).
    pub fn obeys(&self, form: Form) -> bool {
        form.eval(self.features).is_some_and(|x| self.matches(x))
    }

    fn matches(&self, x: i64) -> bool {
        match self.modulus {
            0 => x == self.value,
            m => x.wrapping_sub(self.value).rem_euclid(m) == 0,
        }
    }

    /// The values this sample may stand for, nearest 0 first: the value, and for an offset
    /// known modulo *m* also the value ∓ *m* (on an extent of 4, two steps back is recorded
    /// as two ahead).
    fn representatives(&self) -> impl Iterator<Item = i64> {
        let m = self.modulus;
        let mut all = vec![self.value];
        if m != 0 {
            all.extend([self.value - m, self.value + m]);
        }
        all.sort_by_key(|v| (v.abs(), *v));
        all.into_iter()
    }

    /// How sure the value is: exact values first, then larger moduli (fewer wraps).
    fn certainty(&self) -> i64 {
        match self.modulus {
            0 => i64::MAX,
            m => m,
        }
    }
}

/// Fewest distinct feature values a form other than a constant must be seen at; a field
/// that *is* a feature or its negation (a line of slope ±1 through 0: the field is P, a grid
/// extent, the rank, a neighbour one plane back) needs only two.
const MIN_POINTS: usize = 3;

/// The forms every sample obeys, the preferred first: a constant; else, in the first group
/// of features (see [`crate::classing::Classing::feature_groups`]) where any fits, every
/// line in one of its features, or failing that every quotient. Several forms are
/// alternatives the inputs cannot tell apart (`cols` and `rows` on square grids); empty when
/// none fits.
///
/// Values known modulo an extent are first fitted as if known exactly; when nothing fits so,
/// a form fits that gives each a value congruent to it, drawn through the surest samples
/// (exact, else of the largest extent).
pub fn fit(samples: &[Sample], groups: &[Vec<usize>]) -> Vec<Form> {
    let exactly: Vec<Sample> = samples
        .iter()
        .map(|s| Sample { modulus: 0, ..*s })
        .collect();
    let forms = fit_samples(&exactly, groups);
    if forms.is_empty() && samples.iter().any(|s| s.modulus != 0) {
        return fit_samples(samples, groups);
    }
    forms
}

fn fit_samples(samples: &[Sample], groups: &[Vec<usize>]) -> Vec<Form> {
    let Some(surest) = samples.iter().max_by_key(|s| s.certainty()) else {
        return Vec::new();
    };
    let constant = surest
        .representatives()
        .map(Form::Constant)
        .find(|&c| samples.iter().all(|s| s.obeys(c)));
    if let Some(constant) = constant {
        return vec![constant];
    }
    for group in groups {
        let lines: Vec<Form> = group.iter().filter_map(|&f| linear(samples, f)).collect();
        if !lines.is_empty() {
            return lines;
        }
        let quotients: Vec<Form> = group.iter().filter_map(|&f| inverse(samples, f)).collect();
        if !quotients.is_empty() {
            return quotients;
        }
    }
    Vec::new()
}

/// The (feature, sample) points, surest first, when the feature is known at every sample and
/// takes at least `least` values.
fn points<'s, 'a>(
    samples: &'s [Sample<'a>],
    feature: usize,
    least: usize,
) -> Option<Vec<(i64, &'s Sample<'a>)>> {
    let mut pts: Vec<(i64, &Sample)> = samples
        .iter()
        .map(|s| Some((s.features.get(feature).copied().flatten()?, s)))
        .collect::<Option<_>>()?;
    pts.sort_by_key(|p| std::cmp::Reverse(p.1.certainty()));
    let mut xs: Vec<i64> = pts.iter().map(|p| p.0).collect();
    xs.sort_unstable();
    xs.dedup();
    (xs.len() >= least).then_some(pts)
}

/// The first line in `feature` through the two surest points (each taken at any value it may
/// stand for) that every sample obeys.
fn linear(samples: &[Sample], feature: usize) -> Option<Form> {
    let pts = points(samples, feature, 2)?;
    let (x0, s0) = pts[0];
    let &(x1, s1) = pts.iter().find(|p| p.0 != x0)?;
    let enough = points(samples, feature, MIN_POINTS).is_some();
    s0.representatives()
        .flat_map(|v0| s1.representatives().map(move |v1| (v0, v1)))
        .filter_map(|(v0, v1)| line_through((x0, v0), (x1, v1), feature))
        .filter(|form| {
            enough
                || matches!(
                    form,
                    Form::Linear {
                        a: -1 | 1,
                        b: 0,
                        ..
                    }
                )
        })
        .find(|&form| pts.iter().all(|p| p.1.obeys(form)))
}

/// The line in `feature` through two points, when its slope is whole.
fn line_through((x0, v0): (i64, i64), (x1, v1): (i64, i64), feature: usize) -> Option<Form> {
    let (dv, dx) = (v1.checked_sub(v0)?, x1 - x0);
    if dv % dx != 0 {
        return None;
    }
    let a = dv / dx;
    let b = v0.checked_sub(a.checked_mul(x0)?)?;
    Some(Form::Linear { feature, a, b })
}

/// A quotient through exact samples only (a wrapped offset is no share of a total).
fn inverse(samples: &[Sample], feature: usize) -> Option<Form> {
    if samples.iter().any(|s| s.modulus != 0) {
        return None;
    }
    let pts = points(samples, feature, MIN_POINTS)?;
    let (mut lo, mut hi) = (i64::MIN, i64::MAX);
    for (x, v) in pts.iter().map(|p| (p.0, p.1.value)) {
        if x <= 0 || v < 0 {
            return None;
        }
        // ⌊a / x⌋ = v  ⇔  v·x ≤ a ≤ v·x + x − 1
        let low = v.checked_mul(x)?;
        lo = lo.max(low);
        hi = hi.min(low.checked_add(x - 1)?);
    }
    (lo <= hi).then_some(Form::Inverse { feature, a: lo })
}

impl Form {
    /// The value at `features`; `None` when a feature it needs is unknown there or the value
    /// overflows.
    pub fn eval(self, features: &[Option<i64>]) -> Option<i64> {
        match self {
            Form::Constant(c) => Some(c),
            Form::Linear { feature, a, b } => a.checked_mul(features[feature]?)?.checked_add(b),
            Form::Inverse { feature, a } => {
                let x = features[feature]?;
                (x > 0).then(|| a / x)
            }
        }
    }

    /// True unless a constant.
    pub fn varies(self) -> bool {
        !matches!(self, Form::Constant(_))
    }
}

impl std::fmt::Display for Form {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Form::Constant(c) => write!(f, "{c}"),
            Form::Linear { feature, a, b } => {
                let x = FEATURES[feature];
                match (a, b) {
                    (1, 0) => write!(f, "{x}"),
                    (-1, 0) => write!(f, "-{x}"),
                    (a, 0) => write!(f, "{a}·{x}"),
                    (1, b) => write!(f, "{x} {} {}", sign(b), b.abs()),
                    (-1, b) => write!(f, "-{x} {} {}", sign(b), b.abs()),
                    (a, b) => write!(f, "{a}·{x} {} {}", sign(b), b.abs()),
                }
            }
            Form::Inverse { feature, a } => write!(f, "{a} / {}", FEATURES[feature]),
        }
    }
}

fn sign(b: i64) -> char {
    if b < 0 {
        '-'
    } else {
        '+'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(p: i64) -> Vec<Option<i64>> {
        crate::classing::Classing::Uniform.classify(p, 0).1
    }

    fn exact(features: &[Option<i64>], value: i64) -> Sample<'_> {
        Sample {
            features,
            value,
            modulus: 0,
        }
    }

    fn fit(samples: &[Sample]) -> Option<Form> {
        let groups = crate::classing::Classing::Grid(2).feature_groups(0);
        super::fit(samples, &groups).first().copied()
    }

    #[test]
    fn forms_found_from_three_runs() {
        let (f4, f9, f16) = (at(4), at(9), at(16));
        // A neighbour one grid row up: −cols.
        let up = [exact(&f4, -2), exact(&f9, -3), exact(&f16, -4)];
        let form = fit(&up).unwrap();
        assert_eq!(form.to_string(), "-cols");
        assert_eq!(form.eval(&at(36)), Some(-6));
        // 720 elements shared among the ranks.
        let share = [exact(&f4, 180), exact(&f9, 80), exact(&f16, 45)];
        assert_eq!(fit(&share).unwrap().eval(&at(36)), Some(20));
        // Square grids cannot tell rows from columns: both are offered.
        let groups = crate::classing::Classing::Grid(2).feature_groups(0);
        let both: Vec<String> = super::fit(&up, &groups)
            .iter()
            .map(Form::to_string)
            .collect();
        assert_eq!(both, vec!["-cols", "-rows"]);
        // Two runs are not enough to call anything a function of P but P itself.
        assert_eq!(fit(&[exact(&f4, 1), exact(&f9, 2)]), None);
        assert_eq!(
            fit(&[exact(&f4, 4), exact(&f9, 9)]).unwrap().to_string(),
            "P"
        );
        // Nothing fits a value that jumps about.
        assert_eq!(fit(&[exact(&f4, 1), exact(&f9, 7), exact(&f16, 2)]), None);
    }

    #[test]
    fn offsets_along_periodic_extents_fit_modulo_the_extent() {
        let (f4, f9, f16) = (at(4), at(9), at(16));
        let wrapped = |features, value, modulus| Sample {
            features,
            value,
            modulus,
        };
        // One step back on extents 2, 3, 4: shortest way round, +1 on the extent of 2.
        let back = [
            wrapped(&f4, 1, 2),
            wrapped(&f9, -1, 3),
            wrapped(&f16, -1, 4),
        ];
        assert_eq!(fit(&back), Some(Form::Constant(-1)));
        // Known exactly, the same numbers fit nothing.
        let exactly: Vec<Sample> = back.iter().map(|s| exact(s.features, s.value)).collect();
        assert_eq!(fit(&exactly), None);
        // Two steps back: 0 on extent 2, 1 on extent 3, 2 (ties forward) on extent 4. Taken
        // exactly these are a line, cols − 2, which is −2 modulo every extent.
        let two_back = [wrapped(&f4, 0, 2), wrapped(&f9, 1, 3), wrapped(&f16, 2, 4)];
        let form = fit(&two_back).unwrap();
        assert_eq!(form.to_string(), "cols - 2");
        assert_eq!(form.eval(&at(36)).map(|v| (v + 2) % 6), Some(0));
        // Three back on extents 4, 6, 8 recorded the short way round (1, −3 ties forward to
        // 3, −3): the anchors are taken at what they may stand for, giving −3.
        let (f36, f64) = (at(36), at(64));
        let three_back = [
            wrapped(&f16, 1, 4),
            wrapped(&f36, 3, 6),
            wrapped(&f64, -3, 8),
        ];
        assert_eq!(fit(&three_back), Some(Form::Constant(-3)));
        // Still refused: 0 mod 2, 1 mod 3 and 1 mod 4 (b ≡ 1 mod 12 makes 2a + b odd).
        let jumpy = [wrapped(&f4, 0, 2), wrapped(&f9, 1, 3), wrapped(&f16, 1, 4)];
        assert_eq!(fit(&jumpy), None);
    }
}
