//! What a trace tree holds for one thread: per vertex, a [`VertexRecord`] of series (its
//! activations, and at call sites each call's terminal and the calls outside the tree after
//! it), with their binary form, and [`validate`], the check that the records of a tree form
//! a walkable tree.

use super::series::{Series, Summary};
use super::shape::{Shape, VertexKind};
use crate::codec::{put_varint, DecodeError};

/// The most activations a record may stand for: a bound on the work decoding a corrupt
/// record can cause.
pub const MAX_ACTIVATIONS: u64 = 1 << 40;

/// [`VertexRecord`] form: counts only (not a call site, or a site never reached).
pub(super) const NO_CALLS: u8 = 0;
/// [`VertexRecord`] form: counts and terminals; every foreign count is 0.
pub(super) const NO_FOREIGN: u8 = 1;
/// [`VertexRecord`] form: all three series.
pub(super) const ALL_SERIES: u8 = 2;
/// Added to a [`VertexRecord`] form whose terminals have a strided run (which symbolic series
/// never form; kept readable all the same): they are then in [`Series::encode`]'s form, else
/// in [`Series::encode_symbolic`]'s.
const STRIDED: u8 = 0x10;
/// [`VertexRecord`] form: a call site making the same number of calls, all with one
/// terminal and no foreign call after them, in every activation of its parent: three varints.
pub(super) const ONE_TERMINAL: u8 = 3;

/// What one vertex recorded for one thread.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct VertexRecord {
    /// Activations per activation of the parent (empty for the root).
    pub counts: Series,
    /// Call sites: the terminal of each call.
    pub terminals: Series,
    /// Call sites: how many calls outside the tree followed each call.
    pub foreign: Series,
}

/// One thread's trace tree: a record per vertex, plus the calls outside the tree that came
/// before its first call.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct TreeRecord {
    /// Calls on the grammar path before the tree's first call.
    pub leading_foreign: u64,
    /// Record of each vertex, by pre-order id.
    pub vertices: Vec<VertexRecord>,
}

impl VertexRecord {
    /// Appends the binary form: `ONE_TERMINAL` and its three numbers when it applies; else a
    /// form byte (`NO_CALLS` for vertices other than call sites, `NO_FOREIGN` when no call
    /// outside the tree followed any of the site's calls, else `ALL_SERIES`; plus
    /// `STRIDED`), the counts, then the terminals (symbolic form) and foreign counts the
    /// form keeps.
    pub fn encode(&self, out: &mut Vec<u8>) {
        if let Some((count, activations, terminal)) = self.one_terminal() {
            out.push(ONE_TERMINAL);
            put_varint(out, count);
            put_varint(out, activations);
            put_varint(out, terminal);
            return;
        }
        let form = if self.terminals.is_empty() && self.foreign.is_empty() {
            NO_CALLS
        } else if self.foreign == Series::constant(0, self.terminals.len()) {
            NO_FOREIGN
        } else {
            ALL_SERIES
        };
        let symbolic = self.terminals.is_symbolic();
        out.push(if symbolic { form } else { form | STRIDED });
        self.counts.encode(out);
        if form != NO_CALLS && symbolic {
            self.terminals.encode_symbolic(out);
        } else if form != NO_CALLS {
            self.terminals.encode(out);
        }
        if form == ALL_SERIES {
            self.foreign.encode(out);
        }
    }

    /// Reads what [`VertexRecord::encode`] wrote.
    pub fn decode(bytes: &mut &[u8]) -> Result<VertexRecord, DecodeError> {
        let (&form, rest) = bytes.split_first().ok_or(DecodeError::Truncated)?;
        *bytes = rest;
        if form == ONE_TERMINAL {
            let mut r = crate::codec::Reader { bytes };
            let (count, activations, terminal) = (r.varint()?, r.varint()?, r.varint()?);
            let calls = count
                .checked_mul(activations)
                .filter(|&n| n > 0 && n <= MAX_ACTIVATIONS)
                .ok_or(DecodeError::CountTooLarge(count))?;
            *bytes = r.bytes;
            return Ok(VertexRecord {
                counts: Series::constant(count, activations),
                terminals: Series::constant(terminal, calls),
                foreign: Series::constant(0, calls),
            });
        }
        let counts = Series::decode(bytes)?;
        let terminals = |bytes: &mut &[u8]| match form & STRIDED {
            0 => Series::decode_symbolic(bytes),
            _ => Series::decode(bytes),
        };
        let (terminals, foreign) = match form & !STRIDED {
            NO_CALLS => (Series::default(), Series::default()),
            NO_FOREIGN => {
                let terminals = terminals(bytes)?;
                let foreign = Series::constant(0, terminals.len());
                (terminals, foreign)
            }
            ALL_SERIES => (terminals(bytes)?, Series::decode(bytes)?),
            other => return Err(DecodeError::UnsupportedVersion(other)),
        };
        Ok(VertexRecord {
            counts,
            terminals,
            foreign,
        })
    }

