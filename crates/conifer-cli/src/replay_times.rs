//! A replayed rank's times file (`T.cft.msglog/replay-R.times`, written by the preload at the
//! program's `MPI_Finalize`, and by `conifer replay --repeat` as the median of its replays):
//! a one-line JSON header, then per MPI call three little-endian `u64`s of nanoseconds for the
//! interval before it — the computation, the wall time and the thread's CPU time.

use conifer_trace::decode::human_time;
use std::path::Path;

/// A replayed rank's intervals, one per MPI call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Times {
    /// Computation before each call, ns (what the simulator uses).
    pub intervals: Vec<u64>,
    /// Wall time of each interval, ns.
    pub wall: Vec<u64>,
    /// The thread's CPU time in each interval, ns.
    pub cpu: Vec<u64>,
    /// How the computation was measured (`wall less run-queue wait`, `thread CPU time`).
    pub clock: String,
    /// Replays the intervals are the median of (1: one replay).
    pub repeats: usize,
}

impl Times {
    /// Total computation, ns.
    pub fn computation_ns(&self) -> u64 {
        self.intervals.iter().sum()
    }

    /// Total wall time of the intervals, ns.
    pub fn wall_ns(&self) -> u64 {
        self.wall.iter().sum()
    }

    /// Total CPU time of the intervals, ns.
    pub fn cpu_ns(&self) -> u64 {
        self.cpu.iter().sum()
    }
}

/// Reads a times file.
pub fn read(path: &Path) -> Result<Times, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bad = || {
        format!(
            "{} is not a replay times file: replay the rank again",
            path.display()
        )
    };
    let at = bytes.iter().position(|&b| b == b'\n').ok_or_else(bad)?;
    let header: serde_json::Value = serde_json::from_slice(&bytes[..at]).map_err(|_| bad())?;
    let body = &bytes[at + 1..];
    let clock = header["clock"].as_str().ok_or_else(bad)?.to_string();
    if body.len() % 24 != 0 {
        return Err(bad());
    }
    let mut times = Times {
        clock,
        repeats: header["repeats"].as_u64().unwrap_or(1) as usize,
        ..Times::default()
    };
    for row in body.chunks_exact(24) {
        let v = |k: usize| u64::from_le_bytes(row[8 * k..8 * k + 8].try_into().expect("8 bytes"));
        times.intervals.push(v(0));
        times.wall.push(v(1));
        times.cpu.push(v(2));
    }
    Ok(times)
}

/// Writes `times` to `path` in the preload's format.
pub fn write(path: &Path, times: &Times) -> Result<(), String> {
    let header = serde_json::json!({
        "calls": times.intervals.len(),
        "clock": times.clock,
        "repeats": times.repeats,
        "kept": "median of each interval over the replays",
        "fields": ["computation_ns", "wall_ns", "cpu_ns"],
        "computation_ns": times.computation_ns(),
        "wall_ns": times.wall_ns(),
        "cpu_ns": times.cpu_ns(),
    });
    let mut out = header.to_string().into_bytes();
    out.push(b'\n');
    for k in 0..times.intervals.len() {
        for v in [times.intervals[k], times.wall[k], times.cpu[k]] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(path, out).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Each interval's median over `runs` (replays of one rank: the same calls), each column
/// on its own. Fails when the replays made different numbers of calls.
pub fn median(runs: &[Times]) -> Result<Times, String> {
    let first = runs.first().ok_or("no replays to combine")?;
    if let Some(other) = runs
        .iter()
        .find(|t| t.intervals.len() != first.intervals.len())
    {
        return Err(format!(
            "the replays made different numbers of calls ({} and {})",
            first.intervals.len(),
            other.intervals.len()
        ));
    }
    let column = |pick: fn(&Times) -> &Vec<u64>| -> Vec<u64> {
        (0..first.intervals.len())
            .map(|k| median_of(runs.iter().map(|t| pick(t)[k]).collect()))
            .collect()
    };
    Ok(Times {
        intervals: column(|t| &t.intervals),
        wall: column(|t| &t.wall),
        cpu: column(|t| &t.cpu),
        clock: first.clock.clone(),
        repeats: runs.len(),
    })
}

/// The median of `values` (the mean of the middle two for an even count).
fn median_of(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2
    }
}

/// The spread of the replays' total computation: (largest − smallest) / median of the totals.
pub fn spread(runs: &[Times]) -> f64 {
    let totals: Vec<u64> = runs.iter().map(Times::computation_ns).collect();
    let (Some(&lo), Some(&hi)) = (totals.iter().min(), totals.iter().max()) else {
        return 0.0;
    };
    let mid = median_of(totals) as f64;
    if mid > 0.0 {
        (hi - lo) as f64 / mid
    } else {
        0.0
    }
}

/// How a trace with replayed computation names the clock in its options
/// (`replayed computation: wall less run-queue wait, median of 5 replays`).
pub const OPTION_PREFIX: &str = "replayed computation: ";

/// The trace option stating how its replayed computation was measured.
pub fn option(clock: &str, repeats: usize) -> String {
    if repeats > 1 {
        format!("{OPTION_PREFIX}{clock}, each interval the median of {repeats} replays")
    } else {
        format!("{OPTION_PREFIX}{clock}, one replay")
    }
}

/// One line on a rank's replays: what was kept, how it was measured, the spread.
pub fn describe(rank: u32, kept: &Times, replays: &[Times]) -> String {
    let t = |ns: u64| human_time(ns as f64);
    let how = if replays.len() > 1 {
        format!(
            "each interval the median of {} replays, whose totals spread {:.1}% ({} to {})",
            replays.len(),
            100.0 * spread(replays),
            t(replays.iter().map(Times::computation_ns).min().unwrap_or(0)),
            t(replays.iter().map(Times::computation_ns).max().unwrap_or(0)),
        )
    } else {
        "one replay".to_string()
    };
    format!(
        "replayed rank {rank}: {} calls; computation {} (measured here between calls, interval by interval, as {}: wall {}, thread CPU {}; {how})",
        kept.intervals.len(),
        t(kept.computation_ns()),
        kept.clock,
        t(kept.wall_ns()),
        t(kept.cpu_ns()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(intervals: &[u64]) -> Times {
        Times {
            intervals: intervals.to_vec(),
            wall: intervals.iter().map(|v| v * 2).collect(),
            cpu: intervals.to_vec(),
            clock: "thread CPU time".into(),
            repeats: 1,
        }
    }

    #[test]
    fn each_interval_keeps_its_own_median() {
        let runs = [
            times(&[10, 50, 7]),
            times(&[30, 40, 9]),
            times(&[20, 90, 8]),
        ];
        let m = median(&runs).unwrap();
        assert_eq!(m.intervals, vec![20, 50, 8]);
        assert_eq!(m.wall, vec![40, 100, 16]);
        assert_eq!(m.repeats, 3);
        // Totals 67, 79, 118: (118 - 67) / 79.
        assert!((spread(&runs) - 51.0 / 79.0).abs() < 1e-12);
        assert!(median(&[times(&[1]), times(&[1, 2])]).is_err());
    }

    #[test]
    fn a_written_file_reads_back() {
        let dir = std::env::temp_dir().join(format!("conifer-times-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.times");
        let mut t = times(&[5, 6]);
        t.repeats = 3;
        write(&path, &t).unwrap();
        assert_eq!(read(&path).unwrap(), t);
        std::fs::write(&path, b"{}\n1234").unwrap();
        assert!(read(&path).unwrap_err().contains("not a replay times file"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
