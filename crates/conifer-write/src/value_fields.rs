//! The integer fields of a signature that per-rank value columns may hold
//! (`value_columns`): integers (at the top level and in arrays), a status's tag and received
//! bytes, a buffer's offset in its segment and a created handle's symbolic id. Both functions
//! walk a signature's values in the same order, so the k-th field [`blank`] takes out is the
//! k-th [`fill`] puts back.

use conifer_format::value::{Buffer, HandleRef, Value};

/// Takes every field of `values` out, in walk order, into `out`, leaving 0 in its place (the
/// signature's *skeleton*: what ranks that differ only in these fields share).
pub(crate) fn blank(values: &mut [Value], out: &mut Vec<i64>) {
    for v in values {
        blank_value(v, out);
    }
}

fn blank_value(v: &mut Value, out: &mut Vec<i64>) {
    match v {
        Value::Int(x) => out.push(std::mem::take(x)),
        Value::Array(items) => blank(items, out),
        Value::Status(s) => {
            out.push(std::mem::take(&mut s.tag));
            out.push(std::mem::take(&mut s.bytes));
        }
        Value::Buffer(Buffer::Segment { offset, .. }) => out.push(std::mem::take(offset)),
        Value::Handle(_, HandleRef::Id(id)) => out.push(i64::from(std::mem::take(id))),
        _ => {}
    }
}

/// Puts per-rank values (each [`Value::Int`], [`Value::RankAffine`] or
/// [`Value::RankColumn`], in walk order) into the fields of `values`: a field whose value is
/// an integer keeps its plain form, the others take the per-rank forms (tags 13, 16-19).
pub(crate) fn fill(values: &mut [Value], fields: &mut impl Iterator<Item = Value>) {
    for v in values {
        fill_value(v, fields);
    }
}

fn fill_value(v: &mut Value, fields: &mut impl Iterator<Item = Value>) {
    let mut next = || fields.next().expect("one value per field");
    let filled = match v {
        Value::Int(_) => next(),
        Value::Array(items) => return fill(items, fields),
        Value::Status(s) => match (next(), next()) {
            (Value::Int(tag), Value::Int(bytes)) => {
                s.tag = tag;
                s.bytes = bytes;
                return;
            }
            (tag, bytes) => Value::RankStatus {
                source: s.source,
                error: s.error,
                tag: Box::new(tag),
                bytes: Box::new(bytes),
            },
        },
        Value::Buffer(Buffer::Segment { id, .. }) => match next() {
            Value::Int(offset) => Value::Buffer(Buffer::Segment { id: *id, offset }),
            offset => Value::RankBuffer {
                id: *id,
                offset: Box::new(offset),
            },
        },
        Value::Handle(kind, HandleRef::Id(_)) => match next() {
            Value::Int(id) => Value::Handle(*kind, HandleRef::Id(id as u32)),
            id => Value::RankHandle {
                kind: *kind,
                id: Box::new(id),
            },
        },
        _ => return,
    };
    *v = filled;
}
