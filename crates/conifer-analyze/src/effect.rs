//! What one call does in data terms: bytes it sends and receives, the (sender, receiver,
//! bytes) entries it adds to the rank × rank matrix, and its message size for histograms.
//!
//! The matrix rule for collectives (also in the README and `conifer matrix --help`): a
//! collective adds, for each ordered pair of distinct members (i, j), the bytes member i
//! contributes to member j under the collective's standard definition, whatever algorithm the
//! MPI library used. Each rank adds only the entries its own arguments determine:
//!
//! | collective | entries the caller `me` adds (`n` members, root `ρ`, sizes in bytes) |
//! |---|---|
//! | Bcast | non-root: ρ → me, count |
//! | Reduce | non-root: me → ρ, count |
//! | Allreduce | me → j for every j ≠ me, count |
//! | Gather(v) | non-root: me → ρ, sendcount |
//! | Scatter(v) | non-root: ρ → me, recvcount |
//! | Allgather(v) | me → j for every j ≠ me, sendcount (recvcount(s)[me] in place) |
//! | Alltoall | me → j, sendcount (recvcount in place) |
//! | Alltoallv / Alltoallw | me → j, sendcounts[j] (× sendtypes[j]) |
//! | Reduce_scatter(_block) | me → j, recvcounts[j] (recvcount) |
//! | Scan / Exscan | me → j for every j > me, count |
//! | Barrier, others | nothing |
//!
//! Non-blocking (`I…`) and persistent (`…_init`) collectives count like the blocking ones,
//! at the call that starts them. A *message* is one matrix entry of one call; a
//! point-to-point message of 0 bytes is still one, a collective's entry of 0 bytes is not.

use crate::call::Args;
use crate::types::TypeSizes;
use conifer_trace::value::{Buffer, HandleKind, HandleRef, Position, Rank, Value};
use serde::Serialize;

/// Point-to-point (including one-sided) or collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Sends, receives, `MPI_Put`/`MPI_Get`/accumulates.
    P2p,
    /// Collectives.
    Coll,
}

/// One matrix entry a call adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// Sender (world rank).
    pub from: u32,
    /// Receiver (world rank).
    pub to: u32,
    /// Bytes.
    pub bytes: u64,
    /// Kind of call.
    pub kind: Kind,
}

/// What one call does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Effect {
    /// Bytes the caller sends (all destinations).
    pub sent: u64,
    /// Bytes the caller receives (the posted receive sizes).
    pub received: u64,
    /// Matrix entries.
    pub edges: Vec<Edge>,
    /// The call's message size (bytes of its send buffer, else of its receive buffer), for
    /// histograms; `None` for calls that move no data.
    pub size: Option<u64>,
    /// True when the call moves data to or from peers the analysis could not name (an
    /// inter-communicator, an unknown communicator or datatype): its bytes are counted as
    /// far as known, its matrix entries are missing.
    pub unresolved: bool,
    /// The communicator the call names, as the decoder prints it.
    pub comm: Option<String>,
}

/// What the analysis needs to know about the caller to evaluate its calls.
pub trait Caller {
    /// The caller's world rank.
    fn world(&self) -> u32;
    /// The caller's position in communicator `comm` and the communicator's size.
    fn position(&self, comm: &Value) -> Option<(Position<'_>, u32)>;
    /// World rank of the member `local` of communicator `comm` (as the caller knows it).
    fn member(&self, comm: &Value, local: i64) -> Option<u32>;
    /// The caller's datatype sizes.
    fn types(&self) -> &TypeSizes;
    /// The communicator window `win` was created over.
    fn window_comm(&self, win: &Value) -> Option<&Value>;
    /// The effects of the persistent operations request `req` starts.
    fn persistent(&self, req: &Value) -> Option<&Effect>;
    /// For inter-communicator `comm`: the caller's rank in its local group and the world
    /// ranks of the remote group, by rank, when known.
    fn remote(&self, _comm: &Value) -> Option<(i64, &[Option<u32>])> {
        None
    }
}

/// The peer a rank value names, as a rank of the communicator the caller stands in at `at`.
pub fn local_peer(rank: &Rank, at: Position) -> Option<i64> {
    match *rank {
        Rank::Grid(d) => at.grid?.displaced(at.rank, d),
        Rank::Absolute(a) => Some(a),
        r => r.peer_of(at.rank),
    }
}

fn is_in_place(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Buffer(Buffer::InPlace)))
}

