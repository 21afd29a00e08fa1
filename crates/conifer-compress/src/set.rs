//! Several grammars stored together, with one more Sequitur pass over all their rules, so
//! structure that different ranks' grammars share (a loop body, an initialisation phase) is
//! stored once. Each rule item (symbol and exponent, exactly as in a single grammar's encoding)
//! becomes a letter of a dictionary, letter 0 ends a rule, and the letters of every rule of
//! every grammar, in order, are compressed as one sequence.
//!
//! Layout, every number an unsigned LEB128 varint:
//!
//! ```text
//! version (one byte, 1)
//! grammar count G, then G rule counts
//! dictionary size D, then D items, each encoded as in a single grammar (tag, [exponent - 2])
//! the grammar of the letter sequence, in the single-grammar encoding (rest of the input)
//! ```
//!
//! Decoding rebuilds each grammar's own encoding and parses it with
//! [`FrozenGrammar::from_bytes`], so every check of a single grammar applies; the letter
//! sequence may expand to at most [`MAX_LETTERS`], so corrupt input cannot make it run long.

use crate::codec::{put_varint, DecodeError, Reader};
use crate::fast_hash::FastMap;
use crate::frozen::{FrozenGrammar, Symbol};
use crate::grammar::Grammar;

const VERSION: u8 = 1;
/// Version byte of [`encode_list`]: the grammars one after another, without the shared pass.
const LIST_VERSION: u8 = 2;
/// The letter that ends a rule.
const RULE_END: u32 = 0;
/// Most letters the combined sequence may expand to (all rule items of all grammars).
pub const MAX_LETTERS: u64 = 1 << 24;

fn item_bytes(symbol: Symbol, exponent: u64) -> Vec<u8> {
    let (id, is_rule) = match symbol {
        Symbol::Terminal(t) => (u64::from(t), 0),
        Symbol::Rule(r) => (u64::from(r), 2),
    };
    let mut out = Vec::new();
    put_varint(&mut out, id << 2 | is_rule | u64::from(exponent > 1));
    if exponent > 1 {
        put_varint(&mut out, exponent - 2);
    }
    out
}

/// The combined encoding of `grammars`.
pub fn encode_set(grammars: &[FrozenGrammar]) -> Vec<u8> {
    let mut dictionary: Vec<Vec<u8>> = Vec::new();
    // Keyed by the item itself: its bytes are one-to-one with it, and made once per letter.
    let mut letter_of: FastMap<(Symbol, u64), u32> = FastMap::default();
    let mut letters = Grammar::new();
    for g in grammars {
        for rule in g.rules() {
            for item in rule {
                let next = dictionary.len() as u32 + 1;
                let letter = *letter_of
                    .entry((item.symbol, item.exponent))
                    .or_insert_with(|| {
                        dictionary.push(item_bytes(item.symbol, item.exponent));
                        next
                    });
                letters.push(letter);
            }
            letters.push(RULE_END);
        }
    }
    let mut out = vec![VERSION];
    put_varint(&mut out, grammars.len() as u64);
    grammars
        .iter()
        .for_each(|g| put_varint(&mut out, g.rules().len() as u64));
    put_varint(&mut out, dictionary.len() as u64);
    dictionary.iter().for_each(|d| out.extend_from_slice(d));
    out.extend_from_slice(&letters.into_frozen().to_bytes());
    out
}

/// `grammars` one after another, each in the single-grammar encoding after its length:
/// without [`encode_set`]'s pass over all their rules, so quick to write and read and
/// without that pass's memory (the form of the merge's messages between ranks; a file's
/// `GRAM` section is [`encode_set`]'s). [`decode_set`] reads both.
pub fn encode_list(grammars: &[FrozenGrammar]) -> Vec<u8> {
    let mut out = vec![LIST_VERSION];
    put_varint(&mut out, grammars.len() as u64);
    for grammar in grammars {
        let bytes = grammar.to_bytes();
        put_varint(&mut out, bytes.len() as u64);
        out.extend_from_slice(&bytes);
    }
    out
}

