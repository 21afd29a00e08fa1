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
pub type Sample<'a> = (&'a [Option<i64>], i64);

/// Fewest distinct feature values a form other than a constant must be seen at; a field
/// that *is* a feature or its negation (a line of slope ±1 through 0: the field is P, a grid
/// extent, the rank, a neighbour one plane back) needs only two.
const MIN_POINTS: usize = 3;

/// The forms every sample obeys, the preferred first: a constant; else, in the first group
/// of features (see [`crate::classing::Classing::feature_groups`]) where any fits, every
/// line in one of its features, or failing that every quotient. Several forms are
/// alternatives the inputs cannot tell apart (`cols` and `rows` on square grids); empty when
/// none fits.
pub fn fit(samples: &[Sample], groups: &[Vec<usize>]) -> Vec<Form> {
    let Some(first) = samples.first().map(|s| s.1) else {
        return Vec::new();
    };
    if samples.iter().all(|s| s.1 == first) {
        return vec![Form::Constant(first)];
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

/// The (feature, value) points, when the feature is known at every sample and takes at least
/// [`MIN_POINTS`] values.
fn points(samples: &[Sample], feature: usize, least: usize) -> Option<Vec<(i64, i64)>> {
    let pts: Vec<(i64, i64)> = samples
        .iter()
        .map(|(f, v)| Some((f.get(feature).copied().flatten()?, *v)))
        .collect::<Option<_>>()?;
    let mut xs: Vec<i64> = pts.iter().map(|p| p.0).collect();
    xs.sort_unstable();
    xs.dedup();
    (xs.len() >= least).then_some(pts)
}

fn linear(samples: &[Sample], feature: usize) -> Option<Form> {
    let pts = points(samples, feature, 2)?;
    let (x0, v0) = pts[0];
    let &(x1, v1) = pts.iter().find(|p| p.0 != x0)?;
    let (dv, dx) = (v1.checked_sub(v0)?, x1 - x0);
    if dv % dx != 0 {
        return None;
    }
    let a = dv / dx;
    let b = v0.checked_sub(a.checked_mul(x0)?)?;
    if b != 0 || a.abs() != 1 {
        points(samples, feature, MIN_POINTS)?;
    }
    let form = Form::Linear { feature, a, b };
    pts.iter()
        .all(|&(x, v)| a.checked_mul(x).and_then(|ax| ax.checked_add(b)) == Some(v))
        .then_some(form)
}

fn inverse(samples: &[Sample], feature: usize) -> Option<Form> {
    let pts = points(samples, feature, MIN_POINTS)?;
    let (mut lo, mut hi) = (i64::MIN, i64::MAX);
    for &(x, v) in &pts {
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

    fn fit(samples: &[Sample]) -> Option<Form> {
        let groups = crate::classing::Classing::Grid(2).feature_groups();
        super::fit(samples, &groups).first().copied()
    }

    #[test]
    fn forms_found_from_three_runs() {
        let (f4, f9, f16) = (at(4), at(9), at(16));
        // A neighbour one grid row up: −cols.
        let up = [(&f4[..], -2), (&f9[..], -3), (&f16[..], -4)];
        let form = fit(&up).unwrap();
        assert_eq!(form.to_string(), "-cols");
        assert_eq!(form.eval(&at(36)), Some(-6));
        // 720 elements shared among the ranks.
        let share = [(&f4[..], 180), (&f9[..], 80), (&f16[..], 45)];
        assert_eq!(fit(&share).unwrap().eval(&at(36)), Some(20));
        // Square grids cannot tell rows from columns: both are offered.
        let groups = crate::classing::Classing::Grid(2).feature_groups();
        let both: Vec<String> = super::fit(&up, &groups)
            .iter()
            .map(Form::to_string)
            .collect();
        assert_eq!(both, vec!["-cols", "-rows"]);
        // Two runs are not enough to call anything a function of P but P itself.
        assert_eq!(fit(&[(&f4[..], 1), (&f9[..], 2)]), None);
        assert_eq!(fit(&[(&f4[..], 4), (&f9[..], 9)]).unwrap().to_string(), "P");
        // Nothing fits a value that jumps about.
        assert_eq!(fit(&[(&f4[..], 1), (&f9[..], 7), (&f16[..], 2)]), None);
    }
}