    /// `(count, activations, terminal)` of a call site that made `count` calls, all with
    /// `terminal` and none followed by a call outside the tree, in each of its parent's
    /// `activations`.
    fn one_terminal(&self) -> Option<(u64, u64, u64)> {
        let (count, activations) = self.counts.as_constant()?;
        let (terminal, calls) = self.terminals.as_constant()?;
        (count.checked_mul(activations) == Some(calls)
            && self.foreign == Series::constant(0, calls))
        .then_some((count, activations, terminal))
    }

    /// The same record with terminals renamed by `f` (one-to-one).
    pub fn map_terminals(self, f: impl Fn(u32) -> u32) -> VertexRecord {
        VertexRecord {
            terminals: self.terminals.map_values(|t| f(t as u32).into()),
            ..self
        }
    }
}

/// What checking a tree needs to know of one vertex record, computed once per distinct
/// record ([`VertexRecord::summary`]).
#[derive(Clone, Copy, Debug)]
pub struct RecordSummary {
    counts: Summary,
    terminals: Summary,
    foreign: Summary,
}

impl VertexRecord {
    /// The record's [`RecordSummary`].
    pub fn summary(&self) -> RecordSummary {
        RecordSummary {
            counts: self.counts.summary(),
            terminals: self.terminals.summary(),
            foreign: self.foreign.summary(),
        }
    }
}

/// Checks that `records` (the summaries of one record per vertex of `shape`) form a walkable
/// tree: each vertex has one count per activation of its parent, each call site one terminal
/// and one foreign count per call, the terminals exist (`terminals` of them, no strided runs),
/// the calls outside the tree add up to `foreign_calls` and no vertex has more activations
/// than the tree has calls. Returns the calls the tree holds.
pub fn validate(
    shape: &Shape,
    records: &[&RecordSummary],
    leading_foreign: u64,
    foreign_calls: u64,
    terminals: u64,
) -> Result<u64, String> {
    if records.len() != shape.len() {
        return Err(format!(
            "a trace tree has {} vertex records for {} vertices",
            records.len(),
            shape.len()
        ));
    }
    let mut activations = vec![0u64; shape.len()];
    activations[0] = 1;
    let (mut total, mut calls, mut foreign) = (1u64, 0u64, u128::from(leading_foreign));
    for v in 1..shape.len() {
        let r = records[v];
        let parent = activations[shape.parent(v as u32) as usize];
        if r.counts.len != parent {
            return Err(format!(
                "trace tree vertex {v}: counts do not match its parent"
            ));
        }
        activations[v] = r.counts.sum;
        total = total.saturating_add(activations[v]);
        if total > MAX_ACTIVATIONS {
            return Err("a trace tree claims too many activations".into());
        }
        if shape.kind(v as u32) == VertexKind::Site {
            if r.terminals.len != activations[v] || r.foreign.len != activations[v] {
                return Err(format!("trace tree call site {v}: calls do not match"));
            }
            let known = |t: Option<u64>| t.is_none_or(|t| t < terminals);
            if r.terminals.strided || !known(r.terminals.max) {
                return Err(format!("trace tree call site {v}: unknown terminal"));
            }
            foreign += u128::from(r.foreign.sum);
            calls += activations[v];
        } else if r.terminals.len != 0 || r.foreign.len != 0 {
            return Err(format!(
                "trace tree vertex {v} is not a call site but has calls"
            ));
        }
    }
    if foreign != u128::from(foreign_calls) {
        return Err("a trace tree and its grammar disagree on the calls outside the tree".into());
    }
    // Activations open only under a call, so none can outnumber the calls: this keeps a
    // walk's work proportional to the calls it emits.
    if activations[1..].iter().any(|&a| a > calls) {
        return Err("a trace tree has activations without calls".into());
    }
    Ok(calls)
}
