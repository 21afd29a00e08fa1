//! Integer series kept compressed as they grow: the per-vertex records of a trace tree
//! (CYPRESS §IV-A). Values first become [`Segment`]s: arithmetic runs `<start, stride, len>`
//! (stride 0 is a plain repeat count, merging each value with the last run as CYPRESS does)
//! and cycles of up to `window` runs repeated, so loop counts with striding patterns
//! (`0, 1, 2, …`), branch arms taken every k-th iteration (`1, 0, 0, 1, 0, 0, …`) and call
//! sites alternating between a few signatures cost O(1). The segments then go through a
//! Sequitur grammar (over a dictionary of distinct segments), which finds what one window
//! cannot: repetitions of repetitions, as nested loops whose inner patterns vary with the
//! outer index produce (a V-cycle's levels, a halo exchange's directions).
//!
//! A *symbolic* series (signature terminals) only forms runs of equal values, so renaming its
//! values one-to-one keeps its shape: records of different ranks stay comparable after their
//! terminals are renumbered to the merged table.

use crate::codec::{put_varint, DecodeError, Reader};
use crate::frozen::{Expand, FrozenGrammar, Symbol};
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

/// `start, start + stride, …`: `len` values (arithmetic modulo 2^64).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Run {
    /// First value.
    pub start: u64,
    /// Difference between consecutive values (wrapping); 0 for a repeat.
    pub stride: u64,
    /// Number of values, at least 1.
    pub len: u64,
}

impl Run {
    fn single(value: u64) -> Run {
        Run {
            start: value,
            stride: 0,
            len: 1,
        }
    }

    fn value(&self, i: u64) -> u64 {
        self.start.wrapping_add(self.stride.wrapping_mul(i))
    }

    /// Sum of the values, reading the stride as signed (counts may fall); 0 if negative.
    fn sum(&self) -> u128 {
        let (len, start) = (i128::from(self.len), i128::from(self.start));
        let stride = i128::from(self.stride as i64);
        let total = len * start + stride * (len * (len - 1) / 2);
        u128::try_from(total).unwrap_or(0)
    }
}

/// One piece of a series.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Segment {
    /// An arithmetic run.
    Run(Run),
    /// `runs` one after the other, the whole repeated `repeat` times.
    Cycle {
        /// The repeated body (1 ..= window runs).
        runs: Vec<Run>,
        /// Repetitions, at least 1.
        repeat: u64,
    },
}

impl Segment {
    fn len(&self) -> u128 {
        match self {
            Segment::Run(r) => u128::from(r.len),
            Segment::Cycle { runs, repeat } => {
                runs.iter().map(|r| u128::from(r.len)).sum::<u128>() * u128::from(*repeat)
            }
        }
    }

    fn sum(&self) -> u128 {
        match self {
            Segment::Run(r) => r.sum(),
            Segment::Cycle { runs, repeat } => {
                runs.iter().map(Run::sum).sum::<u128>() * u128::from(*repeat)
            }
        }
    }

    fn runs(&self) -> (&[Run], u64) {
        match self {
            Segment::Run(r) => (std::slice::from_ref(r), 1),
            Segment::Cycle { runs, repeat } => (runs, *repeat),
        }
    }

    fn map(&self, f: &impl Fn(u64) -> u64) -> Segment {
        let map_run = |r: &Run| Run {
            start: f(r.start),
            ..*r
        };
        match self {
            Segment::Run(r) => Segment::Run(map_run(r)),
            Segment::Cycle { runs, repeat } => Segment::Cycle {
                runs: runs.iter().map(map_run).collect(),
                repeat: *repeat,
            },
        }
    }
}

/// What checking a record needs to know of a series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Number of values (saturating).
    pub len: u64,
    /// Sum of the values (saturating).
    pub sum: u64,
    /// Largest value, when the series has values and no strided run.
    pub max: Option<u64>,
    /// True when a run has a non-zero stride.
    pub strided: bool,
}

/// A finished series: its distinct segments and the order they come in.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Series {
    /// Distinct segments, by first appearance.
    pieces: Vec<Segment>,
    /// The sequence of pieces (terminal `i` is `pieces[i]`).
    order: FrozenGrammar,
}

