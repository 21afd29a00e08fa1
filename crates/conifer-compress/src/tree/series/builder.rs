//! Building a [`Series`] online: runs merged with the last one, cycles folded within the
//! window, older segments handed to a Sequitur grammar over distinct pieces.

use super::segment::Segment;
use super::tail::Tail;
use super::{in_order, Series};
use crate::grammar::Grammar;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-fold hasher for the builder's small keys (runs and segments of integers):
/// these maps are on the path of every closed run, where SipHash dominated the cost.
#[derive(Default)]
struct FoldHasher(u64);

impl Hasher for FoldHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write_u64(&mut self, v: u64) {
        let product = u128::from(self.0 ^ v) * 0x9e37_79b9_7f4a_7c15;
        self.0 = (product as u64) ^ ((product >> 64) as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_isize(&mut self, v: isize) {
        self.write_u64(v as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v.into());
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v.into());
    }
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u64(b.into()));
    }
}

/// Earlier occurrences of a closed run tried as the start of a cycle's second body, latest
/// first: a period in which a run occurs several times (a binary counter's bits) folds once
/// this many occurrences of its last run fit in it.
const FOLD_CANDIDATES: usize = 16;

/// A hash map keyed by runs or segments.
type FoldMap<K, V> = HashMap<K, V, BuildHasherDefault<FoldHasher>>;

/// Builds a [`Series`] one value at a time.
#[derive(Clone, Debug)]
pub struct SeriesBuilder {
    /// Segments not yet handed to the grammar (cycles may still form among them), the
    /// cycle's progress and the open run; the first segment is number `base` of the series.
    tail: Tail,
    base: usize,
    /// Longest cycle body, in runs.
    window: usize,
    /// Per segment of `tail.done` (as far as [`SeriesBuilder::fold`] has seen): a hash of
    /// it, scanned for earlier occurrences of a closed run.
    keys: Vec<u64>,
    /// Distinct segments handed to the grammar, and their ids.
    pieces: Vec<Segment>,
    ids: FoldMap<Segment, u32>,
    /// The grammar over piece ids, once segments have been handed over.
    order: Option<Grammar>,
}

impl SeriesBuilder {
    /// A builder for counts (`numeric`, strided runs allowed) or for symbols (equal runs only),
    /// folding cycles of up to `window` runs (at least 1).
    pub fn new(numeric: bool, window: usize) -> SeriesBuilder {
        SeriesBuilder {
            tail: Tail::new(numeric),
            base: 0,
            window: window.max(1),
            keys: Vec::new(),
            pieces: Vec::new(),
            ids: FoldMap::default(),
            order: None,
        }
    }

    /// Appends `value`.
    #[inline]
    pub fn push(&mut self, value: u64) {
        if !self.tail.absorb(value) {
            self.push_new(value);
        }
    }

    /// Appends `value` `n` times.
    #[inline]
    pub fn push_n(&mut self, value: u64, n: u64) {
        let mut left = n;
        while left > 0 {
            if !self.tail.follow(value) {
                if self.tail.extend(value, left) {
                    return;
                }
                self.push_new(value);
            }
            left -= 1;
        }
    }

    /// Appends `value` where [`Tail::absorb`] could not: a closed run is folded into cycles
    /// or becomes a segment; a cycle just repeated is followed from here on.
    #[inline(never)]
    fn push_new(&mut self, value: u64) {
        if self.tail.push(value) {
            self.fold();
            // Cycles form among the last 2 × window segments; older ones go to the grammar,
            // in batches so the kept tail is moved once per batch.
            if self.tail.done.len() > 4 * self.window + 2 {
                self.hand_over(2 * self.window + 1);
            }
        }
        self.tail.start_following();
    }

    /// Folds the last 2k segments into a cycle when they are one body of k segments twice
    /// (its own cycles spelled out as runs; see [`SeriesBuilder::fold_last`]), k being the distance
    /// to an earlier occurrence of the last run (at most `window`): the latest occurrences
    /// first, at most [`FOLD_CANDIDATES`] of them, each compared from the end, so
    /// non-repeating input costs one scan of the window's keys.
    fn fold(&mut self) {
        let done = &self.tail.done;
        let n = done.len();
        let first_new = self.keys.len().min(n);
        self.keys.truncate(first_new);
        self.keys.extend(done[first_new..].iter().map(segment_key));
        if !matches!(done[n - 1], Segment::Run(_)) {
            return;
        }
        let key = self.keys[n - 1];
        let reach = self.window.min(n / 2);
        let mut tried = 0;
        for k in 1..=reach {
            if self.keys[n - 1 - k] != key || self.tail.done[n - 1 - k] != self.tail.done[n - 1] {
                continue;
            }
            if repeats_twice(&self.tail.done[n - 2 * k..]) && self.fold_last(k) {
                return;
            }
            tried += 1;
            if tried == FOLD_CANDIDATES {
                return;
            }
        }
    }

