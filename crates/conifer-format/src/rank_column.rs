//! Per-rank integers: one integer field of a signature that ranks share, stored as a column
//! world rank → value, so ranks whose calls differ only in counts, displacements, byte counts
//! or computed tags keep one signature (chosen at the merge: `conifer_write::value_columns`).
//! A column is written in the shorter of two forms: the distinct values and each rank's index
//! into them in ⌈log₂ k⌉ bits (a few distinct values), or every rank's value (raw).

use crate::varint::{put_i64, put_u64, Reader};

/// The value of an integer field for each world rank `first..first + per_rank.len()`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Column {
    /// The first world rank covered.
    pub first: u32,
    /// Each covered rank's value (a rank that does not make the call holds any value).
    pub per_rank: Vec<i64>,
}

/// Bits that hold an index below `k`, at least one.
fn index_bits(k: usize) -> u32 {
    (usize::BITS - (k.max(2) - 1).leading_zeros()).max(1)
}

impl Column {
    /// The value of world rank `rank`, when the column covers it.
    pub fn at(&self, rank: u32) -> Option<i64> {
        let i = rank.checked_sub(self.first)?;
        self.per_rank.get(i as usize).copied()
    }

    /// The distinct values in order of first appearance, and each rank's index among them.
    fn distinct(&self) -> (Vec<i64>, Vec<usize>) {
        let mut values: Vec<i64> = Vec::new();
        let indices = self
            .per_rank
            .iter()
            .map(|v| match values.iter().position(|x| x == v) {
                Some(i) => i,
                None => {
                    values.push(*v);
                    values.len() - 1
                }
            })
            .collect();
        (values, indices)
    }

    /// Appends the payload: `varint first, varint n, varint k`, then for `k = 0` the `n`
    /// values as zigzags, else the `k` distinct values as zigzags and the `n` indices packed
    /// in ⌈log₂ k⌉ bits each, low bits first.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, self.first.into());
        put_u64(out, self.per_rank.len() as u64);
        let (values, indices) = self.distinct();
        let bits = index_bits(values.len());
        let mut raw = Vec::new();
        self.per_rank.iter().for_each(|&v| put_i64(&mut raw, v));
        let mut mapped = Vec::new();
        values.iter().for_each(|&v| put_i64(&mut mapped, v));
        let mut packed = vec![0u8; (indices.len() * bits as usize).div_ceil(8)];
        for (n, &i) in indices.iter().enumerate() {
            for b in 0..bits as usize {
                if i >> b & 1 == 1 {
                    let at = n * bits as usize + b;
                    packed[at / 8] |= 1 << (at % 8);
                }
            }
        }
        mapped.extend(packed);
        if values.len() < self.per_rank.len() && mapped.len() < raw.len() {
            put_u64(out, values.len() as u64);
            out.extend(mapped);
        } else {
            put_u64(out, 0);
            out.extend(raw);
        }
    }

    /// Reads a payload written by [`Column::encode`]; `None` when malformed.
    pub fn decode(r: &mut Reader) -> Option<Column> {
        let first = r.u32()?;
        // At least one bit a rank: bounded by what is left, so corrupt input cannot make
        // the reader allocate more than eight values per byte it holds.
        let n = usize::try_from(r.u64()?).ok()?;
        if n / 8 > r.remaining() {
            return None;
        }
        let k = r.count()?;
        if k == 0 {
            let per_rank = (0..n).map(|_| r.i64()).collect::<Option<Vec<i64>>>()?;
            return Some(Column { first, per_rank });
        }
        let values = (0..k).map(|_| r.i64()).collect::<Option<Vec<i64>>>()?;
        let bits = index_bits(k) as usize;
        let packed = r.take((n * bits).div_ceil(8))?;
        let per_rank = (0..n)
            .map(|i| {
                let index = (0..bits)
                    .filter(|b| packed[(i * bits + b) / 8] >> ((i * bits + b) % 8) & 1 == 1)
                    .fold(0usize, |acc, b| acc | 1 << b);
                values.get(index).copied()
            })
            .collect::<Option<Vec<i64>>>()?;
        Some(Column { first, per_rank })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(c: &Column) -> Vec<u8> {
        let mut bytes = Vec::new();
        c.encode(&mut bytes);
        assert_eq!(Column::decode(&mut Reader::new(&bytes)).as_ref(), Some(c));
        bytes
    }

    #[test]
    fn a_few_values_take_a_packed_map_and_many_the_raw_form() {
        // SP's cell sizes on 64 ranks: three values, two bits a rank.
        let per_rank: Vec<i64> = (0..64).map(|r| [18_000, 19_200, 20_480][r % 3]).collect();
        let bytes = round_trip(&Column { first: 0, per_rank });
        // first, n, k, three 3-byte zigzags, 16 bytes of map.
        assert_eq!(bytes.len(), 3 + 9 + 16);
        let raw = Column {
            first: 5,
            per_rank: (0..10).map(|r| r * 7 - 3).collect(),
        };
        let bytes = round_trip(&raw);
        assert_eq!(bytes[2], 0, "all distinct: raw");
        assert_eq!(raw.at(5), Some(-3));
        assert_eq!(raw.at(14), Some(60));
        assert_eq!(raw.at(4), None);
        assert_eq!(raw.at(15), None);
    }

    #[test]
    fn a_long_column_of_two_values_reads_back() {
        // 16 ranks in 2 bytes of map: more ranks than bytes left.
        let per_rank: Vec<i64> = (0..16)
            .map(|r| if r % 5 == 0 { 57_344 } else { 49_152 })
            .collect();
        round_trip(&Column { first: 0, per_rank });
    }

    #[test]
    fn malformed_payloads_are_refused() {
        let mut bytes = Vec::new();
        Column {
            first: 0,
            per_rank: vec![1, 2, 1, 2, 1, 2],
        }
        .encode(&mut bytes);
        bytes.pop();
        assert_eq!(Column::decode(&mut Reader::new(&bytes)), None);
    }
}