impl Default for Series {
    fn default() -> Series {
        Series {
            pieces: Vec::new(),
            order: in_order(0),
        }
    }
}

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
            let next = self.pieces.len() as u32;
            let id = *self.ids.entry(segment.clone()).or_insert(next);
            if id == next {
                self.pieces.push(segment);
            }
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
            let mut left = n;
            while left > 0 && !tail.extend(value, left) {
                tail.push(value);
                left -= 1;
            }
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

impl Series {
    /// How often each piece occurs.
    fn piece_counts(&self) -> Vec<u64> {
        let rules = self.order.rules();
        let mut rule_counts = vec![0u64; rules.len()];
        let mut counts = vec![0u64; self.pieces.len()];
        if rules.is_empty() {
            return counts;
        }
        rule_counts[0] = 1;
        for r in parents_first(rules) {
            let times = rule_counts[r];
            for item in &rules[r] {
                let n = times.saturating_mul(item.exponent);
                match item.symbol {
                    Symbol::Terminal(t) => {
                        if let Some(c) = counts.get_mut(t as usize) {
                            *c = c.saturating_add(n);
                        }
                    }
                    Symbol::Rule(q) => {
                        if let Some(c) = rule_counts.get_mut(q as usize) {
                            *c = c.saturating_add(n);
                        }
                    }
                }
            }
        }
        counts
    }

    fn total(&self, per_piece: impl Fn(&Segment) -> u128) -> u64 {
        let total = self
            .piece_counts()
            .iter()
            .zip(&self.pieces)
            .map(|(&n, piece)| per_piece(piece).saturating_mul(u128::from(n)))
            .fold(0u128, u128::saturating_add);
        u64::try_from(total).unwrap_or(u64::MAX)
    }

    /// Length, sum and (for series without strides) largest value, in one pass.
    pub fn summary(&self) -> Summary {
        let counts = self.piece_counts();
        let (mut len, mut sum) = (0u128, 0u128);
        let mut max = Some(0u64);
        for (piece, &n) in self.pieces.iter().zip(&counts) {
            len = len.saturating_add(piece.len().saturating_mul(u128::from(n)));
            sum = sum.saturating_add(piece.sum().saturating_mul(u128::from(n)));
            let (runs, _) = piece.runs();
            for r in runs {
                max = match max {
                    Some(m) if r.stride == 0 || r.len == 1 => Some(m.max(r.start)),
                    _ => None,
                };
            }
        }
        Summary {
            len: u64::try_from(len).unwrap_or(u64::MAX),
            sum: u64::try_from(sum).unwrap_or(u64::MAX),
            max: if self.pieces.is_empty() { None } else { max },
            strided: !self.pieces.is_empty() && max.is_none(),
        }
    }

    /// Number of values (saturating).
    pub fn len(&self) -> u64 {
        self.total(Segment::len)
    }

    /// True when the series holds no value.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Sum of the values (saturating): the activations a count series stands for.
    pub fn sum(&self) -> u64 {
        self.total(Segment::sum)
    }

    /// Segments stored (distinct pieces plus the grammar's items): what the series costs.
    pub fn size(&self) -> usize {
        self.pieces.len() + self.order.item_count()
    }

    /// How often each value occurs.
    pub fn value_counts(&self) -> Vec<(u64, u64)> {
        let mut counts: std::collections::BTreeMap<u64, u64> = Default::default();
        for (piece, n) in self.pieces.iter().zip(self.piece_counts()) {
            let (runs, repeat) = piece.runs();
            let times = n.saturating_mul(repeat);
            for r in runs {
                if r.stride == 0 {
                    let c = counts.entry(r.start).or_default();
                    *c = c.saturating_add(r.len.saturating_mul(times));
                } else {
                    for i in 0..r.len {
                        let c = counts.entry(r.value(i)).or_default();
                        *c = c.saturating_add(times);
                    }
                }
            }
        }
        counts.into_iter().collect()
    }

