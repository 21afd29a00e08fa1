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

// The builder uses the series it builds; the tree module re-exports it from here.
pub(super) mod builder;
mod segment;
mod tail;

pub use segment::{Run, Segment};

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

impl Series {
    /// How often each piece occurs.
    fn piece_counts(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.pieces.len()];
        for (piece, n) in self.order.terminal_counts() {
            if let Some(c) = counts.get_mut(piece as usize) {
                *c = n;
            }
        }
        counts
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
        self.summary().len
    }

    /// True when the series holds no value.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
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

    /// `len` copies of `value` (empty when `len` is 0), as
    /// [`SeriesBuilder`](builder::SeriesBuilder) builds them.
    pub fn constant(value: u64, len: u64) -> Series {
        if len == 0 {
            return Series::default();
        }
        Series {
            pieces: vec![Segment::Run(Run {
                start: value,
                stride: 0,
                len,
            })],
            order: in_order(1),
        }
    }

    /// The value and length of a series that is one repeated value.
    pub fn as_constant(&self) -> Option<(u64, u64)> {
        match self.pieces.as_slice() {
            [Segment::Run(r)] if r.stride == 0 && self.in_order() => Some((r.start, r.len)),
            _ => None,
        }
    }

    /// Appends the binary form: `CONSTANT`, the value and the length for one repeated
    /// value; else the number of pieces plus `PIECES`, the pieces (tag 0 run, 1 cycle; each
    /// run as the zigzag difference of its start from the previous run's start, its stride,
    /// its length), then the grammar.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_as(out, false);
    }

    /// True when no run has a stride: what [`Series::encode_symbolic`] needs.
    pub fn is_symbolic(&self) -> bool {
        self.pieces
            .iter()
            .all(|p| p.runs().0.iter().all(|r| r.stride == 0))
    }

    /// Appends the binary form of a series without strides (signature terminals), as
    /// [`Series::encode`] but each piece one varint where it can: a single value is
    /// `zigzag(Δstart) << 1 | 1`; a longer run `zigzag(Δstart) << 2`, then its length; a
    /// cycle `repeat << 2 | 2`, then the number of runs and the runs.
    pub fn encode_symbolic(&self, out: &mut Vec<u8>) {
        debug_assert!(self.is_symbolic());
        self.encode_as(out, true);
    }

    fn encode_as(&self, out: &mut Vec<u8>, symbolic: bool) {
        if let Some((value, len)) = self.as_constant() {
            put_varint(out, CONSTANT);
            put_varint(out, value);
            put_varint(out, len);
            return;
        }
        put_varint(out, self.pieces.len() as u64 + PIECES);
        // Run starts as differences from the previous run's start: neighbouring terminals and
        // counts are close, so the differences are small and repeat across records.
        let previous = std::cell::Cell::new(0u64);
        let put_run = |out: &mut Vec<u8>, r: &Run| {
            let delta = zigzag(r.start.wrapping_sub(previous.replace(r.start)));
            if !symbolic {
                put_varint(out, delta);
                put_varint(out, r.stride);
                put_varint(out, r.len);
            } else if r.len == 1 {
                put_varint(out, delta << 1 | 1);
            } else {
                put_varint(out, delta << 2);
                put_varint(out, r.len);
            }
        };
        for s in &self.pieces {
            match s {
                Segment::Run(r) => {
                    if !symbolic {
                        out.push(0);
                    }
                    put_run(out, r);
                }
                Segment::Cycle { runs, repeat } => {
                    if symbolic {
                        put_varint(out, repeat << 2 | 2);
                    } else {
                        out.push(1);
                        put_varint(out, *repeat);
                    }
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
        Series::decode_as(bytes, false)
    }

    /// Reads what [`Series::encode_symbolic`] wrote.
    pub fn decode_symbolic(bytes: &mut &[u8]) -> Result<Series, DecodeError> {
        Series::decode_as(bytes, true)
    }

    fn decode_as(bytes: &mut &[u8], symbolic: bool) -> Result<Series, DecodeError> {
        let mut r = Reader { bytes };
        if r.varint()? == CONSTANT {
            let (value, len) = (r.varint()?, r.varint()?);
            if len == 0 {
                return Err(DecodeError::CountTooLarge(0));
            }
            *bytes = r.bytes;
            return Ok(Series::constant(value, len));
        }
        r = Reader { bytes };
        let n = (r.count()?)
            .checked_sub(PIECES as usize)
            .ok_or(DecodeError::CountTooLarge(0))?;
        let mut pieces = Vec::with_capacity(n);
        let mut previous = 0u64;
        // A run whose first varint (`head`) was read already.
        let mut run = |r: &mut Reader, head: u64| -> Result<Run, DecodeError> {
            let (delta, stride, len) = if !symbolic {
                (head, r.varint()?, r.varint()?)
            } else if head & 1 == 1 {
                (head >> 1, 0, 1)
            } else if head & 3 == 0 {
                (head >> 2, 0, r.varint()?)
            } else {
                return Err(DecodeError::UnsupportedVersion(2));
            };
            previous = previous.wrapping_add(unzigzag(delta));
            if len == 0 {
                return Err(DecodeError::CountTooLarge(0));
            }
            Ok(Run {
                start: previous,
                stride,
                len,
            })
        };
        for _ in 0..n {
            let head = if symbolic { r.varint()? } else { 0 };
            let cycle = match symbolic {
                true => head & 3 == 2,
                false => match r.byte()? {
                    0 => false,
                    1 => true,
                    tag => return Err(DecodeError::UnsupportedVersion(tag)),
                },
            };
            if !cycle {
                let head = if symbolic { head } else { r.varint()? };
                pieces.push(Segment::Run(run(&mut r, head)?));
                continue;
            }
            let repeat = if symbolic { head >> 2 } else { r.varint()? };
            let k = r.count()?;
            if repeat == 0 || k == 0 {
                return Err(DecodeError::CountTooLarge(0));
            }
            let mut runs = Vec::with_capacity(k.min(r.bytes.len()));
            for _ in 0..k {
                let head = r.varint()?;
                runs.push(run(&mut r, head)?);
            }
            pieces.push(Segment::Cycle { runs, repeat });
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

/// First varint of a [`Series`] that is one repeated value.
const CONSTANT: u64 = 0;
/// Added to the number of pieces in the first varint of any other series.
const PIECES: u64 = 1;

/// A wrapping difference as a small unsigned number (0, -1, 1, -2, … → 0, 1, 2, 3, …).
fn zigzag(d: u64) -> u64 {
    (d << 1) ^ ((d as i64 >> 63) as u64)
}

/// The difference [`zigzag`] encoded.
fn unzigzag(z: u64) -> u64 {
    (z >> 1) ^ (z & 1).wrapping_neg()
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
mod tests;