/// Base name without `MPI_`, `P`-less, without the large-count `_c` suffix.
fn base(name: &str) -> &str {
    let n = name.strip_prefix("MPI_").unwrap_or(name);
    n.strip_suffix("_c").unwrap_or(n)
}

/// Evaluates one call of `caller`.
pub fn evaluate(a: &Args, caller: &dyn Caller) -> Effect {
    let mut e = Effect {
        comm: a
            .get("comm")
            .or_else(|| a.get("local_comm"))
            .map(|c| c.display(None).to_string()),
        ..Effect::default()
    };
    let name = base(a.name);
    let me = caller.world();
    let types = caller.types();
    let bytes = |count: &str, dt: &str| -> Option<u64> {
        Some(a.int(count)?.saturating_mul(types.size(a.get(dt)?)?))
    };
    let comm = a.get("comm");
    let at = comm.and_then(|c| caller.position(c));
    // Point to point.
    let send = |e: &mut Effect, count: &str, dt: &str, dest: &str| {
        let b = bytes(count, dt);
        e.sent += b.unwrap_or(0);
        e.size = e.size.or(b);
        let Some(Value::Rank(r)) = a.get(dest) else {
            return;
        };
        if r.is_special() {
            return;
        }
        let to = match (comm, at) {
            (Some(c), Some((p, _))) => local_peer(r, p).and_then(|l| caller.member(c, l)),
            // An inter-communicator: peers are ranks of the remote group.
            // Its peers are ranks of the remote group, stored absolute or relative to the
            // caller's rank in its local group.
            (Some(c), None) => caller.remote(c).and_then(|(my, g)| {
                let peer = local_peer(
                    r,
                    Position {
                        rank: my,
                        grid: None,
                    },
                )?;
                g.get(usize::try_from(peer).ok()?).copied().flatten()
            }),
            _ => None,
        };
        match (to, b) {
            (Some(to), Some(bytes)) => e.edges.push(Edge {
                from: me,
                to,
                bytes,
                kind: Kind::P2p,
            }),
            _ => e.unresolved = true,
        }
    };
    let recv = |e: &mut Effect, count: &str, dt: &str, source: &str| {
        let b = bytes(count, dt);
        if let Some(Value::Rank(Rank::ProcNull)) = a.get(source) {
            e.size = e.size.or(b);
            return;
        }
        e.received += b.unwrap_or(0);
        e.size = e.size.or(b);
        if b.is_none() {
            e.unresolved = true;
        }
    };
    match name {
        "Send" | "Isend" | "Ssend" | "Issend" | "Bsend" | "Ibsend" | "Rsend" | "Irsend" => {
            // A send to MPI_PROC_NULL moves nothing.
            if let Some(Value::Rank(Rank::ProcNull)) = a.get("dest") {
                e.size = bytes("count", "datatype");
                return e;
            }
            send(&mut e, "count", "datatype", "dest");
        }
        "Recv" | "Irecv" | "Mrecv" | "Imrecv" => recv(&mut e, "count", "datatype", "source"),
        "Sendrecv" | "Isendrecv" => {
            if !matches!(a.get("dest"), Some(Value::Rank(Rank::ProcNull))) {
                send(&mut e, "sendcount", "sendtype", "dest");
            } else {
                e.size = bytes("sendcount", "sendtype");
            }
            recv(&mut e, "recvcount", "recvtype", "source");
        }
        "Sendrecv_replace" | "Isendrecv_replace" => {
            if !matches!(a.get("dest"), Some(Value::Rank(Rank::ProcNull))) {
                send(&mut e, "count", "datatype", "dest");
            }
            recv(&mut e, "count", "datatype", "source");
        }
        "Start" => {
            if let Some(p) = a.get("request").and_then(|r| caller.persistent(r)) {
                add(&mut e, p);
            }
        }
        "Startall" => {
            if let Some(Value::Array(reqs)) = a.get("array_of_requests") {
                for r in reqs {
                    if let Some(p) = caller.persistent(r) {
                        add(&mut e, p);
                    }
                }
            }
        }
        "Put" | "Get" | "Accumulate" | "Rput" | "Rget" | "Raccumulate" | "Get_accumulate"
        | "Rget_accumulate" | "Fetch_and_op" | "Compare_and_swap" => {
            rma(&mut e, a, name, caller);
        }
        _ => collective(&mut e, a, name, caller, comm, at),
    }
    e
}

/// Adds `p`'s data to `e` (a persistent operation started).
fn add(e: &mut Effect, p: &Effect) {
    e.sent += p.sent;
    e.received += p.received;
    e.edges.extend_from_slice(&p.edges);
    e.size = e.size.or(p.size);
    e.unresolved |= p.unresolved;
    if e.comm.is_none() {
        e.comm.clone_from(&p.comm);
    }
}