    /// The same series with every value passed through `f`; `f` must be one-to-one for the
    /// result to be what building from the renamed values would give (symbolic series).
    pub fn map_values(mut self, f: impl Fn(u64) -> u64) -> Series {
        for piece in &mut self.pieces {
            *piece = piece.map(&f);
        }
        self
    }

    /// The values in order.
    pub fn iter(&self) -> SeriesIter<'_> {
        SeriesIter {
            pieces: &self.pieces,
            order: self.order.expand(),
            piece: None,
            run: 0,
            repeat: 0,
            index: 0,
        }
    }

    /// Appends the binary form: the pieces (tag 0 run, 1 cycle), then the grammar.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.pieces.len() as u64);
        let put_run = |out: &mut Vec<u8>, r: &Run| {
            put_varint(out, r.start);
            put_varint(out, r.stride);
            put_varint(out, r.len);
        };
        for s in &self.pieces {
            match s {
                Segment::Run(r) => {
                    out.push(0);
                    put_run(out, r);
                }
                Segment::Cycle { runs, repeat } => {
                    out.push(1);
                    put_varint(out, *repeat);
                    put_varint(out, runs.len() as u64);
                    runs.iter().for_each(|r| put_run(out, r));
                }
            }
        }
        if self.in_order() {
            // Each piece once, in order (most series): the grammar is implied.
            put_varint(out, 0);
        } else {
            let order = self.order.to_bytes();
            put_varint(out, order.len() as u64);
            out.extend_from_slice(&order);
        }
    }

    /// True when the pieces occur once each, in order.
    fn in_order(&self) -> bool {
        let rules = self.order.rules();
        rules.len() == 1
            && rules[0].len() == self.pieces.len()
            && rules[0]
                .iter()
                .enumerate()
                .all(|(i, item)| item.exponent == 1 && item.symbol == Symbol::Terminal(i as u32))
    }

    /// Reads what [`Series::encode`] wrote.
    pub fn decode(bytes: &mut &[u8]) -> Result<Series, DecodeError> {
        let mut r = Reader { bytes };
        let n = r.count()?;
        let mut pieces = Vec::with_capacity(n);
        let run = |r: &mut Reader| -> Result<Run, DecodeError> {
            let run = Run {
                start: r.varint()?,
                stride: r.varint()?,
                len: r.varint()?,
            };
            if run.len == 0 {
                return Err(DecodeError::CountTooLarge(0));
            }
            Ok(run)
        };
        for _ in 0..n {
            match r.byte()? {
                0 => pieces.push(Segment::Run(run(&mut r)?)),
                1 => {
                    let repeat = r.varint()?;
                    let k = r.count()?;
                    if repeat == 0 || k == 0 {
                        return Err(DecodeError::CountTooLarge(0));
                    }
                    let runs = (0..k).map(|_| run(&mut r)).collect::<Result<_, _>>()?;
                    pieces.push(Segment::Cycle { runs, repeat });
                }
                tag => return Err(DecodeError::UnsupportedVersion(tag)),
            }
        }
        let len = r.count()?;
        let order = if len == 0 {
            in_order(pieces.len())
        } else {
            FrozenGrammar::from_bytes(&r.bytes[..len])?
        };
        r.bytes = &r.bytes[len..];
        let unknown = order
            .rules()
            .iter()
            .flatten()
            .any(|i| matches!(i.symbol, Symbol::Terminal(t) if t as usize >= pieces.len()));
        if unknown {
            return Err(DecodeError::IdTooLarge(u64::from(u32::MAX)));
        }
        *bytes = r.bytes;
        Ok(Series { pieces, order })
    }
}

/// The grammar of `n` distinct pieces, each once in order: what Sequitur makes of such input
/// (one rule, no repetition), built directly.
fn in_order(n: usize) -> FrozenGrammar {
    let items = (0..n as u32)
        .map(|i| crate::frozen::Item {
            symbol: Symbol::Terminal(i),
            exponent: 1,
        })
        .collect();
    FrozenGrammar::from_canonical(vec![items], n as u64)
}

