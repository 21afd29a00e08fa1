//! What one rank contributes to a trace, in the form it is sent to the merging rank: its
//! signature table, one grammar per thread (over its local terminals), timing per signature,
//! and the communicators it belongs to with its rank in each.

use crate::forest::Structure;
pub use crate::membership::{put_grid, read_grid, Membership};
use conifer_compress::tree::TreeRecord;
use conifer_compress::FrozenGrammar;

pub use crate::timing::{CallTiming, Timing};

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
    /// Per thread, the recorder's own time around every call (see `conifer_trace::as_run`),
    /// encoded as a timeline; empty unless every call's times are kept.
    pub recorder_times: Vec<Vec<u8>>,
}
