//! Binary encoding of a [`FrozenGrammar`].
//!
//! Layout, every number an unsigned LEB128 varint in its shortest form:
//!
//! ```text
//! version (one byte, 1)
//! rule count R (>= 1)
//! R times: item count K, then K items:
//!     tag = id << 2 | is_rule << 1 | (exponent > 1)
//!     exponent - 2, only when exponent > 1
//! ```
//!
//! The encoding of a canonical grammar is unique, and [`from_bytes`]
//! accepts only canonical grammars, so decoding then encoding gives back the
//! same bytes. Decoding never panics, bounds every count by the bytes left
//! (allocation is linear in the input) and rejects references out of range,
//! references to the start rule, cycles, empty non-start rules, and
//! expanded lengths that overflow `u64`.
//!
//! [`from_bytes`]: FrozenGrammar::from_bytes

use std::fmt;

use crate::frozen::{FrozenGrammar, Item, Symbol};

const VERSION: u8 = 1;

/// Why [`FrozenGrammar::from_bytes`] rejected its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ended in the middle of a value.
    Truncated,
    /// The format version is not one this build reads.
    UnsupportedVersion(u8),
    /// A varint is longer than its shortest form or does not fit 64 bits.
    BadVarint,
    /// The rule count is 0: there is no start rule.
    NoStartRule,
    /// A count (of rules or items) exceeds what the remaining bytes can hold.
    CountTooLarge(u64),
    /// A terminal or rule id does not fit 32 bits.
    IdTooLarge(u64),
    /// A rule reference is 0 (the start rule) or not below the rule count.
    BadRuleReference(u64),
    /// An exponent does not fit 64 bits.
    ExponentTooLarge,
    /// A rule other than the start rule has no items.
    EmptyRule(u64),
    /// A rule references itself, directly or through other rules.
    Cycle(u32),
    /// Rules are not numbered in depth-first order of first appearance, or
    /// some rule is unreachable from the start rule.
    NotCanonical,
    /// The expanded sequence is longer than `u64::MAX`.
    LengthOverflow,
    /// Bytes remain after the last rule.
    TrailingBytes(usize),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "grammar encoding is truncated"),
            DecodeError::UnsupportedVersion(v) => {
                write!(f, "unsupported grammar format version {v}")
            }
            DecodeError::BadVarint => write!(f, "malformed varint in grammar encoding"),
            DecodeError::NoStartRule => write!(f, "grammar has no start rule"),
            DecodeError::CountTooLarge(n) => write!(f, "count {n} exceeds the remaining input"),
            DecodeError::IdTooLarge(id) => write!(f, "symbol id {id} does not fit 32 bits"),
            DecodeError::BadRuleReference(r) => write!(f, "invalid reference to rule {r}"),
            DecodeError::ExponentTooLarge => write!(f, "exponent does not fit 64 bits"),
            DecodeError::EmptyRule(r) => write!(f, "rule {r} is empty"),
            DecodeError::Cycle(r) => write!(f, "rule {r} references itself"),
            DecodeError::NotCanonical => write!(f, "rules are not in canonical order"),
            DecodeError::LengthOverflow => write!(f, "expanded length overflows 64 bits"),
            DecodeError::TrailingBytes(n) => write!(f, "{n} trailing byte(s) after the grammar"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Appends an unsigned LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Cursor over the input.
pub(crate) struct Reader<'a> {
    /// What is left to read.
    pub(crate) bytes: &'a [u8],
}

impl Reader<'_> {
    /// One byte.
    pub(crate) fn byte(&mut self) -> Result<u8, DecodeError> {
        let (&first, rest) = self.bytes.split_first().ok_or(DecodeError::Truncated)?;
        self.bytes = rest;
        Ok(first)
    }

    /// A varint in its shortest form.
    pub(crate) fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(DecodeError::BadVarint);
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                if byte == 0 && shift > 0 {
                    return Err(DecodeError::BadVarint);
                }
                return Ok(value);
            }
        }
        Err(DecodeError::BadVarint)
    }

    /// A count of things each taking at least one byte.
    pub(crate) fn count(&mut self) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        match usize::try_from(n) {
            Ok(count) if count <= self.bytes.len() => Ok(count),
            _ => Err(DecodeError::CountTooLarge(n)),
        }
    }
}