/// The rules reachable from rule 0, every rule before the rules it refers to (reverse
/// post-order of a depth-first walk; the grammar is acyclic).
fn parents_first(rules: &[Vec<crate::frozen::Item>]) -> Vec<usize> {
    let mut seen = vec![false; rules.len()];
    let mut post = Vec::with_capacity(rules.len());
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some((rule, next)) = stack.pop() {
        let child = rules[rule][next..].iter().position(|i| {
            matches!(i.symbol, Symbol::Rule(q) if !seen.get(q as usize).copied().unwrap_or(true))
        });
        match child {
            Some(offset) => {
                let at = next + offset;
                let Symbol::Rule(q) = rules[rule][at].symbol else {
                    unreachable!("found a rule reference")
                };
                seen[q as usize] = true;
                stack.push((rule, at + 1));
                stack.push((q as usize, 0));
            }
            None => post.push(rule),
        }
    }
    post.reverse();
    post
}

/// Iterator over a [`Series`]' values.
#[derive(Clone, Debug)]
pub struct SeriesIter<'a> {
    pieces: &'a [Segment],
    order: Expand<'a>,
    /// The piece being walked.
    piece: Option<&'a Segment>,
    /// Run within the piece's body.
    run: usize,
    /// Repetition of the body.
    repeat: u64,
    /// Value within the run.
    index: u64,
}