/// One-sided operations: origin → target for puts and accumulates, target → origin for gets.
fn rma(e: &mut Effect, a: &Args, name: &str, caller: &dyn Caller) {
    let types = caller.types();
    let (count, dt) = match name {
        "Fetch_and_op" | "Compare_and_swap" => (Some(1), a.get("datatype")),
        _ => (a.int("origin_count"), a.get("origin_datatype")),
    };
    let b = count
        .zip(dt.and_then(|d| types.size(d)))
        .map(|(c, s)| c * s);
    let get = matches!(name, "Get" | "Rget");
    let Some(b) = b else {
        e.unresolved = true;
        return;
    };
    if get {
        e.received += b;
    } else {
        e.sent += b;
    }
    e.size = Some(b);
    let comm = a.get("win").and_then(|w| caller.window_comm(w));
    e.comm = comm.map(|c| c.display(None).to_string());
    let target = match a.get("target_rank") {
        Some(Value::Rank(r)) if !r.is_special() => Some(r),
        _ => None,
    };
    let peer = comm.zip(target).and_then(|(c, r)| {
        let (p, _) = caller.position(c)?;
        caller.member(c, local_peer(r, p)?)
    });
    match peer {
        Some(t) => {
            let me = caller.world();
            let (from, to) = if get { (t, me) } else { (me, t) };
            e.edges.push(Edge {
                from,
                to,
                bytes: b,
                kind: Kind::P2p,
            });
        }
        None => e.unresolved = true,
    }
}

