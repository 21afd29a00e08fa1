//! The hash of the recorder's maps: signatures and handle values, a word at a time.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// A multiply-rotate hash that takes byte strings (signatures) eight bytes at a time: hashing
/// the signature is on every MPI call's path.
#[derive(Default)]
pub struct WordHash(u64);

/// One mixing step.
#[inline(always)]
fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
}

impl std::hash::Hasher for WordHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write_u64(&mut self, v: u64) {
        // Handle values and hashes: one multiply-rotate mix instead of eight byte steps.
        self.0 = mix(self.0, v);
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }
    fn write_isize(&mut self, v: isize) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            h = mix(h, u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            // The tail zero-padded to a word, read without storing it first: a word load of
            // bytes just stored one by one stalls the pipeline (store forwarding fails).
            let last = match bytes.len().checked_sub(8) {
                Some(start) => {
                    let word = u64::from_le_bytes(bytes[start..].try_into().expect("8 bytes"));
                    word >> (8 * (8 - tail.len()))
                }
                None => tail
                    .iter()
                    .rev()
                    .fold(0, |word, &b| (word << 8) | u64::from(b)),
            };
            // The tail's length is mixed in so "ab" and "ab\0" differ.
            h = mix(h, last ^ (tail.len() as u64) << 56);
        }
        self.0 = h;
    }
}

/// A hash map keyed by signatures.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHash>>;

/// Hash of a byte string (request pools are keyed by the hash of the creating signature).
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = WordHash::default();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word hash of `bytes` computed the plain way: every word, the tail zero-padded.
    fn padded_hash(bytes: &[u8]) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325;
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            let mut v = u64::from_le_bytes(word);
            if chunk.len() < 8 {
                v ^= (chunk.len() as u64) << 56;
            }
            h = mix(h, v);
        }
        h
    }

    #[test]
    fn tails_hash_as_if_zero_padded() {
        let bytes: Vec<u8> = (1..=21).map(|b| b * 13).collect();
        for len in 0..=bytes.len() {
            assert_eq!(
                hash_bytes(&bytes[..len]),
                padded_hash(&bytes[..len]),
                "{len}"
            );
        }
        assert_ne!(hash_bytes(b"ab"), hash_bytes(b"ab\0"));
    }
}
