//! How each MPI function's time spreads over the ranks (mpiP's imbalance view): the least,
//! mean and most time a rank spent in it, and which ranks, from the ranks' exact per-function
//! totals (without the recorder).

use crate::rank_figures::RankFigures;
use serde::Serialize;
use std::collections::BTreeSet;

/// One function's time over all ranks, ns without the recorder (a rank that never called it
/// counts as 0).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    /// The MPI function.
    pub function: String,
    /// The least time a rank spent in it.
    pub min_ns: u64,
    /// The (lowest-numbered) rank that spent `min_ns`.
    pub min_rank: u32,
    /// The mean over all ranks.
    pub mean_ns: f64,
    /// The most time a rank spent in it.
    pub max_ns: u64,
    /// The (lowest-numbered) rank that spent `max_ns`.
    pub max_rank: u32,
}

impl Spread {
    /// What the slowest rank spent above the mean: the time the others would wait for it.
    pub fn excess_ns(&self) -> f64 {
        self.max_ns as f64 - self.mean_ns
    }

    /// `max / mean` (1 when perfectly balanced; 0 for a function without time).
    pub fn ratio(&self) -> f64 {
        if self.mean_ns > 0.0 {
            self.max_ns as f64 / self.mean_ns
        } else {
            0.0
        }
    }
}

/// Every function's spread, largest excess first (ties by name); empty when the trace keeps
/// no exact per-function totals (traces written before Conifer kept them).
pub fn spreads(figures: &[RankFigures]) -> Vec<Spread> {
    let names: BTreeSet<&String> = figures.iter().flat_map(|f| f.functions.keys()).collect();
    let mut out: Vec<Spread> = names
        .into_iter()
        .map(|name| {
            let times: Vec<(u32, u64)> = figures
                .iter()
                .map(|f| (f.rank, f.functions.get(name).copied().unwrap_or(0)))
                .collect();
            let min = times.iter().min_by_key(|&&(r, t)| (t, r)).copied();
            let max = times
                .iter()
                .max_by_key(|&&(r, t)| (t, u32::MAX - r))
                .copied();
            let (min_rank, min_ns) = min.unwrap_or_default();
            let (max_rank, max_ns) = max.unwrap_or_default();
            let total: u64 = times.iter().map(|t| t.1).sum();
            Spread {
                function: name.clone(),
                min_ns,
                min_rank,
                mean_ns: total as f64 / times.len().max(1) as f64,
                max_ns,
                max_rank,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.excess_ns()
            .total_cmp(&a.excess_ns())
            .then(a.function.cmp(&b.function))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(rank: u32, times: &[(&str, u64)]) -> RankFigures {
        RankFigures {
            rank,
            functions: times.iter().map(|&(f, t)| (f.to_string(), t)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_slowest_rank_above_the_mean_comes_first() {
        // Recv: rank 0 waits 900 ns, rank 1 100, rank 2 never calls it: mean 1000/3.
        // Barrier: 300, 200, 100: mean 200, excess 100.
        let figures = [
            rank(0, &[("MPI_Recv", 900), ("MPI_Barrier", 300)]),
            rank(1, &[("MPI_Recv", 100), ("MPI_Barrier", 200)]),
            rank(2, &[("MPI_Barrier", 100)]),
        ];
        let s = spreads(&figures);
        assert_eq!(s[0].function, "MPI_Recv");
        assert_eq!((s[0].max_rank, s[0].max_ns), (0, 900));
        assert_eq!((s[0].min_rank, s[0].min_ns), (2, 0));
        assert!((s[0].mean_ns - 1000.0 / 3.0).abs() < 1e-9);
        assert_eq!(s[1].function, "MPI_Barrier");
        assert_eq!(s[1].excess_ns(), 100.0);
        assert!((s[1].ratio() - 1.5).abs() < 1e-12);
    }

    #[test]
    fn ties_name_the_lowest_rank_and_old_traces_give_nothing() {
        let s = spreads(&[rank(0, &[("MPI_Bcast", 5)]), rank(1, &[("MPI_Bcast", 5)])]);
        assert_eq!((s[0].min_rank, s[0].max_rank), (0, 0));
        assert!(spreads(&[rank(0, &[]), rank(1, &[])]).is_empty());
    }
}
