//! What part of the run `plot timeline` draws: a time window (`--from`, `--to`, measured from
//! the moment every rank had returned from `MPI_Init`) and a range of ranks (`--ranks`).

use std::ops::Range;

/// The part of the run to draw (everything by default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    /// Start of the window, ns after every rank had returned from `MPI_Init`.
    pub from_ns: Option<u64>,
    /// End of the window, ns after the same moment.
    pub to_ns: Option<u64>,
    /// The ranks drawn (all when `None`).
    pub ranks: Option<Range<u32>>,
}

impl Window {
    /// The window of `--from`, `--to` and `--ranks` for a run of `total` ranks.
    pub fn parse(
        from: Option<&str>,
        to: Option<&str>,
        ranks: Option<&str>,
        total: u32,
    ) -> Result<Window, String> {
        let from_ns = from.map(|t| parse_time("--from", t)).transpose()?;
        let to_ns = to.map(|t| parse_time("--to", t)).transpose()?;
        if let (Some(a), Some(b)) = (from_ns, to_ns) {
            if a >= b {
                return Err(format!(
                    "--from {} is not before --to {}: give a window that ends after it starts",
                    from.unwrap_or_default(),
                    to.unwrap_or_default()
                ));
            }
        }
        let ranks = ranks
            .map(|spec| match spec.trim().parse::<u32>() {
                Ok(one) => crate::decode::parse_ranks(Some(one), None, total),
                Err(_) => crate::decode::parse_ranks(None, Some(spec), total),
            })
            .transpose()?;
        Ok(Window {
            from_ns,
            to_ns,
            ranks,
        })
    }

    /// Whether rank `r` is drawn.
    pub fn has_rank(&self, r: u32) -> bool {
        self.ranks.as_ref().is_none_or(|range| range.contains(&r))
    }

    /// The window's words for a title (empty for the whole run).
    pub fn describe(&self, unit: (f64, &str)) -> String {
        let mut parts = Vec::new();
        if let Some(r) = &self.ranks {
            parts.push(format!("ranks {}-{}", r.start, r.end - 1));
        }
        if self.from_ns.is_some() || self.to_ns.is_some() {
            let (div, name) = unit;
            let at = |t: Option<u64>| t.map_or(String::new(), |t| format!("{}", t as f64 / div));
            parts.push(format!("{}–{} {name}", at(self.from_ns), at(self.to_ns)));
        }
        parts.join(", ")
    }
}

/// A time such as `1.5ms`, `250us`, `3s` or `800ns` (a bare number is seconds), in ns.
pub fn parse_time(option: &str, text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, scale) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|&(unit, scale)| Some((t.strip_suffix(unit)?, scale)))
        .unwrap_or((t, 1e9));
    match number.trim().parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok((v * scale).round() as u64),
        _ => Err(format!(
            "{option} {text:?} is not a time: give a number with a unit, e.g. 1.5ms, 250us, 2s"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_units_and_bare_seconds() {
        assert_eq!(parse_time("--from", "1.5ms"), Ok(1_500_000));
        assert_eq!(parse_time("--from", "250us"), Ok(250_000));
        assert_eq!(parse_time("--from", "2"), Ok(2_000_000_000));
        assert_eq!(parse_time("--from", "800ns"), Ok(800));
        assert!(parse_time("--from", "soon")
            .unwrap_err()
            .contains("not a time"));
        assert!(parse_time("--from", "-1ms").is_err());
    }

    #[test]
    fn a_window_must_end_after_it_starts_and_name_existing_ranks() {
        assert!(Window::parse(Some("2ms"), Some("1ms"), None, 4).is_err());
        assert!(Window::parse(None, None, Some("2-9"), 4)
            .unwrap_err()
            .contains("does not exist"));
        let w = Window::parse(Some("1ms"), None, Some("1-2"), 4).unwrap();
        assert!(w.has_rank(1) && w.has_rank(2) && !w.has_rank(0) && !w.has_rank(3));
        assert_eq!(w.describe((1e6, "ms")), "ranks 1-2, 1– ms");
        let one = Window::parse(None, None, Some("3"), 4).unwrap();
        assert_eq!(one.ranks, Some(3..4));
    }
}
