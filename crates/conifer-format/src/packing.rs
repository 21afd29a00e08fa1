//! Section payloads that may be compressed: a mode byte (0 stored, 1 zstd) and the contents.

use crate::container::FormatError;

/// The most a compressed signature table may inflate, relative to its compressed size: a
/// bound on what a corrupt frame header can make the reader allocate.
pub(crate) const MAX_INFLATION: u64 = 4096;

/// A section payload that may be large (`SIGS`, `TREE`): a mode byte (0 stored, 1
/// zstd) and the contents, compressed when longer than `above` bytes (never without it).
pub fn pack_above(table: Vec<u8>, above: Option<usize>) -> Vec<u8> {
    if above.is_some_and(|limit| table.len() > limit) {
        if let Ok(packed) = zstd::bulk::compress(&table, 3) {
            let mut out = vec![1];
            out.extend_from_slice(&packed);
            return out;
        }
    }
    let mut out = vec![0];
    out.extend_from_slice(&table);
    out
}

/// Sections up to this size are compressed at zstd's strongest level (a few milliseconds);
/// larger ones at a level that keeps writing a large trace quick.
const STRONGEST_BELOW: usize = 1 << 16;

/// A record section's payload: a mode byte as in [`pack_above`], compressed when `compact`
/// and that makes it smaller.
pub fn pack_if_smaller(payload: Vec<u8>, compact: bool) -> Vec<u8> {
    if compact && payload.len() > 16 {
        let level = if payload.len() <= STRONGEST_BELOW {
            19
        } else {
            6
        };
        if let Ok(packed) = zstd::bulk::compress(&payload, level) {
            if packed.len() + 1 < payload.len() {
                let mut out = vec![1];
                out.extend_from_slice(&packed);
                return out;
            }
        }
    }
    pack_above(payload, None)
}

/// The contents of a [`pack_above`]d payload of section `what`.
pub fn unpack<'a>(
    payload: &'a [u8],
    what: &str,
) -> Result<std::borrow::Cow<'a, [u8]>, FormatError> {
    match payload.split_first() {
        Some((0, table)) => Ok(std::borrow::Cow::Borrowed(table)),
        Some((1, packed)) => {
            let size = zstd::zstd_safe::get_frame_content_size(packed)
                .ok()
                .flatten()
                .filter(|&n| n <= (packed.len() as u64).saturating_mul(MAX_INFLATION))
                .ok_or_else(|| malformed(what))?;
            let table =
                zstd::bulk::decompress(packed, size as usize).map_err(|_| malformed(what))?;
            Ok(std::borrow::Cow::Owned(table))
        }
        _ => Err(malformed(what)),
    }
}

fn malformed(what: &str) -> FormatError {
    FormatError::Malformed(format!("{what} section is inconsistent"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_claiming_more_than_it_could_inflate_to_is_refused() {
        let mut bomb = vec![1u8];
        bomb.extend_from_slice(&zstd::bulk::compress(&vec![0u8; 1 << 20], 19).unwrap());
        assert!(unpack(&bomb, "SIGS").is_err());
    }
}
