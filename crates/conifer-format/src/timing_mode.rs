//! The timing a recording keeps (`--timing`, `CONIFER_TIMING`), parsed in one place for the
//! command line and the preload library.

/// What a recording keeps of call times.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum TimingMode {
    /// Statistics per timing family (the default).
    #[default]
    Aggregate,
    /// Every call's interval and duration, exact (see [`crate::timeline`]).
    Lossless,
    /// Every call's interval and duration within this relative error (see
    /// [`crate::lossy_timeline`]).
    Lossy(f64),
    /// Log-binned histograms of durations and intervals per timing family (see
    /// [`crate::histogram`]), besides the statistics.
    Histogram,
}

impl TimingMode {
    /// Parses `aggregate`, `lossless`, `histogram` or `lossy:REL` (0 < REL < 1, e.g.
    /// `lossy:0.1`); the error is one line naming the accepted values.
    pub fn parse(text: &str) -> Result<TimingMode, String> {
        let bad = || {
            format!(
                "timing {text:?} is not one of aggregate, lossless, histogram, lossy:REL \
                 (REL a relative error from 0.000001 to below 1, e.g. lossy:0.1)"
            )
        };
        match text {
            "aggregate" => Ok(TimingMode::Aggregate),
            "lossless" => Ok(TimingMode::Lossless),
            "histogram" => Ok(TimingMode::Histogram),
            _ => {
                let rel: f64 = text
                    .strip_prefix("lossy:")
                    .and_then(|r| r.parse().ok())
                    .ok_or_else(bad)?;
                if (MIN_REL..1.0).contains(&rel) {
                    Ok(TimingMode::Lossy(rel))
                } else {
                    Err(bad())
                }
            }
        }
    }

    /// Whether every call's times are kept (and readers get each call's own time).
    pub fn keeps_calls(&self) -> bool {
        matches!(self, TimingMode::Lossless | TimingMode::Lossy(_))
    }

    /// The timing a trace was recorded with, from its metadata's options (`timing=...`;
    /// aggregate when there is none).
    pub fn recorded(options: &[String]) -> TimingMode {
        options
            .iter()
            .find_map(|o| o.strip_prefix("timing="))
            .and_then(|t| TimingMode::parse(t).ok())
            .unwrap_or_default()
    }

    /// How readers describe the times: each call's own, or reconstructed from aggregates.
    pub fn describe(&self) -> String {
        match self {
            TimingMode::Lossless => "lossless (every call's own time)".into(),
            TimingMode::Lossy(rel) => format!(
                "{self} (every call's own time, each interval and duration within {}%)",
                rel * 100.0
            ),
            _ => "aggregate (pooled per timing family: time = calls x family mean)".into(),
        }
    }
}

impl std::fmt::Display for TimingMode {
    /// The mode as [`TimingMode::parse`] reads it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimingMode::Aggregate => write!(f, "aggregate"),
            TimingMode::Lossless => write!(f, "lossless"),
            TimingMode::Lossy(rel) => write!(f, "lossy:{rel}"),
            TimingMode::Histogram => write!(f, "histogram"),
        }
    }
}

/// The smallest relative error `lossy:` accepts: below it the exactly stored small values
/// (see [`crate::lossy_timeline`]) would reach billions of nanoseconds.
pub const MIN_REL: f64 = 1e-6;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_modes_and_refuses_the_rest() {
        assert_eq!(TimingMode::parse("lossless"), Ok(TimingMode::Lossless));
        assert_eq!(TimingMode::parse("histogram"), Ok(TimingMode::Histogram));
        assert_eq!(TimingMode::parse("lossy:0.1"), Ok(TimingMode::Lossy(0.1)));
        assert_eq!(TimingMode::Lossy(0.01).to_string(), "lossy:0.01");
        for bad in [
            "foo",
            "lossy:",
            "lossy:0",
            "lossy:1",
            "lossy:-0.1",
            "lossy:nan",
            "",
        ] {
            assert!(TimingMode::parse(bad).is_err(), "{bad}");
        }
    }
}
