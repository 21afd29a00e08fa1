//! What one rank contributes to a trace, in the form it is sent to the merging rank: its
//! signature table, one grammar per thread (over its local terminals), timing per signature,
//! and the communicators it belongs to with its rank in each.

use crate::forest::Structure;
use crate::grid::Grid;
use crate::varint::{put_i64, put_u64, Reader};
use conifer_compress::tree::TreeRecord;
use conifer_compress::FrozenGrammar;

/// Running statistics of one signature's call durations, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timing {
    /// Calls.
    pub count: u64,
    /// Sum of durations.
    pub sum: f64,
    /// Sum of squared durations.
    pub sum_sq: f64,
    /// Shortest.
    pub min: f64,
    /// Longest.
    pub max: f64,
}

impl Timing {
    /// Adds one duration.
    pub fn add(&mut self, ns: f64) {
        if self.count == 0 || ns < self.min {
            self.min = ns;
        }
        if ns > self.max {
            self.max = ns;
        }
        self.count += 1;
        self.sum += ns;
        self.sum_sq += ns * ns;
    }

    /// The statistics of both sets of durations together.
    pub fn combined(&self, other: &Timing) -> Timing {
        if self.count == 0 {
            return *other;
        }
        if other.count == 0 {
            return *self;
        }
        Timing {
            count: self.count + other.count,
            sum: self.sum + other.sum,
            sum_sq: self.sum_sq + other.sum_sq,
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The same statistics with every duration multiplied by `factor` (unit conversion).
    pub fn scaled(&self, factor: f64) -> Timing {
        Timing {
            count: self.count,
            sum: self.sum * factor,
            sum_sq: self.sum_sq * factor * factor,
            min: self.min * factor,
            max: self.max * factor,
        }
    }

    /// Mean duration.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Population standard deviation.
    pub fn stddev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let mean = self.mean();
        (self.sum_sq / self.count as f64 - mean * mean)
            .max(0.0)
            .sqrt()
    }

    /// Appends the statistics: the count, then mean, standard deviation, min and max as
    /// 32-bit floats (7 significant digits is ample for aggregate timing, and the standard
    /// deviation is kept as such so it survives the narrowing without cancellation).
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, self.count);
        for v in [self.mean(), self.stddev(), self.min, self.max] {
            out.extend_from_slice(&(v as f32).to_le_bytes());
        }
    }

    /// Reads what [`Timing::encode`] wrote.
    pub(crate) fn decode(r: &mut Reader) -> Option<Timing> {
        let count = r.u64()?;
        let mut f = || {
            r.take(4)
                .map(|b| f64::from(f32::from_le_bytes(b.try_into().expect("4 bytes"))))
        };
        let (mean, stddev, min, max) = (f()?, f()?, f()?, f()?);
        let n = count as f64;
        Some(Timing {
            count,
            sum: mean * n,
            sum_sq: (stddev * stddev + mean * mean) * n,
            min,
            max,
        })
    }
}

/// A communicator a rank belongs to: its recorded handle (encoded value bytes) and the rank's
/// position in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Membership {
    /// The communicator as recorded in signatures (an encoded handle value).
    pub comm: Vec<u8>,
    /// The rank's rank in it.
    pub my_rank: i64,
    /// Its Cartesian topology, if it has one (ranks in it are recorded as grid displacements).
    pub grid: Option<Grid>,
}

/// Appends an optional grid: 0, or 1 then the dimension count and each (extent, periodic).
pub fn put_grid(out: &mut Vec<u8>, grid: Option<&Grid>) {
    match grid {
        None => put_u64(out, 0),
        Some(g) => {
            put_u64(out, 1);
            put_u64(out, g.dims.len() as u64);
            for (&d, &p) in g.dims.iter().zip(&g.periods) {
                put_i64(out, d);
                put_u64(out, p.into());
            }
        }
    }
}

/// Reads what [`put_grid`] wrote: `Some(None)` for no grid, `None` when malformed.
pub fn read_grid(r: &mut Reader) -> Option<Option<Grid>> {
    match r.u64()? {
        0 => Some(None),
        1 => {
            let n = r.count()?;
            let (mut dims, mut periods) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for _ in 0..n {
                dims.push(r.i64()?);
                periods.push(r.u64()? != 0);
            }
            Grid::new(dims, periods).map(Some)
        }
        _ => None,
    }
}

/// One rank's record.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankRecord {
    /// Local terminal → signature bytes.
    pub signatures: Vec<Vec<u8>>,
    /// Local terminal → timing.
    pub timing: Vec<Timing>,
    /// Per symbolic thread, the grammar of its calls over local terminals.
    pub grammars: Vec<FrozenGrammar>,
    /// Communicators the rank belonged to.
    pub comms: Vec<Membership>,
    /// Per thread, every call's timing (see [`crate::timeline`]); empty unless recorded with
    /// `--timing lossless`.
    pub timelines: Vec<Vec<u8>>,
    /// The program's structure tree, when its binary carries one.
    pub structure: Option<Structure>,
    /// Per thread, its trace tree over local terminals (its grammar then holds only the calls
    /// outside the tree).
    pub trees: Vec<Option<TreeRecord>>,
}
