//! What one rank contributes to a trace, in the form it is sent to the merging rank: its
//! signature table, one grammar per thread (over its local terminals), timing per signature,
//! and the communicators it belongs to with its rank in each.

use crate::forest::Structure;
use crate::grid::Grid;
use crate::varint::{put_i64, put_u64, Reader};
use conifer_compress::tree::TreeRecord;
use conifer_compress::FrozenGrammar;

pub use crate::timing::{CallTiming, Timing};

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
    /// Local terminal → timing of its calls.
    pub timing: Vec<CallTiming>,
    /// Per symbolic thread, the grammar of its calls over local terminals.
    pub grammars: Vec<FrozenGrammar>,
    /// Communicators the rank belonged to.
    pub comms: Vec<Membership>,
    /// Per thread, every call's timing (see [`crate::timeline`]); empty unless recorded with
    /// `--timing lossless` or `lossy:REL`.
    pub timelines: Vec<Vec<u8>>,
    /// Local terminal → histograms of its calls' times; empty unless recorded with
    /// `--timing histogram`.
    pub histograms: Vec<crate::histogram::TimingHistogram>,
    /// The program's structure tree, when its binary carries one.
    pub structure: Option<Structure>,
    /// Per thread, its trace tree over local terminals (its grammar then holds only the calls
    /// outside the tree).
    pub trees: Vec<Option<TreeRecord>>,
    /// Per thread, the value streams of its skeleton signatures (empty when none were made:
    /// see [`crate::streams`]).
    pub streams: Vec<crate::streams::ThreadStreams>,
    /// How the rank's clock maps onto rank 0's, and where its threads lie on it.
    pub clock: crate::clock::RankClock,
    /// Exact per-function totals and the recorder's own time.
    pub totals: crate::rank_totals::RankTotals,
    /// Per thread, the recorder's own time around every call (see [`crate::as_run`]),
    /// encoded as a timeline; empty unless every call's times are kept.
    pub recorder_times: Vec<Vec<u8>>,
}
