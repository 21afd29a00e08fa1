//! Per-rank columns (each rank's grammar ids, communicators, call counts, host) stored so their
//! size follows the number of distinct behaviours, not the number of ranks: the distinct values
//! once, then the rank → value sequence as a Sequitur grammar with repetition exponents. A run of
//! equal ranks costs O(1) (`v^k`), and so does a stride pattern such as the rows of a 2D grid
//! (`(edge interior^k edge)^m`).

use crate::varint::{put_u64, Reader};
use conifer_compress::{FrozenGrammar, Grammar};
use std::collections::HashMap;
use std::hash::Hash;

/// Appends the column `values` (one per rank) to `out`, encoding each distinct value once with
/// `encode`.
pub fn put_column<T: Eq + Hash>(
    out: &mut Vec<u8>,
    values: &[T],
    encode: impl Fn(&mut Vec<u8>, &T),
) {
    let mut index: HashMap<&T, u32> = HashMap::new();
    let mut distinct: Vec<&T> = Vec::new();
    let mut order = Grammar::new();
    for value in values {
        let next = distinct.len() as u32;
        let id = *index.entry(value).or_insert_with(|| {
            distinct.push(value);
            next
        });
        order.push(id);
    }
    put_u64(out, distinct.len() as u64);
    let mut scratch = Vec::new();
    for value in distinct {
        scratch.clear();
        encode(&mut scratch, value);
        put_u64(out, scratch.len() as u64);
        out.extend_from_slice(&scratch);
    }
    let grammar = order.freeze().to_bytes();
    put_u64(out, grammar.len() as u64);
    out.extend_from_slice(&grammar);
}

/// Reads a column of exactly `ranks` values written by [`put_column`]; `None` when the bytes
/// are malformed or the column has another length. Never expands more than `ranks` values.
pub fn read_column<T: Clone>(
    r: &mut Reader,
    ranks: usize,
    decode: impl Fn(&mut Reader) -> Option<T>,
) -> Option<Vec<T>> {
    let n = r.count()?;
    let mut distinct = Vec::with_capacity(n);
    for _ in 0..n {
        let len = r.count()?;
        let mut item = Reader::new(r.take(len)?);
        let value = decode(&mut item)?;
        if item.remaining() != 0 {
            return None;
        }
        distinct.push(value);
    }
    let len = r.count()?;
    let order = FrozenGrammar::from_bytes(r.take(len)?).ok()?;
    if order.len() != ranks as u64 {
        return None;
    }
    order
        .expand()
        .map(|id| distinct.get(id as usize).cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::put_i64;

    fn round_trip(values: &[i64]) -> (Vec<i64>, usize) {
        let mut out = Vec::new();
        put_column(&mut out, values, |o, v| put_i64(o, *v));
        let back = read_column(&mut Reader::new(&out), values.len(), |r| r.i64()).unwrap();
        (back, out.len())
    }

    /// The behaviour classes of a `side` x `side` grid with non-periodic edges, row by row.
    fn grid(side: usize) -> Vec<i64> {
        (0..side * side)
            .map(|r| {
                let (row, col) = (r / side, r % side);
                let v = |x: usize| {
                    if x == 0 {
                        0
                    } else if x == side - 1 {
                        2
                    } else {
                        1
                    }
                };
                (v(row) * 3 + v(col)) as i64
            })
            .collect()
    }

    #[test]
    fn columns_round_trip() {
        for values in [vec![], vec![5], vec![1, 2, 3, 1, 2, 3, 9], grid(7)] {
            assert_eq!(round_trip(&values).0, values);
        }
    }

    #[test]
    fn grid_classes_cost_the_same_at_9_and_64_ranks() {
        let (_, small) = round_trip(&grid(3));
        let (_, large) = round_trip(&grid(8));
        let (_, huge) = round_trip(&grid(100));
        // A few bytes of rules for the repeated rows and varint exponents growing with log P.
        assert!(large <= small + 16, "{small} -> {large}");
        assert!(huge <= large + 8, "{large} -> {huge}");
    }

    #[test]
    fn wrong_length_or_bad_index_is_rejected() {
        let mut out = Vec::new();
        put_column(&mut out, &[1i64, 1, 2], |o, v| put_i64(o, *v));
        assert!(read_column(&mut Reader::new(&out), 4, |r| r.i64()).is_none());
        // One distinct value fewer than the order refers to.
        let mut bad = Vec::new();
        put_u64(&mut bad, 1);
        put_u64(&mut bad, 1);
        put_i64(&mut bad, 7);
        let mut order = Grammar::new();
        [0u32, 1].iter().for_each(|&t| order.push(t));
        let g = order.freeze().to_bytes();
        put_u64(&mut bad, g.len() as u64);
        bad.extend_from_slice(&g);
        assert!(read_column(&mut Reader::new(&bad), 2, |r| r.i64()).is_none());
    }
}
