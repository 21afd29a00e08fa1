//! The record a trace stores, the data model both sides of the format share: one global
//! signature table, the distinct grammars, one entry per rank, timing per timing family, the
//! trace trees and the value streams. The merge builds it; the record
//! sections encode it; readers decode calls from it.

use crate::forest::{Forest, NO_TREE};
use crate::membership::Membership;
pub use crate::rank_timing::Precision;
use crate::streams::ThreadStreams;
pub use crate::streams::NO_STREAMS;
pub use crate::timing::FamilyTiming;
use crate::timing::{timing_family, RankTime};
use conifer_compress::fast_hash::FastMap;
use conifer_compress::tree::Expand;
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
    /// Processors online on its host when it ran (`CORE`); 0 when not recorded (traces
    /// written before the section existed).
    pub cores: u32,
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
    /// The error each rank's clock and totals carry (`None`: exact): files recorded with
    /// aggregate or histogram timing keep them within [`Precision::DEFAULT`] (`RQTM`).
    pub rank_precision: Option<Precision>,
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

/// A thread's terminals in call order: its grammar's, or its trace tree's with the grammar's
/// calls in their places.
pub enum ThreadTerminals<'a> {
    /// A thread recorded on the grammar path only.
    Grammar(conifer_compress::Expand<'a>),
    /// A thread with a trace tree.
    Tree(Expand<'a, conifer_compress::Expand<'a>>),
}

impl ThreadTerminals<'_> {
    /// The structure-tree call site of the call returned last, when the tree held it.
    pub fn site(&self) -> Option<u32> {
        match self {
            ThreadTerminals::Grammar(_) => None,
            ThreadTerminals::Tree(t) => t.site(),
        }
    }
}

impl Iterator for ThreadTerminals<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        match self {
            ThreadTerminals::Grammar(g) => g.next(),
            ThreadTerminals::Tree(t) => t.next(),
        }
    }
}

impl TraceRecord {
    /// The tree of thread `thread` of `entry`, if it has one.
    fn tree_of(&self, entry: &RankEntry, thread: usize) -> Option<(&Forest, u32)> {
        let tree = *entry.trees.get(thread)?;
        Some((self.forest.as_ref()?, tree)).filter(|_| tree != NO_TREE)
    }

    /// The terminals thread `thread` of `entry` recorded, in call order.
    pub fn thread_terminals<'a>(&'a self, entry: &RankEntry, thread: usize) -> ThreadTerminals<'a> {
        let grammar = &self.grammars[entry.threads[thread] as usize];
        match self.tree_of(entry, thread) {
            Some((forest, tree)) => ThreadTerminals::Tree(forest.expand(tree, grammar)),
            None => ThreadTerminals::Grammar(grammar.expand()),
        }
    }

    /// How many calls thread `thread` of `entry` recorded.
    pub fn thread_calls(&self, entry: &RankEntry, thread: usize) -> u64 {
        let grammar = self.grammars[entry.threads[thread] as usize].len();
        let tree = self
            .tree_of(entry, thread)
            .map_or(0, |(forest, tree)| forest.calls(tree));
        grammar + tree
    }

    /// How often each terminal occurs in thread `thread` of `entry`.
    pub fn thread_terminal_counts(&self, entry: &RankEntry, thread: usize) -> FastMap<u32, u64> {
        let mut counts = self.grammars[entry.threads[thread] as usize].terminal_counts();
        if let Some((forest, tree)) = self.tree_of(entry, thread) {
            for (t, n) in forest.terminal_counts(tree) {
                *counts.entry(t).or_insert(0) += n;
            }
        }
        counts
    }
}
