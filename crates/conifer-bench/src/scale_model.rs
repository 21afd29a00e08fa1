//! The closed-form LogGP(O) cost of each scale pattern, written from the network parameters
//! alone (not from the simulator), to check what `conifer sim` predicts for 10⁵–10⁶ ranks.
//!
//! An eager message of m bytes costs its sender s(m) = o_s + O·m of CPU, the wire
//! w(m) = L + G·m, and its receiver r(m) = o_r + O·m. A rank that posts its receives, sends k
//! messages back to back and waits finishes its exchange k·s + max(k·r, w + r) later (the last
//! message arrives w after it left; the receives are processed in turn). An 8-byte allreduce
//! by recursive doubling takes ⌊log₂P⌋ rounds of s + w + r, plus one before and one after for
//! the ranks beyond the largest power of two. Computation is the intervals the critical rank
//! recorded.

use crate::scale_patterns::{mg_levels, result_count, Pattern, BLOCK, FACE, TASKS};

/// The network parameters the suite passes to `conifer sim --set`.
#[derive(Debug, Clone, Copy)]
pub struct Net {
    /// L (ns).
    pub latency: f64,
    /// o_s = o_r (ns).
    pub overhead: f64,
    /// G (ns/B).
    pub per_byte: f64,
    /// O (ns/B).
    pub copy_per_byte: f64,
}

/// The parameters of the scale runs.
pub const NET: Net = Net {
    latency: 400.0,
    overhead: 200.0,
    per_byte: 0.1,
    copy_per_byte: 0.1,
};

impl Net {
    /// `conifer sim --set` text for these parameters (gap 100 ns, eager limit 4 KiB: no
    /// message of the patterns is larger, and no rank injects faster than the gap).
    pub fn set_arg(&self) -> String {
        format!(
            "L={}ns,o={}ns,g=100ns,G={}ns/B,O={}ns/B,eager=4096B",
            self.latency, self.overhead, self.per_byte, self.copy_per_byte
        )
    }

    fn s(&self, bytes: f64) -> f64 {
        self.overhead + self.copy_per_byte * bytes
    }

    fn w(&self, bytes: f64) -> f64 {
        self.latency + self.per_byte * bytes
    }

    fn r(&self, bytes: f64) -> f64 {
        self.overhead + self.copy_per_byte * bytes
    }

    /// k messages of `bytes` each way.
    fn exchange(&self, k: f64, bytes: f64) -> f64 {
        k * self.s(bytes) + (k * self.r(bytes)).max(self.w(bytes) + self.r(bytes))
    }

    /// An 8-byte allreduce on `p` ranks.
    fn allreduce(&self, p: i64) -> f64 {
        let floor = 63 - (p as u64).leading_zeros() as i64;
        let rounds = if p.count_ones() == 1 {
            floor
        } else {
            floor + 2
        };
        rounds as f64 * (self.s(8.0) + self.w(8.0) + self.r(8.0))
    }
}

/// The rank whose time the closed form follows: an interior rank of the grids, an
/// off-diagonal rank of CG's square, the master.
pub fn critical_rank(pattern: Pattern, p: i64) -> i64 {
    match pattern {
        Pattern::CgTranspose => 1,
        Pattern::MasterWorker => 0,
        _ => {
            let grid = pattern.grid(p);
            let middle: Vec<i64> = grid.dims.iter().map(|d| (d / 2) & !1).collect();
            grid.rank(&middle).unwrap_or(0)
        }
    }
}

/// The closed-form run time (ns) of `pattern` on `p` ranks over `iters` iterations.
pub fn predicted_ns(pattern: Pattern, p: i64, iters: u32, net: &Net) -> f64 {
    let rank = critical_rank(pattern, p);
    let compute: f64 = pattern
        .calls(p, rank, iters)
        .iter()
        .skip(1) // MPI_Init's interval is before the run
        .map(|c| c.interval_ns)
        .sum();
    let face = 8.0 * FACE as f64;
    let n = f64::from(iters);
    let comm = match pattern {
        Pattern::Stencil2d | Pattern::Stencil2dPeriodic => {
            n * (net.exchange(4.0, face) + net.allreduce(p))
        }
        Pattern::Stencil3d | Pattern::Stencil3dPeriodic => {
            n * (net.exchange(6.0, face) + net.allreduce(p))
        }
        Pattern::CgTranspose => {
            let block = 8.0 * BLOCK as f64;
            n * (net.s(block) + net.w(block) + net.r(block) + 2.0 * net.allreduce(p))
        }
        Pattern::MgVcycle => {
            let levels = mg_levels(&pattern.grid(p));
            let cycle: f64 = (0..levels)
                .map(|l| 2.0 * net.exchange(6.0, 8.0 * (FACE >> (2 * l)).max(1) as f64))
                .sum();
            n * (cycle + net.allreduce(p))
        }
        Pattern::MasterWorker => {
            let receives: f64 = (1..p)
                .map(|w| {
                    (0..i64::from(TASKS))
                        .map(|t| net.r(8.0 * result_count(w + t) as f64))
                        .sum::<f64>()
                })
                .sum();
            f64::from(TASKS) * (p - 1) as f64 * net.s(32.0) + receives + net.allreduce(p)
        }
    };
    compute + comm
}
