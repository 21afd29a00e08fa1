//! A signature's family key for stream extraction, read straight from its bytes: the
//! signature with every streamable leaf (integers, segment buffers and statuses, at the top
//! level and in arrays; the return value excepted) replaced by its placeholder — the bytes
//! `encode_signature` gives for the signature so blanked, without parsing it into values.

use conifer_format::caller::Caller;
use conifer_format::value::{Buffer, Value, ARRAY_TAG};
use conifer_format::varint::{put_u64, Reader};

/// What [`family_key`] found.
pub enum Key {
    /// The key was written; this many leaves were blanked.
    Leaves(usize),
    /// A completion skeleton (its streams are the recorder's): no key.
    Completion,
}

/// Writes the family key of signature `sig` into `out`; `None` when `sig` is malformed.
pub fn family_key(sig: &[u8], out: &mut Vec<u8>) -> Option<Key> {
    let mut r = Reader::new(sig);
    r.u64()?;
    r.u32()?;
    Caller::decode_if_present(&mut r)?;
    let header = sig.len() - r.remaining();
    // The return value is the last value, kept as it is.
    let mut last = header;
    while r.remaining() > 0 {
        last = sig.len() - r.remaining();
        Value::skip(&mut r)?;
    }
    if last == header
        || !matches!(
            Value::decode(&mut Reader::new(&sig[last..])),
            Some(Value::Int(_))
        )
    {
        return None;
    }
    out.clear();
    out.extend_from_slice(&sig[..header]);
    let values = &sig[header..last];
    let mut r = Reader::new(values);
    let mut leaves = 0;
    while r.remaining() > 0 {
        if !blank(values, &mut r, out, &mut leaves)? {
            return Some(Key::Completion);
        }
    }
    out.extend_from_slice(&sig[last..]);
    Some(Key::Leaves(leaves))
}

/// Appends the next value of `r`, a reader over `values`, with its leaves blanked; false for a
/// completion placeholder.
fn blank(values: &[u8], r: &mut Reader, out: &mut Vec<u8>, leaves: &mut usize) -> Option<bool> {
    if r.peek()? == ARRAY_TAG {
        r.byte()?;
        let n = r.count()?;
        out.push(ARRAY_TAG);
        put_u64(out, n as u64);
        for _ in 0..n {
            if !blank(values, r, out, leaves)? {
                return Some(false);
            }
        }
        return Some(true);
    }
    let start = values.len() - r.remaining();
    let value = Value::decode(r)?;
    let placeholder = match value {
        Value::Int(_) => Value::StreamedInt,
        Value::Buffer(Buffer::Segment { id, .. }) => Value::StreamedOffset(id),
        Value::Status(s) => Value::StreamedStatus(s.source, s.error),
        Value::StreamedRequests(..) | Value::StreamedOutputs => return Some(false),
        _ => {
            out.extend_from_slice(&values[start..values.len() - r.remaining()]);
            return Some(true);
        }
    };
    *leaves += 1;
    placeholder.encode(out);
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_format::signature::{encode_signature, Signature};
    use conifer_format::value::{HandleKind, HandleRef, Rank, Status};

    /// The key is `encode_signature` of the signature with its leaves replaced by hand.
    #[test]
    fn the_key_is_the_blanked_signature() {
        let status = Status {
            source: Rank::Relative(1),
            tag: 4,
            error: 0,
            bytes: 16,
        };
        let values = vec![
            Value::Buffer(Buffer::Segment { id: 3, offset: 800 }),
            Value::Int(-5),
            Value::Str("name".into()),
            Value::Array(vec![Value::Int(7), Value::Opaque, Value::Status(status)]),
            Value::Handle(HandleKind::Comm, HandleRef::Named(1)),
        ];
        let blanked = vec![
            Value::StreamedOffset(3),
            Value::StreamedInt,
            Value::Str("name".into()),
            Value::Array(vec![
                Value::StreamedInt,
                Value::Opaque,
                Value::StreamedStatus(Rank::Relative(1), 0),
            ]),
            Value::Handle(HandleKind::Comm, HandleRef::Named(1)),
        ];
        let sig = |values| Signature {
            function: 300,
            thread: 1,
            caller: None,
            values,
            ret: 0,
        };
        let mut key = Vec::new();
        let found = family_key(&encode_signature(&sig(values)), &mut key);
        assert!(matches!(found, Some(Key::Leaves(4))));
        assert_eq!(key, encode_signature(&sig(blanked)));
        let skeleton = encode_signature(&sig(vec![Value::StreamedOutputs]));
        assert!(matches!(
            family_key(&skeleton, &mut key),
            Some(Key::Completion)
        ));
        assert!(family_key(&[1, 2, 0xff], &mut key).is_none());
    }
}