    /// Replaces the last 2k segments, one body of k segments twice, by a cycle; false when
    /// the body, its own cycles spelled out, is longer than the window or than 1.5 k runs
    /// (nothing changed): spelling out longer inner cycles costs more bytes than the
    /// grammar over pieces takes for the same repetition (ScaLAPACK's value streams grew by
    /// 2% without that bound).
    fn fold_last(&mut self, k: usize) -> bool {
        let done = &mut self.tail.done;
        let n = done.len();
        let mut runs = Vec::new();
        for segment in &done[n - k..] {
            let (body, repeat) = segment.runs();
            let len = body
                .len()
                .saturating_mul(repeat.try_into().unwrap_or(usize::MAX));
            if runs.len().saturating_add(len) > self.window.min(k + k / 2) {
                return false;
            }
            (0..repeat).for_each(|_| runs.extend_from_slice(body));
        }
        done.truncate(n - 2 * k);
        done.push(Segment::Cycle { runs, repeat: 2 });
        self.keys.truncate(n - 2 * k);
        self.tail.cycle_pos = 0;
        true
    }

    /// Hands the oldest segments to the grammar until at most `keep` are left.
    fn hand_over(&mut self, keep: usize) {
        if self.tail.done.len() <= keep {
            return;
        }
        let gone = self.tail.done.len() - keep;
        self.keys.drain(..gone.min(self.keys.len()));
        let order = self.order.get_or_insert_with(Grammar::new);
        for segment in self.tail.done.drain(..gone) {
            // Looked up before any copy: most segments handed over are known pieces.
            let id = match self.ids.get(&segment) {
                Some(&id) => id,
                None => {
                    let id = self.pieces.len() as u32;
                    self.ids.insert(segment.clone(), id);
                    self.pieces.push(segment);
                    id
                }
            };
            order.push(id);
        }
        self.base += gone;
    }

    /// The series so far (the builder goes on).
    pub fn snapshot(&self) -> Series {
        self.snapshot_with(&[])
    }

    /// The series so far followed by `more` (value, times) pairs, without changing the
    /// builder and without copying its indexes: the segments not yet handed over are
    /// finished on a copy (the open run joins a cycle it completes, as closing it would),
    /// looked up among the pieces, and appended to a copy of the grammar.
    pub fn snapshot_with(&self, more: &[(u64, u64)]) -> Series {
        let mut tail = self.tail.clone();
        for &(value, n) in more {
            tail.push_n(value, n);
        }
        let segments = tail.finish();
        let mut pieces = self.pieces.clone();
        let mut local: FoldMap<&Segment, u32> = FoldMap::default();
        let ids: Vec<u32> = segments
            .iter()
            .map(|segment| match self.ids.get(segment) {
                Some(&id) => id,
                None => {
                    let next = pieces.len() as u32;
                    let id = *local.entry(segment).or_insert(next);
                    if id == next {
                        pieces.push(segment.clone());
                    }
                    id
                }
            })
            .collect();
        let order = match &self.order {
            None if ids.iter().enumerate().all(|(i, &id)| id as usize == i) => in_order(ids.len()),
            None => {
                let mut g = Grammar::new();
                ids.iter().for_each(|&id| g.push(id));
                g.freeze()
            }
            Some(known) => {
                let mut g = known.clone();
                ids.iter().for_each(|&id| g.push(id));
                g.freeze()
            }
        };
        Series { pieces, order }
    }
}

/// A hash of a segment for [`SeriesBuilder::fold`]'s scan, which looks for runs only: of its
/// run, or of a cycle's body length (a trailing cycle's repeat count still grows).
fn segment_key(segment: &Segment) -> u64 {
    let mut h = FoldHasher::default();
    match segment {
        Segment::Run(run) => {
            h.write_u64(run.start);
            h.write_u64(run.stride);
            h.write_u64(run.len);
        }
        Segment::Cycle { runs, .. } => h.write_usize(runs.len()),
    }
    h.finish()
}

/// True when `tail` (2k segments) is one body of k segments twice; compared from the end,
/// where a mismatch shows first.
fn repeats_twice(tail: &[Segment]) -> bool {
    let k = tail.len() / 2;
    (0..k).rev().all(|i| tail[i] == tail[k + i])
}
