//! Unit tests of call evaluation: point-to-point peers, collectives' definitions and
//! derived datatype sizes.

use super::*;
use crate::types::TypeSizes;
use conifer_trace::value::{Buffer, HandleKind, HandleRef, Position, Rank};

/// Rank `me` of an `n`-rank MPI_COMM_WORLD.
struct World {
    me: u32,
    n: u32,
    types: TypeSizes,
}

impl Caller for World {
    fn world(&self) -> u32 {
        self.me
    }
    fn position(&self, _: &Value) -> Option<(Position<'_>, u32)> {
        Some((
            Position {
                rank: i64::from(self.me),
                grid: None,
            },
            self.n,
        ))
    }
    fn member(&self, _: &Value, local: i64) -> Option<u32> {
        u32::try_from(local).ok().filter(|&l| l < self.n)
    }
    fn types(&self) -> &TypeSizes {
        &self.types
    }
    fn window_comm(&self, _: &Value) -> Option<&Value> {
        None
    }
    fn persistent(&self, _: &Value) -> Option<&Effect> {
        None
    }
}

fn world(me: u32, n: u32) -> World {
    World {
        me,
        n,
        types: TypeSizes::default(),
    }
}

const DOUBLE: Value = Value::Handle(HandleKind::Datatype, HandleRef::Named(14));
const INT: Value = Value::Handle(HandleKind::Datatype, HandleRef::Named(3));
const WORLD: Value = Value::Handle(HandleKind::Comm, HandleRef::Named(1));

fn call(name: &str, slots: &[(&str, Value)], caller: &World) -> Effect {
    let names: Vec<String> = slots.iter().map(|s| s.0.to_string()).collect();
    let values: Vec<Value> = slots.iter().map(|s| s.1.clone()).collect();
    evaluate(
        &Args {
            name,
            slots: &names,
            values: &values,
        },
        caller,
    )
}

/// Rooted collective `name` of `count` ints to or from rank `root`, called by rank `me` of
/// a 4-rank MPI_COMM_WORLD.
fn rooted(name: &str, count: i64, root: i64, me: u32) -> Effect {
    call(
        name,
        &[
            ("count", Value::Int(count)),
            ("datatype", INT),
            ("root", Value::Rank(Rank::Absolute(root))),
            ("comm", WORLD),
        ],
        &world(me, 4),
    )
}

fn edges(e: &Effect) -> Vec<(u32, u32, u64)> {
    let mut v: Vec<_> = e.edges.iter().map(|e| (e.from, e.to, e.bytes)).collect();
    v.sort_unstable();
    v
}

#[test]
fn sends_go_to_the_restored_peer() {
    let e = call(
        "MPI_Isend",
        &[
            ("buf", Value::Buffer(Buffer::Null)),
            ("count", Value::Int(8)),
            ("datatype", DOUBLE),
            ("dest", Value::Rank(Rank::Modular { n: 4, d: 1 })),
            ("tag", Value::Int(0)),
            ("comm", WORLD),
        ],
        &world(3, 4),
    );
    assert_eq!(edges(&e), vec![(3, 0, 64)]);
    assert_eq!((e.sent, e.received, e.size), (64, 0, Some(64)));
    let null = call(
        "MPI_Send",
        &[
            ("count", Value::Int(8)),
            ("datatype", DOUBLE),
            ("dest", Value::Rank(Rank::ProcNull)),
            ("comm", WORLD),
        ],
        &world(0, 4),
    );
    assert!(null.edges.is_empty());
    assert_eq!(null.sent, 0);
}

