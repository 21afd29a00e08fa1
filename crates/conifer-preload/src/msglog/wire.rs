//! The message log's encoding, shared by the writer ([`super::entry`]) and the replay's
//! reader (`crate::replay`).
//!
//! A rank's log is one zstd stream: a header line, then one entry per MPI call the replay
//! answers from the log, in the order the rank made them:
//!
//! ```text
//! entry   := function:varint ret:varint inputs:varint input:zigzag* item* END
//! item    := ABSENT | RAW len:varint byte* | HANDLES n:varint handle* | DATA blocks payload
//!          | COMPLETED slot:varint blocks payload | ATTRIBUTE (INT v:zigzag | TOKEN v:varint)
//! handle  := code:varint (predefined name code + 1) | 0 bits:varint (any other handle)
//! blocks  := n:varint (displacement:zigzag count:varint)*
//! payload := NEW len:varint byte* | SEEN id:varint    (a payload seen before, by order)
//! ```
//!
//! Inputs are the call's integer arguments and payload checksums, compared by the replay;
//! items are its outputs in parameter order; `COMPLETED` items carry the data of the
//! nonblocking receives a completion call finished (by their slot in its request array).

/// First line of every log: format and version.
pub const MAGIC: &[u8] = b"conifer message log 1\n";
/// Item tag: the output pointer was null or an ignore sentinel in the run.
pub const ABSENT: u8 = 0;
/// Item tag: bytes copied verbatim (integers, statuses, strings).
pub const RAW: u8 = 1;
/// Item tag: handles, predefined ones by name code.
pub const HANDLES: u8 = 2;
/// Item tag: a receive buffer's data, packed, with its layout.
pub const DATA: u8 = 3;
/// Item tag: the data of a request the call completed.
pub const COMPLETED: u8 = 4;
/// End of an entry's items.
pub const END: u8 = 5;
/// Item tag: a communicator attribute's value: `INT value:zigzag` for a predefined one
/// (a pointer to an int in MPI's memory), `TOKEN bits:varint` for any other.
pub const ATTRIBUTE: u8 = 6;
/// Attribute kind: an int behind a pointer.
pub const INT: u8 = 0;
/// Attribute kind: the value itself, a token.
pub const TOKEN: u8 = 1;
/// Payload tag: new bytes follow.
pub const NEW: u8 = 0;
/// Payload tag: the bytes of an earlier payload, by its number.
pub const SEEN: u8 = 1;
/// Payloads shorter than this are always written out (a reference would not be smaller).
pub const DEDUP_MIN: usize = 32;

/// Appends `v` as a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zigzag-encoded as a varint.
pub fn put_signed(out: &mut Vec<u8>, v: i64) {
    put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Reads a varint from `input`; `None` at its end or on a malformed one.
pub fn get_varint(input: &mut impl std::io::Read) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let mut byte = [0u8];
        input.read_exact(&mut byte).ok()?;
        v |= u64::from(byte[0] & 0x7f) << shift;
        if byte[0] < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Reads a zigzag varint.
pub fn get_signed(input: &mut impl std::io::Read) -> Option<i64> {
    get_varint(input).map(|v| ((v >> 1) as i64) ^ -((v & 1) as i64))
}

/// A 64-bit hash of `bytes`, eight bytes at a step (payload checksums and, with the length,
/// the dedup table's keys).
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0xff51_afd7_ed55_8ccd;
    let mut h = 0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        h = (h ^ w).wrapping_mul(K).rotate_left(31);
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let mut out = Vec::new();
        for v in [0u64, 1, 127, 128, 300, u64::MAX] {
            put_varint(&mut out, v);
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            put_signed(&mut out, v);
        }
        let mut input = &out[..];
        for v in [0u64, 1, 127, 128, 300, u64::MAX] {
            assert_eq!(get_varint(&mut input), Some(v));
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(get_signed(&mut input), Some(v));
        }
        assert_eq!(get_varint(&mut input), None);
    }
}
