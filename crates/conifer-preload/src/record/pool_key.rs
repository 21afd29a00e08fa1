//! The key of a request's pool: its creating call's signature so far (function, thread,
//! caller, the arguments before the request) without its integer fields and buffer offsets.
//! Calls that differ only in a count, a tag or where in a buffer they start — a tag that
//! follows the iteration, counts of cells of unequal size on different ranks, an offset
//! advancing by a stride — share a pool, so their requests are numbered alike and the
//! program's reuse of its requests is the trace's reuse of request ids.

use super::word_hash::{hash_bytes, mix};
use conifer_format::caller::Caller;
use conifer_format::value::{Buffer, Value};
use conifer_format::varint::Reader;

/// Marks an integer field in the key (whatever its value).
const INT_MARK: u64 = 0x1b87_3593;
/// Marks a segment buffer in the key (its id follows, not its offset).
const SEGMENT_MARK: u64 = 0x5bd1_e995;
/// Marks an array in the key (its length follows, then its items' keys).
const ARRAY_MARK: u64 = 0x85eb_ca6b;

/// The pool key of the signature prefix `sig` (bytes up to the request being created).
/// Bytes that do not parse as values (never made by the recorder) are hashed as they are.
pub fn pool_key(sig: &[u8]) -> u64 {
    let mut r = Reader::new(sig);
    let head = r
        .u64()
        .and_then(|_| r.u32())
        .and_then(|_| Caller::decode_if_present(&mut r));
    if head.is_none() {
        return hash_bytes(sig);
    }
    let mut h = hash_bytes(&sig[..sig.len() - r.remaining()]);
    while r.remaining() > 0 {
        let start = sig.len() - r.remaining();
        let Some(value) = Value::decode(&mut r) else {
            return mix(h, hash_bytes(&sig[start..]));
        };
        h = match value {
            Value::Int(_) | Value::Buffer(Buffer::Segment { .. }) | Value::Array(_) => {
                blanked(h, &value)
            }
            _ => mix(h, hash_bytes(&sig[start..sig.len() - r.remaining()])),
        };
    }
    h
}

/// `h` with `value` mixed in, its integers and segment offsets left out.
fn blanked(h: u64, value: &Value) -> u64 {
    match value {
        Value::Int(_) => mix(h, INT_MARK),
        Value::Buffer(Buffer::Segment { id, .. }) => mix(mix(h, SEGMENT_MARK), u64::from(*id)),
        Value::Array(items) => items
            .iter()
            .fold(mix(mix(h, ARRAY_MARK), items.len() as u64), blanked),
        other => {
            let mut bytes = Vec::new();
            other.encode(&mut bytes);
            mix(h, hash_bytes(&bytes))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_format::value::{HandleKind, HandleRef, Rank};
    use conifer_format::varint::put_u64;

    /// An `MPI_Isend`-like prefix: function 227, thread 0, then the values.
    fn prefix(values: &[Value]) -> Vec<u8> {
        let mut sig = Vec::new();
        put_u64(&mut sig, 227);
        put_u64(&mut sig, 0);
        values.iter().for_each(|v| v.encode(&mut sig));
        sig
    }

    fn isend(offset: i64, count: i64, peer: i64, tag: i64) -> Vec<u8> {
        prefix(&[
            Value::Buffer(Buffer::Segment { id: 3, offset }),
            Value::Int(count),
            Value::Handle(HandleKind::Datatype, HandleRef::Named(4)),
            Value::Rank(Rank::Relative(peer)),
            Value::Int(tag),
            Value::Handle(HandleKind::Comm, HandleRef::Named(0)),
        ])
    }

    #[test]
    fn counts_tags_and_offsets_share_a_pool() {
        assert_eq!(
            pool_key(&isend(0, 64, 1, 0)),
            pool_key(&isend(32, 512, 1, 7))
        );
    }

    #[test]
    fn peers_types_segments_and_array_lengths_do_not() {
        let key = pool_key(&isend(0, 64, 1, 0));
        assert_ne!(key, pool_key(&isend(0, 64, -1, 0)));
        let mut other_segment = prefix(&[Value::Buffer(Buffer::Segment { id: 4, offset: 0 })]);
        let mut same_segment = prefix(&[Value::Buffer(Buffer::Segment { id: 3, offset: 0 })]);
        assert_ne!(pool_key(&other_segment), pool_key(&same_segment));
        other_segment = prefix(&[Value::Array(vec![Value::Int(1), Value::Int(2)])]);
        same_segment = prefix(&[Value::Array(vec![Value::Int(5), Value::Int(9)])]);
        assert_eq!(pool_key(&other_segment), pool_key(&same_segment));
        let longer = prefix(&[Value::Array(vec![Value::Int(5); 3])]);
        assert_ne!(pool_key(&longer), pool_key(&same_segment));
        let typed = prefix(&[Value::Handle(HandleKind::Datatype, HandleRef::Named(5))]);
        let other_type = prefix(&[Value::Handle(HandleKind::Datatype, HandleRef::Named(6))]);
        assert_ne!(pool_key(&typed), pool_key(&other_type));
    }
}