/// Decodes [`encode_set`] or [`encode_list`] output.
pub fn decode_set(bytes: &[u8]) -> Result<Vec<FrozenGrammar>, DecodeError> {
    let mut reader = Reader { bytes };
    let version = reader.byte()?;
    if version == LIST_VERSION {
        return decode_list(reader);
    }
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion(version));
    }
    let count = reader.count()?;
    let rule_counts = (0..count)
        .map(|_| reader.count())
        .collect::<Result<Vec<usize>, _>>()?;
    let size = reader.count()?;
    let mut dictionary = Vec::with_capacity(size);
    for _ in 0..size {
        let start = reader.bytes;
        let tag = reader.varint()?;
        if tag & 1 == 1 {
            reader.varint()?;
        }
        dictionary.push(&start[..start.len() - reader.bytes.len()]);
    }
    let letters = FrozenGrammar::from_bytes(reader.bytes)?;
    if letters.len() > MAX_LETTERS {
        return Err(DecodeError::CountTooLarge(letters.len()));
    }
    let mut rules: Vec<(usize, Vec<u8>)> = Vec::new();
    let (mut items, mut body) = (0usize, Vec::new());
    for letter in letters.expand() {
        if letter == RULE_END {
            rules.push((items, std::mem::take(&mut body)));
            items = 0;
            continue;
        }
        let item = dictionary
            .get(letter as usize - 1)
            .ok_or(DecodeError::IdTooLarge(letter.into()))?;
        body.extend_from_slice(item);
        items += 1;
    }
    if items != 0 || rules.len() != rule_counts.iter().sum::<usize>() {
        return Err(DecodeError::NotCanonical);
    }
    let mut rules = rules.into_iter();
    rule_counts
        .iter()
        .map(|&n| {
            let mut encoded = vec![VERSION];
            put_varint(&mut encoded, n as u64);
            for (items, body) in rules.by_ref().take(n) {
                put_varint(&mut encoded, items as u64);
                encoded.extend_from_slice(&body);
            }
            FrozenGrammar::from_bytes(&encoded)
        })
        .collect()
}

/// The grammars of [`encode_list`] output, after its version byte.
fn decode_list(mut reader: Reader) -> Result<Vec<FrozenGrammar>, DecodeError> {
    let count = reader.count()?;
    let mut grammars = Vec::with_capacity(count);
    for _ in 0..count {
        let length = reader.count()?;
        let (bytes, rest) = reader.bytes.split_at(length);
        reader.bytes = rest;
        grammars.push(FrozenGrammar::from_bytes(bytes)?);
    }
    if !reader.bytes.is_empty() {
        return Err(DecodeError::TrailingBytes(reader.bytes.len()));
    }
    Ok(grammars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grammar(seq: impl IntoIterator<Item = u32>) -> FrozenGrammar {
        let mut g = Grammar::new();
        seq.into_iter().for_each(|t| g.push(t));
        g.freeze()
    }

    /// A 2D stencil's behaviour classes: the same loop, with the edge ranks missing some
    /// neighbours.
    fn classes() -> Vec<FrozenGrammar> {
        (0..9u32)
            .map(|class| {
                let neighbours: Vec<u32> = (0..4).filter(|n| (class + n) % 3 != 0).collect();
                let mut seq = vec![100, 101, 102];
                for _ in 0..50 {
                    for &n in &neighbours {
                        seq.extend([10 + n, 20 + n]);
                    }
                    seq.extend([30, 31]);
                }
                seq.push(103);
                grammar(seq)
            })
            .collect()
    }

    #[test]
    fn sets_round_trip() {
        for set in [
            vec![],
            vec![grammar([])],
            vec![grammar([1, 2, 1, 2])],
            classes(),
        ] {
            assert_eq!(decode_set(&encode_set(&set)).unwrap(), set);
            assert_eq!(decode_set(&encode_list(&set)).unwrap(), set);
        }
    }

    #[test]
    fn shared_structure_is_stored_once() {
        let set = classes();
        let separate: usize = set.iter().map(|g| g.to_bytes().len()).sum();
        let combined = encode_set(&set).len();
        assert!(combined < separate, "{combined} >= {separate}");
        let copies = vec![set[4].clone(); 8];
        let one = encode_set(&copies[..1]).len();
        assert!(encode_set(&copies).len() < one + 16);
    }

    #[test]
    fn truncated_or_altered_sets_are_rejected_without_panic() {
        for bytes in [encode_set(&classes()), encode_list(&classes())] {
            for cut in 0..bytes.len() {
                assert!(decode_set(&bytes[..cut]).is_err());
            }
            for i in 0..bytes.len() {
                let mut altered = bytes.clone();
                altered[i] ^= 0x5a;
                let _ = decode_set(&altered);
            }
        }
    }
}
