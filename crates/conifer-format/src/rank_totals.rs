//! Exact per-rank figures, kept in every timing mode: per function, the rank's time inside
//! it; the program's computation between calls; and the recorder's own time. Summed in clock
//! ticks while the program runs and converted to nanoseconds once, so nothing is rounded per
//! call or snapped to a grid: a rank's figures cost bytes per rank, not per call. (Call counts
//! per rank are the grammars' and `CNTS`'s, not repeated here.)

use crate::varint::{put_u64, Reader};

/// One function's calls on one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FunctionTotals {
    /// Catalog function id.
    pub function: u16,
    /// Time inside its calls (their MPI part), ns.
    pub mpi_ns: u64,
}

/// One rank's exact totals.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RankTotals {
    /// The recorder's own time on the rank's threads (encoding, compressing, clock reads,
    /// and its clock synchronisation at `MPI_Init`), ns.
    pub recorder_ns: u64,
    /// Computation between calls on the rank's threads, ns.
    pub compute_ns: u64,
    /// Per function called, in function id order.
    pub functions: Vec<FunctionTotals>,
}

impl RankTotals {
    /// Time inside MPI, over all functions.
    pub fn mpi_ns(&self) -> u64 {
        self.functions.iter().map(|f| f.mpi_ns).sum()
    }

    /// True for a record without totals (traces written before Conifer kept them).
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty() && self.recorder_ns == 0 && self.compute_ns == 0
    }

    /// The totals as a rank column value (`docs/format.md`, `RTOT`).
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, self.recorder_ns);
        put_u64(out, self.compute_ns);
        put_u64(out, self.functions.len() as u64);
        let mut previous = 0u64;
        for f in &self.functions {
            put_u64(out, u64::from(f.function) - previous);
            previous = f.function.into();
            put_u64(out, f.mpi_ns);
        }
    }

    /// Reads what [`RankTotals::encode`] wrote; `None` when malformed.
    pub fn decode(r: &mut Reader) -> Option<RankTotals> {
        let recorder_ns = r.u64()?;
        let compute_ns = r.u64()?;
        let n = r.count()?;
        let mut function = 0u64;
        let functions = (0..n)
            .map(|_| {
                function = function.checked_add(r.u64()?)?;
                Some(FunctionTotals {
                    function: u16::try_from(function).ok()?,
                    mpi_ns: r.u64()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(RankTotals {
            recorder_ns,
            compute_ns,
            functions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_sums() {
        let totals = RankTotals {
            recorder_ns: 123_456,
            compute_ns: 34_359_738_368,
            functions: vec![
                FunctionTotals {
                    function: 3,
                    mpi_ns: 1_000,
                },
                FunctionTotals {
                    function: 227,
                    mpi_ns: 7,
                },
            ],
        };
        let mut bytes = Vec::new();
        totals.encode(&mut bytes);
        let mut r = Reader::new(&bytes);
        assert_eq!(RankTotals::decode(&mut r), Some(totals.clone()));
        assert_eq!(r.remaining(), 0);
        assert_eq!(totals.mpi_ns(), 1_007);
        // A function id past u16 is malformed.
        let mut bad = Vec::new();
        for v in [0, 0, 1, 70_000, 1] {
            put_u64(&mut bad, v);
        }
        assert_eq!(RankTotals::decode(&mut Reader::new(&bad)), None);
    }
}
