//! LEB128 variable-length integers: the unit of every binary structure in a trace.

/// Appends `v` as an unsigned LEB128 varint.
#[inline]
pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `v` zigzag-mapped onto the unsigned integers (0, −1, 1, −2, … → 0, 1, 2, 3, …), so small
/// negative numbers stay short.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// Appends `v` zigzag-encoded, so small negative numbers stay short.
#[inline]
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_u64(out, zigzag(v));
}

/// Appends `s` as a varint byte length and its UTF-8 bytes.
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A cursor over encoded bytes; every read fails cleanly at the end of the input.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads from the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// The next byte, without reading it.
    pub fn peek(&self) -> Option<u8> {
        self.bytes.first().copied()
    }

    /// One byte.
    pub fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(b)
    }

    /// `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.bytes.len() {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }

    /// An unsigned varint (at most 10 bytes).
    pub fn u64(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A zigzag varint.
    pub fn i64(&mut self) -> Option<i64> {
        self.u64().map(unzigzag)
    }

    /// A varint that must fit in `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        self.u64().and_then(|v| u32::try_from(v).ok())
    }

    /// A string written by [`put_str`]; `None` when cut short or not UTF-8.
    pub fn str(&mut self) -> Option<&'a str> {
        let n = self.count()?;
        std::str::from_utf8(self.take(n)?).ok()
    }

    /// A count of items each at least one byte long: bounded by what is left, so corrupt
    /// input cannot make a caller allocate more than the input holds.
    pub fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= self.bytes.len()).then_some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_extremes() {
        let values = [0i64, 1, -1, 63, -64, 64, i64::MAX, i64::MIN, 300, -300];
        let mut out = Vec::new();
        for v in values {
            put_i64(&mut out, v);
        }
        put_u64(&mut out, u64::MAX);
        let mut r = Reader::new(&out);
        for v in values {
            assert_eq!(r.i64(), Some(v));
        }
        assert_eq!(r.u64(), Some(u64::MAX));
        assert_eq!(r.byte(), None);
    }

    #[test]
    fn bytes_are_leb128() {
        // LEB128 by hand: seven bits a byte, low first, the high bit set on all but the last.
        let cases: [(u64, &[u8]); 5] = [
            (0, &[0x00]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (300, &[0xac, 0x02]),
            (
                u64::MAX,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ];
        for (v, bytes) in cases {
            let mut out = vec![0xee];
            put_u64(&mut out, v);
            assert_eq!(&out[1..], bytes, "{v}");
        }
    }

    #[test]
    fn small_values_are_one_byte() {
        let mut out = Vec::new();
        put_i64(&mut out, -3);
        put_u64(&mut out, 127);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn overlong_and_truncated_input_fail() {
        assert_eq!(Reader::new(&[0xff; 11]).u64(), None);
        assert_eq!(Reader::new(&[0x80]).u64(), None);
        assert_eq!(Reader::new(&[5, 1, 2]).count(), None);
        assert_eq!(Reader::new(&[2, 0xff, 0xfe]).str(), None);
    }

    #[test]
    fn strings_round_trip() {
        let mut out = Vec::new();
        put_str(&mut out, "MPI_Isend");
        put_str(&mut out, "");
        let mut r = Reader::new(&out);
        assert_eq!(r.str(), Some("MPI_Isend"));
        assert_eq!(r.str(), Some(""));
        assert_eq!(r.remaining(), 0);
    }
}