#[test]
fn collectives_follow_their_definitions() {
    // Bcast of 2 ints from root 1: a non-root receives 8 B from the root; the root adds
    // nothing itself but sends 8 B to each of the 3 others.
    let bcast = |me| rooted("MPI_Bcast", 2, 1, me);
    assert_eq!(edges(&bcast(2)), vec![(1, 2, 8)]);
    assert_eq!((bcast(2).sent, bcast(2).received), (0, 8));
    assert!(bcast(1).edges.is_empty());
    assert_eq!(bcast(1).sent, 24);
    // Alltoallv: counts[j] doubles to each j but the caller.
    let a2a = call(
        "MPI_Alltoallv",
        &[
            ("sendbuf", Value::Buffer(Buffer::Null)),
            (
                "sendcounts",
                Value::Array(vec![Value::Int(1), Value::Int(2), Value::Int(3)]),
            ),
            ("sendtype", DOUBLE),
            (
                "recvcounts",
                Value::Array(vec![Value::Int(1), Value::Int(1), Value::Int(1)]),
            ),
            ("recvtype", DOUBLE),
            ("comm", WORLD),
        ],
        &world(1, 3),
    );
    assert_eq!(edges(&a2a), vec![(1, 0, 8), (1, 2, 24)]);
    assert_eq!((a2a.sent, a2a.received), (32, 16));
    // Scan: to every higher rank.
    let scan = call(
        "MPI_Iscan",
        &[
            ("count", Value::Int(1)),
            ("datatype", DOUBLE),
            ("comm", WORLD),
        ],
        &world(1, 4),
    );
    assert_eq!(edges(&scan), vec![(1, 2, 8), (1, 3, 8)]);
    // Reduce to root 0 from rank 2; the root receives from the 3 others.
    let reduce = |me| rooted("MPI_Reduce", 4, 0, me);
    assert_eq!(edges(&reduce(2)), vec![(2, 0, 16)]);
    assert_eq!(reduce(0).received, 48);
    // Allgather in place: the caller's own block, recvcount, to everyone else.
    let ag = call(
        "MPI_Allgather",
        &[
            ("sendbuf", Value::Buffer(Buffer::InPlace)),
            ("sendcount", Value::Int(0)),
            (
                "sendtype",
                Value::Handle(HandleKind::Datatype, HandleRef::Named(0)),
            ),
            ("recvcount", Value::Int(3)),
            ("recvtype", INT),
            ("comm", WORLD),
        ],
        &world(0, 3),
    );
    assert_eq!(edges(&ag), vec![(0, 1, 12), (0, 2, 12)]);
    let barrier = call("MPI_Barrier", &[("comm", WORLD)], &world(0, 3));
    assert!(barrier.edges.is_empty() && barrier.size.is_none());
}

#[test]
fn derived_types_take_their_constructors_sizes() {
    let new = |id| Value::Handle(HandleKind::Datatype, HandleRef::Id(id));
    let names = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let vector = (
        names(&["count", "blocklength", "stride", "oldtype", "newtype"]),
        vec![Value::Int(8), Value::Int(1), Value::Int(8), DOUBLE, new(0)],
    );
    // A struct of {int, 3 doubles, 6 chars} and a contiguous type of 2 such structs.
    let structure = (
        names(&[
            "count",
            "array_of_blocklengths",
            "array_of_displacements",
            "array_of_types",
            "newtype",
        ]),
        vec![
            Value::Int(3),
            Value::Array(vec![Value::Int(1), Value::Int(3), Value::Int(6)]),
            Value::Array(vec![Value::Int(0), Value::Int(8), Value::Int(32)]),
            Value::Array(vec![
                INT,
                DOUBLE,
                Value::Handle(HandleKind::Datatype, HandleRef::Named(1)),
            ]),
            new(1),
        ],
    );
    let contiguous = (
        names(&["count", "oldtype", "newtype"]),
        vec![Value::Int(2), new(1), new(2)],
    );
    // Given in an order where the contiguous type comes before the struct it is made of.
    let calls = [
        ("MPI_Type_contiguous", &contiguous),
        ("MPI_Type_vector", &vector),
        ("MPI_Type_create_struct", &structure),
    ];
    let sizes = TypeSizes::from_calls(calls.iter().map(|(name, (slots, values))| Args {
        name,
        slots,
        values,
    }));
    assert_eq!(sizes.size(&new(0)), Some(64));
    assert_eq!(sizes.size(&new(1)), Some(34));
    assert_eq!(sizes.size(&new(2)), Some(68));
    assert_eq!(sizes.size(&new(3)), None);
}
