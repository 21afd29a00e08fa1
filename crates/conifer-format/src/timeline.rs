//! Per-call timing of a thread. Lossless (`--timing lossless`): for every call, the interval
//! since the previous call ended and its duration, in nanoseconds, as varints compressed with
//! zstd (the bytes are the zstd frame, so they start with its magic `28 b5 2f fd`). Lossy
//! (`--timing lossy:REL`): the bytes start with a form byte of [`crate::lossy_timeline`].
//! [`decode`] reads either.

pub use crate::call_time::CallTime;
use crate::varint::{put_u64, Reader};

/// Compresses a thread's call times.
pub fn encode(times: &[CallTime]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(times.len() * 4);
    for t in times {
        put_u64(&mut raw, t.interval_ns);
        put_u64(&mut raw, t.duration_ns);
    }
    zstd::bulk::compress(&raw, 3).expect("zstd compresses an in-memory buffer")
}

/// A thread's call times, exact or within the relative error they were recorded with; `None`
/// when the bytes are not a timeline of at most `calls` calls (the bound keeps corrupt input
/// from allocating without limit).
pub fn decode(bytes: &[u8], calls: u64) -> Option<Vec<CallTime>> {
    if crate::lossy_timeline::header(bytes).is_some() {
        return crate::lossy_timeline::decode(bytes, calls);
    }
    // The frame states its size; allocate that, and only if `calls` calls could fill it.
    let size = zstd::zstd_safe::get_frame_content_size(bytes).ok()??;
    if size > calls.saturating_mul(20) {
        return None;
    }
    let raw = zstd::bulk::decompress(bytes, usize::try_from(size).ok()?.max(1)).ok()?;
    let mut r = Reader::new(&raw);
    let mut times = Vec::new();
    while r.remaining() > 0 {
        times.push(CallTime {
            interval_ns: r.u64()?,
            duration_ns: r.u64()?,
        });
    }
    (times.len() as u64 <= calls).then_some(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_compresses_regular_timing() {
        let times: Vec<CallTime> = (0..10_000)
            .map(|i| CallTime {
                interval_ns: 1_000 + i % 3,
                duration_ns: 250,
            })
            .collect();
        let bytes = encode(&times);
        assert!(
            bytes.len() < times.len(),
            "{} bytes for {} calls",
            bytes.len(),
            times.len()
        );
        assert_eq!(decode(&bytes, 10_000), Some(times));
    }

    #[test]
    fn corrupt_or_oversized_input_is_rejected() {
        let bytes = encode(
            &[CallTime {
                interval_ns: 5,
                duration_ns: 7,
            }; 100],
        );
        assert_eq!(decode(&bytes, 10), None);
        assert_eq!(decode(&bytes[..bytes.len() / 2], 100), None);
        assert_eq!(decode(b"not zstd", 100), None);
    }
}
