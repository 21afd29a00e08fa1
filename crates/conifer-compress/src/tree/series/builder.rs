//! Building a [`Series`] online: runs merged with the last one, cycles folded within the
//! window, older segments handed to a Sequitur grammar over distinct pieces.

use super::{in_order, Run, Segment, Series};
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

/// Slots of a builder's cache of recently closed runs.
const LAST_SEEN_SLOTS: usize = 32;

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
    /// Where recent runs were last closed as plain segments (segment number; may be stale):
    /// a direct-mapped cache, so a collision only loses a fold, never a value.
    last_seen: Vec<Option<(Run, usize)>>,
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
            tail: Tail {
                numeric,
                done: Vec::new(),
                cycle_pos: 0,
                open: None,
            },
            base: 0,
            window: window.max(1),
            last_seen: Vec::new(),
            pieces: Vec::new(),
            ids: FoldMap::default(),
            order: None,
        }
    }

    /// Appends `value`.
    pub fn push(&mut self, value: u64) {
        if self.tail.push(value) {
            self.fold();
            // Cycles form among the last 2 × window segments; older ones go to the grammar,
            // in batches so the kept tail is moved once per batch.
            if self.tail.done.len() > 4 * self.window + 2 {
                self.hand_over(2 * self.window + 1);
            }
        }
    }

    /// Appends `value` `n` times.
    pub fn push_n(&mut self, value: u64, n: u64) {
        let mut left = n;
        while left > 0 {
            if self.tail.extend(value, left) {
                return;
            }
            self.push(value);
            left -= 1;
        }
    }

    /// Folds the last 2k segments into a cycle when they are one body of k runs twice, k
    /// being the distance to the previous occurrence of the last run (at most `window`): one
    /// candidate per closed run, compared from the end, so non-repeating input stays cheap.
    fn fold(&mut self) {
        let n = self.tail.done.len();
        let Segment::Run(run) = self.tail.done[n - 1] else {
            return;
        };
        let here = self.base + n - 1;
        let previous = self.remember(run, here);
        let done = &mut self.tail.done;
        let Some(p) = previous
            .filter(|&p| p >= self.base && p < here)
            .map(|p| p - self.base)
            .filter(|&p| done[p] == done[n - 1])
        else {
            return;
        };
        let k = n - 1 - p;
        if k > self.window || 2 * k > n {
            return;
        }
        let tail = &done[n - 2 * k..];
        let repeated = (0..k)
            .rev()
            .all(|i| matches!(tail[i], Segment::Run(_)) && tail[i] == tail[k + i]);
        if repeated {
            let runs = tail[k..]
                .iter()
                .filter_map(|s| match s {
                    Segment::Run(r) => Some(*r),
                    Segment::Cycle { .. } => None,
                })
                .collect();
            done.truncate(n - 2 * k);
            done.push(Segment::Cycle { runs, repeat: 2 });
            self.tail.cycle_pos = 0;
        }
    }

    /// Notes that `run` closed as segment number `here`; returns where it closed before, if
    /// the cache still knows.
    fn remember(&mut self, run: Run, here: usize) -> Option<usize> {
        if self.last_seen.is_empty() {
            self.last_seen = vec![None; LAST_SEEN_SLOTS];
        }
        let mut h = FoldHasher::default();
        h.write_u64(run.start);
        h.write_u64(run.stride);
        h.write_u64(run.len);
        let slot = &mut self.last_seen[h.finish() as usize % LAST_SEEN_SLOTS];
        let previous = slot.filter(|(r, _)| *r == run).map(|(_, at)| at);
        *slot = Some((run, here));
        previous
    }

    /// Hands the oldest segments to the grammar until at most `keep` are left.
    fn hand_over(&mut self, keep: usize) {
        if self.tail.done.len() <= keep {
            return;
        }
        let gone = self.tail.done.len() - keep;
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

/// The segments of a builder not yet handed to its grammar, the trailing cycle's progress and
/// the open run: what pushing values changes (a snapshot finishes a copy of it).
#[derive(Clone, Debug)]
struct Tail {
    /// Runs may have a non-zero stride.
    numeric: bool,
    done: Vec<Segment>,
    /// When `done` ends in a cycle: how many runs of its next repetition have been matched.
    cycle_pos: usize,
    /// The run still growing.
    open: Option<Run>,
}

impl Tail {
    /// Adds `n` copies of `value` to the open run if it is a repeat of `value`; false when it
    /// is not (nothing added).
    fn extend(&mut self, value: u64, n: u64) -> bool {
        match &mut self.open {
            Some(r) if r.len >= 2 && r.stride == 0 && r.start == value => {
                r.len += n;
                true
            }
            _ => false,
        }
    }

    /// Appends `value` `n` times, without folding cycles.
    fn push_n(&mut self, value: u64, n: u64) {
        let mut left = n;
        while left > 0 && !self.extend(value, left) {
            self.push(value);
            left -= 1;
        }
    }

    /// Appends `value`; true when that closed a run into a new segment of `done`.
    fn push(&mut self, value: u64) -> bool {
        match &mut self.open {
            None => self.open = Some(Run::single(value)),
            Some(r) if r.len == 1 && (self.numeric || value == r.start) => {
                r.stride = value.wrapping_sub(r.start);
                r.len = 2;
            }
            Some(r) if r.len >= 2 && value == r.value(r.len) => r.len += 1,
            Some(r) => {
                let closed = *r;
                self.open = Some(Run::single(value));
                return self.close(closed);
            }
        }
        false
    }

    /// Appends a closed run: it continues the trailing cycle if it is the run expected next
    /// (false), else it becomes a segment (true).
    fn close(&mut self, run: Run) -> bool {
        if let Some(Segment::Cycle { runs, repeat }) = self.done.last_mut() {
            if runs[self.cycle_pos] == run {
                self.cycle_pos += 1;
                if self.cycle_pos == runs.len() {
                    *repeat += 1;
                    self.cycle_pos = 0;
                }
                return false;
            }
            let partial = runs[..self.cycle_pos].to_vec();
            self.cycle_pos = 0;
            self.done.extend(partial.into_iter().map(Segment::Run));
        }
        self.done.push(Segment::Run(run));
        true
    }

    /// The segments: the open run closed, a cycle's partial repetition spelled out.
    fn finish(mut self) -> Vec<Segment> {
        if let Some(run) = self.open.take() {
            self.close(run);
        }
        if let Some(Segment::Cycle { runs, .. }) = self.done.last() {
            let partial: Vec<Segment> = runs[..self.cycle_pos]
                .iter()
                .copied()
                .map(Segment::Run)
                .collect();
            self.done.extend(partial);
        }
        self.done
    }
}