impl Iterator for SeriesIter<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        loop {
            let Some(piece) = self.piece else {
                self.piece = Some(self.pieces.get(self.order.next()? as usize)?);
                continue;
            };
            let (runs, repeats) = piece.runs();
            let run = &runs[self.run];
            if self.index < run.len {
                self.index += 1;
                return Some(run.value(self.index - 1));
            }
            self.index = 0;
            self.run += 1;
            if self.run == runs.len() {
                self.run = 0;
                self.repeat += 1;
                if self.repeat >= repeats {
                    self.repeat = 0;
                    self.piece = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(numeric: bool, window: usize, values: &[u64]) -> Series {
        let mut b = SeriesBuilder::new(numeric, window);
        values.iter().for_each(|&v| b.push(v));
        b.snapshot()
    }

    fn round_trip(s: &Series) -> Series {
        let mut out = Vec::new();
        s.encode(&mut out);
        let mut bytes = out.as_slice();
        let back = Series::decode(&mut bytes).expect("decodes");
        assert!(bytes.is_empty());
        back
    }

    #[test]
    fn constant_counts_are_one_run() {
        let s = build(true, 4, &[5; 1000]);
        assert_eq!(
            s.pieces,
            vec![Segment::Run(Run {
                start: 5,
                stride: 0,
                len: 1000
            })]
        );
        assert_eq!(s.sum(), 5000);
    }

    #[test]
    fn triangular_loop_counts_are_one_strided_run() {
        // CYPRESS Figure 10: inner loop runs 0, 1, …, k-1 times: <0, k-1, 1>.
        let values: Vec<u64> = (0..100).collect();
        let s = build(true, 4, &values);
        assert_eq!(s.size(), 2, "one piece, used once");
        assert!(s.iter().eq(values.iter().copied()));
    }

    #[test]
    fn branch_taken_every_third_iteration_is_one_cycle() {
        let values: Vec<u64> = (0..300).map(|i| u64::from(i % 3 == 0)).collect();
        let s = build(true, 4, &values);
        assert!(s.size() <= 3, "{:?}", s);
        assert!(s.iter().eq(values.iter().copied()));
    }

    #[test]
    fn alternating_symbols_fold_with_a_window_of_two() {
        let values: Vec<u64> = (0..200).map(|i| [7, 9][i % 2]).collect();
        let s = build(false, 2, &values);
        assert_eq!(s.size(), 2, "{:?}", s);
        // Without the window's cycle, the grammar over pieces still finds the repetition.
        let one = build(false, 1, &values);
        assert!(one.size() <= 5, "{one:?}");
        assert!(s.iter().eq(values.iter().copied()));
    }

    #[test]
    fn repetitions_of_repetitions_stay_small() {
        // A nested loop whose inner pattern depends on the outer index, repeated 50 times:
        // (1,0)×3 then 0×5, (1,0)×2 then 0×7.
        let mut values = Vec::new();
        for _ in 0..50 {
            for (pairs, zeros) in [(3, 5), (2, 7)] {
                for _ in 0..pairs {
                    values.extend([1, 0]);
                }
                values.extend(std::iter::repeat_n(0, zeros));
            }
        }
        let s = build(true, 4, &values);
        assert!(s.size() <= 16, "{s:?}");
        assert!(s.iter().eq(values.iter().copied()));
        assert_eq!(s.len(), values.len() as u64);
        assert_eq!(s.sum(), values.iter().sum::<u64>());
    }

    #[test]
    fn counts_follow_rules_shared_by_later_rules() {
        // Sequitur reuses a rule from two others: lengths and sums must count it twice.
        let mut values = Vec::new();
        for i in 0..40u64 {
            values.extend([1, 5, 1, 5, 9, 2, 1, 5, 1, 5, 7, i % 4]);
        }
        let s = build(false, 1, &values);
        assert_eq!(s.len(), values.len() as u64);
        assert_eq!(s.sum(), values.iter().sum::<u64>());
        let mut counts = std::collections::BTreeMap::new();
        values
            .iter()
            .for_each(|&v| *counts.entry(v).or_insert(0u64) += 1);
        assert_eq!(s.value_counts(), counts.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn long_periods_fold_within_the_window() {
        // A V-cycle's messages: 12 different signatures per iteration, 20 iterations.
        let values: Vec<u64> = (0..240).map(|i| (i % 12) * 10).collect();
        assert_eq!(build(false, 16, &values).size(), 2);
        // A window too small for the period: the grammar over pieces finds it instead.
        let small = build(false, 8, &values);
        assert!(small.size() <= 30, "{small:?}");
        assert!(small.iter().eq(values.iter().copied()));
        assert!(build(false, 16, &values).iter().eq(values.iter().copied()));
    }

    #[test]
    fn symbolic_series_never_stride() {
        let s = build(false, 4, &[1, 2, 3, 4, 5]);
        assert!(s.pieces.iter().all(|seg| match seg {
            Segment::Run(r) => r.stride == 0,
            Segment::Cycle { runs, .. } => runs.iter().all(|r| r.stride == 0),
        }));
        assert_eq!(
            s.value_counts(),
            vec![(1, 1), (2, 1), (3, 1), (4, 1), (5, 1)]
        );
    }

    #[test]
    fn broken_cycles_and_push_n_keep_every_value() {
        let mut values = Vec::new();
        for i in 0..50u64 {
            values.extend([1, 2, 3]);
            if i % 7 == 0 {
                values.push(9);
            }
        }
        values.extend([0; 40]);
        let mut b = SeriesBuilder::new(true, 3);
        values[..values.len() - 40].iter().for_each(|&v| b.push(v));
        b.push_n(0, 40);
        let s = b.snapshot();
        assert!(s.iter().eq(values.iter().copied()));
        assert_eq!(s.len(), values.len() as u64);
        assert_eq!(round_trip(&s), s);
    }

    #[test]
    fn renaming_symbols_keeps_the_shape() {
        let values: Vec<u64> = (0..90).map(|i| [4, 4, 8][i % 3]).collect();
        let s = build(false, 4, &values);
        let renamed = s.map_values(|v| v * 100);
        let direct = build(
            false,
            4,
            &values.iter().map(|v| v * 100).collect::<Vec<_>>(),
        );
        assert_eq!(renamed, direct);
    }

    #[test]
    fn in_order_grammars_are_what_sequitur_builds() {
        for n in [0, 1, 2, 7] {
            let mut g = Grammar::new();
            (0..n as u32).for_each(|i| g.push(i));
            assert_eq!(in_order(n), g.freeze());
        }
    }

    #[test]
    fn corrupt_encodings_are_errors() {
        let s = build(true, 4, &[1, 2, 3, 9, 9]);
        let mut out = Vec::new();
        s.encode(&mut out);
        for cut in 0..out.len() {
            let mut bytes = &out[..cut];
            assert!(Series::decode(&mut bytes).is_err());
        }
    }
}