/// Collectives, by the rule in the module documentation.
fn collective(
    e: &mut Effect,
    a: &Args,
    name: &str,
    caller: &dyn Caller,
    comm: Option<&Value>,
    at: Option<(Position, u32)>,
) {
    let canon = canonical_collective(name);
    let name = canon.as_str();
    let types = caller.types();
    let me = caller.world();
    let size_of = |dt: &str| a.get(dt).and_then(|d| types.size(d));
    let bytes = |count: &str, dt: &str| Some(a.int(count)?.saturating_mul(size_of(dt)?));
    let root = || match a.get("root") {
        Some(Value::Rank(Rank::Absolute(r) | Rank::Fixed(r))) => Some(*r),
        Some(Value::Rank(r)) => at.and_then(|(p, _)| local_peer(r, p)),
        _ => None,
    };
    enum Pattern {
        /// The caller sends `b` to each of these local ranks.
        To(Vec<(i64, u64)>),
        /// The caller receives `b` from this local rank.
        From(i64, u64),
        Nothing,
    }
    let Some((pos, n)) = at else {
        // Allreduce on an inter-communicator: each rank's data goes to every member of the
        // remote group (and each receives the remote group's reduction).
        if let (Some((_, g)), "Allreduce") = (comm.and_then(|c| caller.remote(c)), name) {
            if let Some(b) = bytes("count", "datatype") {
                e.size = Some(b);
                e.received += b;
                for to in g.iter().flatten() {
                    e.sent += b;
                    e.edges.push(Edge {
                        from: me,
                        to: *to,
                        bytes: b,
                        kind: Kind::Coll,
                    });
                }
                if g.iter().any(Option::is_none) {
                    e.unresolved = true;
                }
                return;
            }
        }
        if is_collective(name) {
            // An inter-communicator or a communicator the trace does not describe.
            let b = bytes("count", "datatype")
                .or_else(|| bytes("sendcount", "sendtype"))
                .or_else(|| bytes("recvcount", "recvtype"));
            e.size = b;
            e.sent += b.unwrap_or(0);
            e.unresolved = b.is_some();
        }
        return;
    };
    let mine = pos.rank;
    let others = |b: u64| -> Vec<(i64, u64)> {
        (0..i64::from(n))
            .filter(|&j| j != mine)
            .map(|j| (j, b))
            .collect()
    };
    let pattern = match name {
        "Bcast" => match (root(), bytes("count", "datatype")) {
            (Some(r), Some(b)) if r == mine => {
                e.size = Some(b);
                e.sent += b * u64::from(n - 1);
                Pattern::Nothing
            }
            (Some(r), Some(b)) => {
                e.size = Some(b);
                Pattern::From(r, b)
            }
            _ => return unresolved(e),
        },
        "Reduce" => match (root(), bytes("count", "datatype")) {
            (Some(r), Some(b)) if r == mine => {
                e.size = Some(b);
                e.received += b * u64::from(n - 1);
                Pattern::Nothing
            }
            (Some(r), Some(b)) => {
                e.size = Some(b);
                Pattern::To(vec![(r, b)])
            }
            _ => return unresolved(e),
        },
        "Allreduce" => match bytes("count", "datatype") {
            Some(b) => {
                e.size = Some(b);
                e.received += b * u64::from(n - 1);
                Pattern::To(others(b))
            }
            None => return unresolved(e),
        },
        "Gather" | "Gatherv" => {
            let r = root();
            let Some(r) = r else { return unresolved(e) };
            if r == mine {
                let got = if name == "Gather" {
                    bytes("recvcount", "recvtype").map(|b| b * u64::from(n - 1))
                } else {
                    a.ints("recvcounts").zip(size_of("recvtype")).map(|(c, s)| {
                        c.iter()
                            .enumerate()
                            .filter(|(j, _)| *j as i64 != mine)
                            .map(|(_, c)| c * s)
                            .sum()
                    })
                };
                let Some(got) = got else { return unresolved(e) };
                e.received += got;
                e.size = bytes("sendcount", "sendtype").or(Some(got));
                Pattern::Nothing
            } else {
                let Some(b) = bytes("sendcount", "sendtype") else {
                    return unresolved(e);
                };
                e.size = Some(b);
                Pattern::To(vec![(r, b)])
            }
        }
        "Scatter" | "Scatterv" => {
            let Some(r) = root() else {
                return unresolved(e);
            };
            if r == mine {
                let sent = if name == "Scatter" {
                    bytes("sendcount", "sendtype").map(|b| b * u64::from(n - 1))
                } else {
                    a.ints("sendcounts").zip(size_of("sendtype")).map(|(c, s)| {
                        c.iter()
                            .enumerate()
                            .filter(|(j, _)| *j as i64 != mine)
                            .map(|(_, c)| c * s)
                            .sum()
                    })
                };
                let Some(sent) = sent else {
                    return unresolved(e);
                };
                e.sent += sent;
                e.size = Some(sent / u64::from(n.max(2) - 1));
                Pattern::Nothing
            } else {
                let Some(b) = bytes("recvcount", "recvtype") else {
                    return unresolved(e);
                };
                e.size = Some(b);
                Pattern::From(r, b)
            }
        }
        "Allgather" | "Allgatherv" => {
            let b = if is_in_place(a.get("sendbuf")) {
                if name == "Allgather" {
                    bytes("recvcount", "recvtype")
                } else {
                    a.ints("recvcounts")
                        .and_then(|c| c.get(mine as usize).copied())
                        .zip(size_of("recvtype"))
                        .map(|(c, s)| c * s)
                }
            } else {
                bytes("sendcount", "sendtype")
            };
            let got = if name == "Allgather" {
                bytes("recvcount", "recvtype").map(|b| b * u64::from(n - 1))
            } else {
                a.ints("recvcounts").zip(size_of("recvtype")).map(|(c, s)| {
                    c.iter()
                        .enumerate()
                        .filter(|(j, _)| *j as i64 != mine)
                        .map(|(_, c)| c * s)
                        .sum()
                })
            };
            let Some(b) = b else { return unresolved(e) };
            e.received += got.unwrap_or(0);
            e.size = Some(b);
            Pattern::To(others(b))
        }
        "Alltoall" => {
            let b = if is_in_place(a.get("sendbuf")) {
                bytes("recvcount", "recvtype")
            } else {
                bytes("sendcount", "sendtype")
            };
            let Some(b) = b else { return unresolved(e) };
            e.received += bytes("recvcount", "recvtype").unwrap_or(b) * u64::from(n - 1);
            e.size = Some(b);
            Pattern::To(others(b))
        }
        "Alltoallv" | "Alltoallw" => {
            let place = is_in_place(a.get("sendbuf"));
            let (cs, ts) = if place {
                ("recvcounts", "recvtype")
            } else {
                ("sendcounts", "sendtype")
            };
            let per_type = |slot: &str, j: usize| -> Option<u64> {
                if name == "Alltoallw" {
                    match a.get(&format!("{slot}s"))? {
                        Value::Array(t) => types.size(t.get(j)?),
                        _ => None,
                    }
                } else {
                    size_of(slot)
                }
            };
            let Some(counts) = a.ints(cs) else {
                return unresolved(e);
            };
            let mut to = Vec::new();
            for (j, c) in counts.iter().enumerate() {
                if j as i64 == mine {
                    continue;
                }
                let Some(s) = per_type(ts, j) else {
                    return unresolved(e);
                };
                to.push((j as i64, c * s));
            }
            if let Some(rc) = a.ints("recvcounts") {
                for (j, c) in rc.iter().enumerate() {
                    if j as i64 != mine {
                        e.received += c * per_type("recvtype", j).unwrap_or(0);
                    }
                }
            }
            e.size = Some(to.iter().map(|(_, b)| b).sum::<u64>() / u64::from(n.max(2) - 1));
            Pattern::To(to)
        }
        "Reduce_scatter" | "Reduce_scatter_block" => {
            let s = size_of("datatype");
            let Some(s) = s else { return unresolved(e) };
            let counts: Vec<u64> = if name == "Reduce_scatter" {
                match a.ints("recvcounts") {
                    Some(c) => c,
                    None => return unresolved(e),
                }
            } else {
                match a.int("recvcount") {
                    Some(c) => vec![c; n as usize],
                    None => return unresolved(e),
                }
            };
            let mine_count = counts.get(mine as usize).copied().unwrap_or(0);
            e.received += mine_count * s * u64::from(n - 1);
            e.size = Some(mine_count * s);
            Pattern::To(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j as i64 != mine)
                    .map(|(j, c)| (j as i64, c * s))
                    .collect(),
            )
        }
        "Scan" | "Exscan" => match bytes("count", "datatype") {
            Some(b) => {
                e.size = Some(b);
                e.received += b * mine as u64;
                Pattern::To(((mine + 1)..i64::from(n)).map(|j| (j, b)).collect())
            }
            None => return unresolved(e),
        },
        _ => Pattern::Nothing,
    };
    let Some(c) = comm else { return };
    match pattern {
        Pattern::To(list) => {
            for (j, b) in list {
                e.sent += b;
                match caller.member(c, j) {
                    Some(to) => e.edges.push(Edge {
                        from: me,
                        to,
                        bytes: b,
                        kind: Kind::Coll,
                    }),
                    None => e.unresolved = true,
                }
            }
        }
        Pattern::From(j, b) => {
            e.received += b;
            match caller.member(c, j) {
                Some(from) => e.edges.push(Edge {
                    from,
                    to: me,
                    bytes: b,
                    kind: Kind::Coll,
                }),
                None => e.unresolved = true,
            }
        }
        Pattern::Nothing => {}
    }
}

