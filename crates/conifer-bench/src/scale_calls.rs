//! The MPI calls of the scale suite's generated ranks, with their arguments encoded as the
//! recorder encodes them: predefined handles by index, request handles by slot, buffers as
//! segment offsets, peers relative to the caller on a plain communicator, grid displacements
//! on a Cartesian one, and the special ranks by name.

use conifer_format::grid::Grid;
use conifer_format::value::REQUEST_LOCAL_BITS;
use conifer_format::value::{Buffer, HandleKind, HandleRef, Rank, Status, Value};

/// One call of a generated rank: the function, its recorded values (without the return
/// value, always `MPI_SUCCESS`), the computation before it and its own duration.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// C name of the MPI function.
    pub function: &'static str,
    /// Recorded argument values, in slot order.
    pub values: Vec<Value>,
    /// Computation since the previous call (ns).
    pub interval_ns: f64,
    /// Time inside the call (ns).
    pub duration_ns: f64,
}

/// `MPI_COMM_WORLD`.
pub fn world() -> Value {
    Value::Handle(HandleKind::Comm, HandleRef::Named(1))
}

/// A communicator the program created, by its symbolic id.
pub fn user_comm(id: u32) -> Value {
    Value::Handle(HandleKind::Comm, HandleRef::Id(id))
}

/// `MPI_DOUBLE`.
pub fn double() -> Value {
    Value::Handle(HandleKind::Datatype, HandleRef::Named(14))
}

fn request(slot: u32) -> Value {
    Value::Handle(
        HandleKind::Request,
        HandleRef::Id(slot << REQUEST_LOCAL_BITS),
    )
}

fn heap(offset: i64) -> Value {
    Value::Buffer(Buffer::Segment { id: 0, offset })
}

/// A peer as the recorder stores it: `MPI_PROC_NULL` for none, a grid displacement on a
/// Cartesian communicator, else the offset from the caller.
pub fn peer(me: i64, to: Option<i64>, grid: Option<&Grid>) -> Value {
    Value::Rank(match (to, grid) {
        (None, _) => Rank::ProcNull,
        (Some(to), Some(g)) => Rank::Grid(g.displacement(me, to).expect("peer on the grid")),
        (Some(to), None) => Rank::Relative(to - me),
    })
}

/// Builds a rank's calls with the recorder's conventions (request slots reused per batch).
#[derive(Default)]
pub struct Calls {
    /// The calls so far.
    pub calls: Vec<Call>,
    pending: u32,
}

/// Duration of a call that only posts or completes locally (ns).
const LOCAL_NS: f64 = 250.0;
/// Duration of a blocking exchange or collective (ns).
const BLOCKING_NS: f64 = 2_000.0;

impl Calls {
    fn push(&mut self, function: &'static str, values: Vec<Value>, interval: f64, dur: f64) {
        self.calls.push(Call {
            function,
            values,
            interval_ns: interval,
            duration_ns: dur,
        });
    }

    /// `MPI_Init`, `MPI_Comm_rank` and `MPI_Comm_size` on `MPI_COMM_WORLD` of `size` ranks.
    pub fn start(&mut self, size: i64) {
        self.push("MPI_Init", vec![Value::Opaque, Value::Opaque], 0.0, 1e5);
        let me = Value::Rank(Rank::Relative(0));
        self.push("MPI_Comm_rank", vec![world(), me], 100.0, 80.0);
        let n = Value::Int(size);
        self.push("MPI_Comm_size", vec![world(), n], 100.0, 80.0);
    }

    /// `MPI_Cart_create` of `grid` from `MPI_COMM_WORLD` as communicator `id`.
    pub fn cart_create(&mut self, grid: &Grid, id: u32) {
        let dims = grid.dims.iter().map(|&d| Value::Int(d)).collect();
        let periods = grid.periods.iter().map(|&p| Value::Int(p.into())).collect();
        let values = vec![
            world(),
            Value::Int(grid.dims.len() as i64),
            Value::Array(dims),
            Value::Array(periods),
            Value::Int(0),
            user_comm(id),
        ];
        self.push("MPI_Cart_create", values, 100.0, BLOCKING_NS);
    }

