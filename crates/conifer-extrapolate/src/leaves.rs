//! A recorded call (or a rank's communicator list) split into its *shape* — everything that
//! must be the same in every rank of a class at every P — and its *leaves*, the integers that
//! may vary and are fitted: integers, ranks relative to the caller or absolute, buffer
//! offsets, status fields, coordinates; a membership's rank and grid extents.

use conifer_trace::decode::Signature;
use conifer_trace::rank::Rank;
use conifer_format::membership::Membership;
use conifer_trace::value::{Buffer, Value};

/// Calls `f` on every leaf of `v`, in a fixed order.
fn visit(v: &mut Value, f: &mut impl FnMut(&mut i64)) {
    match v {
        Value::Int(x) | Value::Buffer(Buffer::Stack { offset: x }) => f(x),
        Value::Buffer(Buffer::Segment { offset, .. }) => f(offset),
        Value::Rank(r) => visit_rank(r, f),
        Value::Array(items) => items.iter_mut().for_each(|i| visit(i, f)),
        Value::Status(s) => {
            visit_rank(&mut s.source, f);
            f(&mut s.tag);
            f(&mut s.error);
            f(&mut s.bytes);
        }
        Value::Coords(c) => c.iter_mut().for_each(f),
        _ => {}
    }
}

fn visit_rank(r: &mut Rank, f: &mut impl FnMut(&mut i64)) {
    match r {
        Rank::Relative(x) | Rank::Absolute(x) | Rank::Grid(x) => f(x),
        _ => {}
    }
}

/// `signature` with its leaves set to 0, and the leaves.
pub fn split_call(signature: &Signature) -> (Signature, Vec<i64>) {
    let mut shape = signature.clone();
    let mut leaves = Vec::new();
    for v in &mut shape.values {
        visit(v, &mut |x| leaves.push(std::mem::take(x)));
    }
    (shape, leaves)
}

/// For each leaf of `shape`, the index of the value it lies in.
pub fn leaf_values(shape: &Signature) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, v) in shape.values.iter().enumerate() {
        visit(&mut v.clone(), &mut |_| out.push(i));
    }
    out
}

/// The signature of `shape` with `leaves` in their places.
pub fn fill_call(shape: &Signature, leaves: &[i64]) -> Signature {
    let mut out = shape.clone();
    let mut next = leaves.iter();
    for v in &mut out.values {
        visit(v, &mut |x| *x = next.next().copied().unwrap_or(0));
    }
    out
}

/// The leaves of a list of memberships: each one's rank, then its grid's extents.
pub fn split_comms(comms: &[Membership]) -> (Vec<u8>, Vec<i64>) {
    let mut key = Vec::new();
    let mut leaves = Vec::new();
    for m in comms {
        key.extend((m.comm.len() as u32).to_le_bytes());
        key.extend(&m.comm);
        leaves.push(m.my_rank);
        match &m.grid {
            None => key.push(0),
            Some(g) => {
                key.push(1);
                key.extend(g.periods.iter().map(|&p| u8::from(p)));
                key.push(2);
                leaves.extend(&g.dims);
            }
        }
    }
    (key, leaves)
}

/// `template` (a membership list with the same key) with `leaves` in their places.
pub fn fill_comms(template: &[Membership], leaves: &[i64]) -> Vec<Membership> {
    let mut next = leaves.iter().copied();
    template
        .iter()
        .map(|m| {
            let my_rank = next.next().unwrap_or(0);
            let grid = m.grid.as_ref().map(|g| {
                let mut g = g.clone();
                g.dims.iter_mut().for_each(|d| *d = next.next().unwrap_or(1));
                g
            });
            Membership {
                comm: m.comm.clone(),
                my_rank,
                grid,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_trace::value::Status;

    #[test]
    fn split_and_fill_give_back_the_call() {
        let sig = Signature {
            function: 3,
            thread: 0,
            caller: None,
            values: vec![
                Value::Buffer(Buffer::Segment { id: 2, offset: 64 }),
                Value::Int(8),
                Value::Rank(Rank::Relative(-3)),
                Value::Rank(Rank::ProcNull),
                Value::Array(vec![Value::Int(3), Value::Int(4)]),
                Value::Status(Status {
                    source: Rank::Relative(1),
                    tag: 7,
                    error: 0,
                    bytes: 64,
                }),
            ],
            ret: 0,
        };
        let (shape, leaves) = split_call(&sig);
        assert_eq!(leaves, vec![64, 8, -3, 3, 4, 1, 7, 0, 64]);
        assert_eq!(shape.values[3], Value::Rank(Rank::ProcNull));
        assert_eq!(fill_call(&shape, &leaves), sig);
    }
}