/// The blocking collective a non-blocking (`Ibcast`) or persistent (`Bcast_init`) one starts,
/// else `name`.
fn canonical_collective(name: &str) -> String {
    let name = name.strip_suffix("_init").unwrap_or(name);
    if let Some(rest) = name.strip_prefix('I') {
        let mut c = rest.chars();
        if let Some(first) = c.next().filter(char::is_ascii_lowercase) {
            let up: String = first.to_ascii_uppercase().to_string() + c.as_str();
            if is_collective(&up) {
                return up;
            }
        }
    }
    name.to_string()
}

fn unresolved(e: &mut Effect) {
    e.unresolved = true;
}

/// Collectives that move data (the ones the rule attributes).
fn is_collective(name: &str) -> bool {
    matches!(
        name,
        "Bcast"
            | "Reduce"
            | "Allreduce"
            | "Gather"
            | "Gatherv"
            | "Scatter"
            | "Scatterv"
            | "Allgather"
            | "Allgatherv"
            | "Alltoall"
            | "Alltoallv"
            | "Alltoallw"
            | "Reduce_scatter"
            | "Reduce_scatter_block"
            | "Scan"
            | "Exscan"
    )
}

/// True for communicator and window handles' kinds the matrix can follow.
pub fn is_comm(v: &Value) -> bool {
    matches!(v, Value::Handle(HandleKind::Comm, _))
}

/// A handle's symbolic reference.
pub fn handle_ref(v: &Value) -> Option<HandleRef> {
    match v {
        Value::Handle(_, h) => Some(*h),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_trace::value::Buffer;

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
        let bcast = |me| {
            call(
                "MPI_Bcast",
                &[
                    ("count", Value::Int(2)),
                    ("datatype", INT),
                    ("root", Value::Rank(Rank::Absolute(1))),
                    ("comm", WORLD),
                ],
                &world(me, 4),
            )
        };
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
        let reduce = |me| {
            call(
                "MPI_Reduce",
                &[
                    ("count", Value::Int(4)),
                    ("datatype", INT),
                    ("root", Value::Rank(Rank::Absolute(0))),
                    ("comm", WORLD),
                ],
                &world(me, 4),
            )
        };
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
}
