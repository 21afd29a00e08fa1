//! A recorded call (or a rank's communicator list) split into its *shape* — everything that
//! must be the same in every rank of a class at every P — and its *leaves*, the integers that
//! may vary and are fitted: integers, ranks relative to the caller or absolute, buffer
//! offsets, status fields, coordinates; a membership's rank and grid extents.

use conifer_compress::fast_hash::FastMap;
use conifer_format::grid::Grid;
use conifer_format::membership::Membership;
use conifer_trace::decode::Signature;
use conifer_trace::rank::Rank;
use conifer_trace::value::{Buffer, Value};

/// A leaf as [`visit`] finds it.
enum Leaf<'a> {
    /// A number fitted as it is.
    Num(&'a mut i64),
    /// A peer of a Cartesian communicator: a packed grid displacement (see
    /// [`Grid::displacement`]), whose per-dimension offsets are what is fitted.
    Grid(&'a mut i64),
}

/// Calls `f` on every leaf of `v`, in a fixed order.
fn visit(v: &mut Value, f: &mut impl FnMut(Leaf)) {
    match v {
        Value::Int(x) | Value::Buffer(Buffer::Stack { offset: x }) => f(Leaf::Num(x)),
        Value::Buffer(Buffer::Segment { offset, .. }) => f(Leaf::Num(offset)),
        Value::Rank(r) => visit_rank(r, f),
        Value::Array(items) => items.iter_mut().for_each(|i| visit(i, f)),
        Value::Status(s) => {
            visit_rank(&mut s.source, f);
            f(Leaf::Num(&mut s.tag));
            f(Leaf::Num(&mut s.error));
            f(Leaf::Num(&mut s.bytes));
        }
        Value::Coords(c) => c.iter_mut().for_each(|x| f(Leaf::Num(x))),
        _ => {}
    }
}

fn visit_rank(r: &mut Rank, f: &mut impl FnMut(Leaf)) {
    match r {
        Rank::Relative(x) | Rank::Absolute(x) => f(Leaf::Num(x)),
        Rank::Grid(x) => f(Leaf::Grid(x)),
        _ => {}
    }
}

/// The grid of each Cartesian communicator a rank belongs to, by its encoded handle.
pub type Grids = FastMap<Vec<u8>, Grid>;

/// The grids of `comms`.
pub fn grids(comms: &[Membership]) -> Grids {
    comms
        .iter()
        .filter_map(|m| Some((m.comm.clone(), m.grid.clone()?)))
        .collect()
}

/// The grid each value of `signature` is relative to, if any.
fn value_grids<'g>(signature: &Signature, grids: &'g Grids) -> Vec<Option<&'g Grid>> {
    signature
        .contexts()
        .into_iter()
        .map(|c| {
            let mut key = Vec::new();
            c?.encode(&mut key);
            grids.get(&key)
        })
        .collect()
}

/// The leaves of a call or of a rank's communicator list: their values and, per value, the
/// extent it is known modulo — an offset along a periodic grid dimension, where +1 and −1 are
/// one neighbour on an extent of 2 — or 0 for a value known exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Leaves {
    /// The values, in the order the call's fields hold them.
    pub values: Vec<i64>,
    /// Per value, its modulus (0: exact).
    pub moduli: Vec<i64>,
}

impl Leaves {
    fn push(&mut self, value: i64, modulus: i64) {
        self.values.push(value);
        self.moduli.push(modulus);
    }
}

/// `signature` with its leaves set to 0, and the leaves. A grid displacement becomes its
/// per-dimension offsets (the shape keeps their count in its place), so that a neighbour
/// "one up" is the same leaves on every grid; an offset along a periodic dimension is known
/// modulo that dimension's extent.
pub fn split_call(signature: &Signature, grids: &Grids) -> (Signature, Leaves) {
    let mut shape = signature.clone();
    let contexts = value_grids(signature, grids);
    let mut leaves = Leaves::default();
    for (v, grid) in shape.values.iter_mut().zip(contexts) {
        visit(v, &mut |leaf| match leaf {
            Leaf::Num(x) => leaves.push(std::mem::take(x), 0),
            Leaf::Grid(x) => match grid.and_then(|g| Some((g, g.unpack(*x)?))) {
                Some((g, offsets)) => {
                    *x = offsets.len() as i64;
                    for (o, (&d, &periodic)) in offsets.iter().zip(g.dims.iter().zip(&g.periods)) {
                        leaves.push(*o, if periodic { d } else { 0 });
                    }
                }
                None => leaves.push(std::mem::take(x), 0),
            },
        });
    }
    (shape, leaves)
}

/// The signature of `shape` with `leaves` in their places, grid offsets packed on `grids`
/// (the caller's grids at the rank count built); `None` when offsets do not fit a grid.
pub fn fill_call(shape: &Signature, leaves: &[i64], grids: &Grids) -> Option<Signature> {
    let mut out = shape.clone();
    let contexts = value_grids(shape, grids);
    let mut next = leaves.iter().copied();
    let mut ok = true;
    for (v, grid) in out.values.iter_mut().zip(contexts) {
        visit(v, &mut |leaf| match leaf {
            Leaf::Num(x) => *x = next.next().unwrap_or(0),
            Leaf::Grid(x) if *x == 0 => *x = next.next().unwrap_or(0),
            Leaf::Grid(x) => {
                let offsets: Vec<i64> = next.by_ref().take(*x as usize).collect();
                match grid.and_then(|g| g.pack(&g.shortest(&offsets))) {
                    Some(packed) => *x = packed,
                    None => ok = false,
                }
            }
        });
    }
    ok.then_some(out)
}

/// For each leaf of `shape`, the index of the value it lies in.
pub fn leaf_values(shape: &Signature) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, v) in shape.values.iter().enumerate() {
        visit(&mut v.clone(), &mut |leaf| match leaf {
            Leaf::Grid(n) if *n > 0 => out.extend(std::iter::repeat_n(i, *n as usize)),
            _ => out.push(i),
        });
    }
    out
}

/// The leaves of a list of memberships: each one's rank, then its grid's extents.
pub fn split_comms(comms: &[Membership]) -> (Vec<u8>, Leaves) {
    let mut key = Vec::new();
    let mut leaves = Leaves::default();
    for m in comms {
        key.extend((m.comm.len() as u32).to_le_bytes());
        key.extend(&m.comm);
        leaves.push(m.my_rank, 0);
        match &m.grid {
            None => key.push(0),
            Some(g) => {
                key.push(1);
                key.extend(g.periods.iter().map(|&p| u8::from(p)));
                key.push(2);
                g.dims.iter().for_each(|&d| leaves.push(d, 0));
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
                g.dims
                    .iter_mut()
                    .for_each(|d| *d = next.next().unwrap_or(1));
                g
            });
            // Leaders are not extrapolated (the world rank of a sub-communicator's local rank
            // 0 is often a product of grid coordinates and extents, which no fitted form
            // expresses): readers place the members of an extrapolated trace's communicators
            // in world-rank order, as for memberships recorded without a leader.
            Membership {
                comm: m.comm.clone(),
                my_rank,
                grid,
                leader: None,
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
        let none = Grids::default();
        let (shape, leaves) = split_call(&sig, &none);
        assert_eq!(leaves.values, vec![64, 8, -3, 3, 4, 1, 7, 0, 64]);
        assert_eq!(leaves.moduli, vec![0; 9]);
        assert_eq!(shape.values[3], Value::Rank(Rank::ProcNull));
        assert_eq!(fill_call(&shape, &leaves.values, &none), Some(sig));
    }
}
