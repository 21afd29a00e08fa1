//! Bit-level Exp-Golomb codes (order *k*): a number *v* is written as the binary form of
//! *v* + 2^*k* preceded by as many 0 bits as that form has bits beyond *k* + 1, most
//! significant bit first. Small numbers take few bits, large ones about twice their length,
//! so a sequence of small deviations with a few outliers costs little (`RQTM`).

/// Appends bits to a byte vector, most significant bit of each byte first.
#[derive(Debug, Default)]
pub struct BitWriter {
    bytes: Vec<u8>,
    bits: u64,
}

impl BitWriter {
    fn put_bit(&mut self, one: bool) {
        if self.bits.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if one {
            let last = self.bytes.len() - 1;
            self.bytes[last] |= 0x80 >> (self.bits % 8);
        }
        self.bits += 1;
    }

    /// Appends `v` as an Exp-Golomb code of order `k` (`k` ≤ 63).
    pub fn put(&mut self, v: u64, k: u32) {
        let shifted = u128::from(v) + (1u128 << k);
        let len = 128 - shifted.leading_zeros();
        (0..len - k - 1).for_each(|_| self.put_bit(false));
        (0..len)
            .rev()
            .for_each(|i| self.put_bit((shifted >> i) & 1 == 1));
    }

    /// The bytes written (the last byte padded with 0 bits).
    pub fn finish(self) -> Vec<u8> {
        self.bytes
    }
}

/// Reads what a [`BitWriter`] wrote; every read fails cleanly at the end of the input.
pub struct BitReader<'a> {
    bytes: &'a [u8],
    bit: usize,
}

impl<'a> BitReader<'a> {
    /// Reads from the first bit of `bytes`.
    pub fn new(bytes: &'a [u8]) -> BitReader<'a> {
        BitReader { bytes, bit: 0 }
    }

    fn bit(&mut self) -> Option<u64> {
        let byte = self.bytes.get(self.bit / 8)?;
        let b = (byte >> (7 - self.bit % 8)) & 1;
        self.bit += 1;
        Some(b.into())
    }

    /// Reads an Exp-Golomb code of order `k`; `None` at the end of the input or for a code
    /// beyond 64 bits.
    pub fn get(&mut self, k: u32) -> Option<u64> {
        let mut zeros = 0;
        while self.bit()? == 0 {
            zeros += 1;
            if zeros + k > 64 {
                return None;
            }
        }
        let mut v: u128 = 1;
        for _ in 0..zeros + k {
            v = (v << 1) | u128::from(self.bit()?);
        }
        u64::try_from(v - (1u128 << k)).ok()
    }

    /// True when only the padding of the last byte (0 bits) is left.
    pub fn at_end(&self) -> bool {
        let end = self.bytes.len() * 8;
        end.saturating_sub(self.bit) < 8
            && (self.bit..end).all(|i| (self.bytes[i / 8] >> (7 - i % 8)) & 1 == 0)
    }
}

/// The bits [`BitWriter::put`] takes for `v` at order `k`.
pub fn cost(v: u64, k: u32) -> u64 {
    let len = u64::from(128 - (u128::from(v) + (1u128 << k)).leading_zeros());
    2 * len - u64::from(k) - 1
}

/// The order (0–40) that codes `values` in about the fewest bits, and about that many bits
/// (from the values' bit lengths alone: a carry into one more bit is not counted).
pub fn best_order(values: &[u64]) -> (u32, u64) {
    let mut lengths = [0u64; 65];
    values
        .iter()
        .for_each(|&v| lengths[(64 - v.leading_zeros()) as usize] += 1);
    let bits = |k: u32| -> u64 {
        let k64 = u64::from(k);
        (0u64..)
            .zip(lengths)
            .map(|(b, n)| n * if b <= k64 { k64 + 1 } else { 2 * b - k64 - 1 })
            .sum()
    };
    (0..=40)
        .map(|k| (k, bits(k)))
        .min_by_key(|&(k, bits)| (bits, k))
        .unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_the_stated_lengths() {
        let values = [0u64, 1, 2, 7, 8, 1_000, u64::MAX, u64::MAX - 5, 1 << 40];
        for k in [0u32, 1, 3, 17, 40, 63] {
            let mut w = BitWriter::default();
            values.iter().for_each(|&v| w.put(v, k));
            let bytes = w.finish();
            let total: u64 = values.iter().map(|&v| cost(v, k)).sum();
            assert_eq!(bytes.len() as u64, total.div_ceil(8));
            let mut r = BitReader::new(&bytes);
            for &v in &values {
                assert_eq!(r.get(k), Some(v));
            }
            assert!(r.at_end());
        }
        // Order 0: 0 is "1", 1 is "010", 2 is "011", 3 is "00100" (hand-derived).
        let mut w = BitWriter::default();
        [0, 1, 2, 3].iter().for_each(|&v| w.put(v, 0));
        assert_eq!(w.finish(), vec![0b1010_0110, 0b0100_0000]);
        assert_eq!(BitReader::new(&[0, 0, 0, 0, 0, 0, 0, 0, 0]).get(0), None);
    }

    #[test]
    fn the_best_order_follows_the_values_magnitude() {
        assert_eq!(best_order(&[0, 0, 1, 0]).0, 0);
        assert_eq!(best_order(&[1_000, 1_200, 900, 1_100]).0, 9);
    }
}
