//! The record a trace stores, the data model both sides of the format share: one global
//! signature table, the distinct grammars, one entry per rank, timing per timing family, the
//! trace trees and the value streams. The merge builds it; the record
//! sections encode it; readers decode calls from it.

use crate::fast_hash::FastMap;
use crate::forest::Forest;
use crate::rank_record::Membership;
use crate::streams::ThreadStreams;
pub use crate::timing::FamilyTiming;
use crate::timing::{timing_family, RankTime};
use conifer_compress::FrozenGrammar;

/// What one rank contributes besides its grammars and timing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankEntry {
    /// Grammar index of each of its threads (in tree mode: the calls outside the tree).
    pub threads: Vec<u32>,
    /// Trace tree index of each of its threads ([`crate::forest::NO_TREE`] for none); empty when the run
    /// has no trace trees.
    pub trees: Vec<u32>,
    /// Communicators it belonged to.
    pub comms: Vec<Membership>,
    /// Calls per wrapped function id, as counted by the wrappers (a cross-check of the
    /// grammars); functions never called are left out.
    pub counts: Vec<(u16, u64)>,
    /// Host name.
    pub host: String,
    /// Per-thread compressed timelines (lossless and lossy timing only).
    pub timelines: Vec<Vec<u8>>,
    /// Its total time in MPI and between calls.
    pub time: RankTime,
    /// Value streams of each of its threads: an index into [`TraceRecord::streams`], or
    /// [`NO_STREAMS`]; empty when no thread has any.
    pub streams: Vec<u32>,
    /// Its clock: offsets to rank 0 and where its threads lie.
    pub clock: crate::clock::RankClock,
    /// Its exact per-function totals and the recorder's own time.
    pub totals: crate::rank_totals::RankTotals,
    /// Per thread, the recorder's own time around every call (lossless and lossy timing).
    pub recorder_times: Vec<Vec<u8>>,
}

/// A thread without value streams.
pub const NO_STREAMS: u32 = u32::MAX;

/// The merged record of the ranks `first_rank .. first_rank + ranks.len()`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TraceRecord {
    /// `MPI_COMM_WORLD` rank of the first rank covered (0 in a whole trace).
    pub first_rank: u32,
    /// Global terminal → signature bytes.
    pub signatures: Vec<Vec<u8>>,
    /// Distinct grammars over global terminals.
    pub grammars: Vec<FrozenGrammar>,
    /// One entry per rank, in rank order.
    pub ranks: Vec<RankEntry>,
    /// Timing per timing family.
    pub timing: Vec<FamilyTiming>,
    /// Trace trees, when the program carries a structure tree.
    pub forest: Option<Forest>,
    /// Distinct value streams of threads (see [`crate::streams`]).
    pub streams: Vec<ThreadStreams>,
}

impl TraceRecord {
    /// For each terminal, the index of its timing family's entry in [`TraceRecord::timing`]
    /// (`None` for signatures without recorded timing).
    pub fn timing_index(&self) -> Vec<Option<u32>> {
        let families: FastMap<Vec<u8>, u32> = self
            .timing
            .iter()
            .enumerate()
            .map(|(i, f)| {
                (
                    timing_family(&self.signatures[f.terminal as usize]),
                    i as u32,
                )
            })
            .collect();
        self.signatures
            .iter()
            .map(|s| families.get(&timing_family(s)).copied())
            .collect()
    }
}