impl FrozenGrammar {
    /// The compact binary form (see the module documentation); equal
    /// grammars give identical bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![VERSION];
        put_varint(&mut out, self.rules().len() as u64);
        for body in self.rules() {
            put_varint(&mut out, body.len() as u64);
            for item in body {
                let (id, is_rule) = match item.symbol {
                    Symbol::Terminal(t) => (u64::from(t), 0),
                    Symbol::Rule(r) => (u64::from(r), 2),
                };
                let repeated = u64::from(item.exponent > 1);
                put_varint(&mut out, id << 2 | is_rule | repeated);
                if item.exponent > 1 {
                    put_varint(&mut out, item.exponent - 2);
                }
            }
        }
        out
    }

    /// Decodes [`to_bytes`](Self::to_bytes) output, validating it fully
    /// (structure and canonical form, not P1/P2: see
    /// [`check_invariants`](Self::check_invariants)).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut reader = Reader { bytes };
        let version = reader.byte()?;
        if version != VERSION {
            return Err(DecodeError::UnsupportedVersion(version));
        }
        let rule_count = reader.count()?;
        if rule_count == 0 {
            return Err(DecodeError::NoStartRule);
        }
        let mut rules = Vec::with_capacity(rule_count);
        for index in 0..rule_count {
            let item_count = reader.count()?;
            if index != 0 && item_count == 0 {
                return Err(DecodeError::EmptyRule(index as u64));
            }
            let mut body = Vec::with_capacity(item_count);
            for _ in 0..item_count {
                body.push(read_item(&mut reader, rule_count)?);
            }
            rules.push(body);
        }
        if !reader.bytes.is_empty() {
            return Err(DecodeError::TrailingBytes(reader.bytes.len()));
        }
        let len = validate(&rules)?;
        Ok(FrozenGrammar::from_canonical(rules, len))
    }
}

fn read_item(reader: &mut Reader<'_>, rule_count: usize) -> Result<Item, DecodeError> {
    let tag = reader.varint()?;
    let id = u32::try_from(tag >> 2).map_err(|_| DecodeError::IdTooLarge(tag >> 2))?;
    let symbol = if tag & 2 == 0 {
        Symbol::Terminal(id)
    } else if id != 0 && (id as usize) < rule_count {
        Symbol::Rule(id)
    } else {
        return Err(DecodeError::BadRuleReference(u64::from(id)));
    };
    let exponent = if tag & 1 == 0 {
        1
    } else {
        reader
            .varint()?
            .checked_add(2)
            .ok_or(DecodeError::ExponentTooLarge)?
    };
    Ok(Item { symbol, exponent })
}

/// Where the depth-first walk of [`validate`] stands with one rule.
#[derive(Clone, Copy)]
enum Visit {
    Unseen,
    Open,
    Done(u64),
}

/// Walks the rules depth-first from the start rule, as `freeze` numbers
/// them: checks that each rule is first met in numbering order, that every
/// rule is reached and that none is reached from itself; returns the
/// expanded length. Rule references are known to be in range.
fn validate(rules: &[Vec<Item>]) -> Result<u64, DecodeError> {
    let mut visits = vec![Visit::Unseen; rules.len()];
    visits[0] = Visit::Open;
    let mut next_id = 1;
    // (rule, next item, expanded length of the items before it)
    let mut stack = vec![(0usize, 0usize, 0u64)];
    let mut total = 0;
    while let Some(top) = stack.last_mut() {
        let (rule, pos, length) = *top;
        let Some(item) = rules[rule].get(pos) else {
            visits[rule] = Visit::Done(length);
            total = length;
            stack.pop();
            continue;
        };
        let unit = match item.symbol {
            Symbol::Terminal(_) => 1,
            Symbol::Rule(child) => match visits[child as usize] {
                Visit::Done(unit) => unit,
                Visit::Open => return Err(DecodeError::Cycle(child)),
                Visit::Unseen if child as usize == next_id => {
                    next_id += 1;
                    visits[child as usize] = Visit::Open;
                    stack.push((child as usize, 0, 0));
                    continue;
                }
                Visit::Unseen => return Err(DecodeError::NotCanonical),
            },
        };
        top.1 += 1;
        top.2 = unit
            .checked_mul(item.exponent)
            .and_then(|n| n.checked_add(length))
            .ok_or(DecodeError::LengthOverflow)?;
    }
    if next_id != rules.len() {
        return Err(DecodeError::NotCanonical);
    }
    Ok(total)
}