    /// `MPI_Comm_split` of `MPI_COMM_WORLD` by `color` (key 0) into communicator `id`, or
    /// `MPI_COMM_NULL` when `color` is `None` (`MPI_UNDEFINED`).
    pub fn split(&mut self, color: Option<i64>, id: u32) {
        let (color, out) = match color {
            Some(c) => (Value::Int(c), user_comm(id)),
            None => (
                Value::Rank(Rank::Undefined),
                Value::Handle(HandleKind::Comm, HandleRef::Named(0)),
            ),
        };
        let values = vec![world(), color, Value::Int(0), out];
        self.push("MPI_Comm_split", values, 100.0, BLOCKING_NS);
    }

    /// `MPI_Irecv` of `count` doubles from `from` (a recorded peer) with `tag` on `comm`.
    pub fn irecv(&mut self, at: i64, count: i64, from: Value, tag: i64, comm: &Value) {
        self.nonblocking("MPI_Irecv", at, count, from, tag, comm);
    }

    /// `MPI_Isend` of `count` doubles to `to` with `tag` on `comm`.
    pub fn isend(&mut self, at: i64, count: i64, to: Value, tag: i64, comm: &Value) {
        self.nonblocking("MPI_Isend", at, count, to, tag, comm);
    }

    /// A nonblocking point-to-point call of `count` doubles at heap offset `at` with `peer`,
    /// `tag` on `comm`, taking the next request slot.
    fn nonblocking(
        &mut self,
        name: &'static str,
        at: i64,
        count: i64,
        peer: Value,
        tag: i64,
        comm: &Value,
    ) {
        let slot = self.pending;
        self.pending += 1;
        let values = vec![
            heap(at),
            Value::Int(count),
            double(),
            peer,
            Value::Int(tag),
            comm.clone(),
            request(slot),
        ];
        self.push(name, values, 100.0, LOCAL_NS);
    }

    /// `MPI_Waitall` on every request posted since the last one (`MPI_STATUSES_IGNORE`).
    pub fn waitall(&mut self) {
        let reqs = (0..self.pending).map(request).collect();
        let values = vec![
            Value::Int(self.pending.into()),
            Value::Array(reqs),
            Value::Ignored,
        ];
        self.pending = 0;
        self.push("MPI_Waitall", values, 100.0, BLOCKING_NS);
    }

    /// `MPI_Send` of `count` doubles.
    pub fn send(&mut self, count: i64, to: Value, tag: i64, comm: &Value, interval: f64) {
        let values = vec![
            heap(0),
            Value::Int(count),
            double(),
            to,
            Value::Int(tag),
            comm.clone(),
        ];
        self.push("MPI_Send", values, interval, LOCAL_NS);
    }

    /// `MPI_Recv` of up to `count` doubles from `from`, with the status the call returned.
    pub fn recv(&mut self, count: i64, from: Value, tag: i64, comm: &Value, status: Status) {
        let values = vec![
            heap(1 << 20),
            Value::Int(count),
            double(),
            from,
            Value::Int(tag),
            comm.clone(),
            Value::Status(status),
        ];
        self.push("MPI_Recv", values, 100.0, BLOCKING_NS);
    }

    /// `MPI_Allreduce` of one double (sum) on `comm`, after `compute_ns` of computation.
    pub fn allreduce(&mut self, comm: &Value, compute_ns: f64) {
        let values = vec![
            Value::Buffer(Buffer::Stack { offset: 144 }),
            Value::Buffer(Buffer::Stack { offset: 152 }),
            Value::Int(1),
            double(),
            Value::Handle(HandleKind::Op, HandleRef::Named(3)),
            comm.clone(),
        ];
        self.push("MPI_Allreduce", values, compute_ns, BLOCKING_NS);
    }

    /// `MPI_Finalize`.
    pub fn finish(&mut self) {
        self.push("MPI_Finalize", Vec::new(), 100.0, 1e4);
    }
}
