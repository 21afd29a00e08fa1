//! Point-to-point calls' effects: sends and receives between two named peers, and one-sided
//! operations (origin → target for puts and accumulates, target → origin for gets).

use super::kinds::{Caller, Effect, Kind};
use super::peer::{local_peer, world_peer};
use crate::call::Args;
use conifer_trace::value::{Rank, Value};

/// One call's arguments with what a send or receive needs to resolve its peer.
pub(super) struct Peers<'a> {
    /// The call's arguments.
    pub a: &'a Args<'a>,
    /// The caller.
    pub caller: &'a dyn Caller,
    /// The communicator the call names.
    pub comm: Option<&'a Value>,
}

impl Peers<'_> {
    /// Bytes of `count` elements of datatype `dt` (both parameter names).
    fn bytes(&self, count: &str, dt: &str) -> Option<u64> {
        let size = self.caller.types().size(self.a.get(dt)?)?;
        Some(self.a.int(count)?.saturating_mul(size))
    }

    /// The send half of a call: `count` elements of `dt` to the rank in parameter `dest`.
    /// A send to `MPI_PROC_NULL` moves nothing but still has a message size.
    pub fn send(&self, e: &mut Effect, count: &str, dt: &str, dest: &str) {
        let b = self.bytes(count, dt);
        e.size = e.size.or(b);
        if let Some(Value::Rank(Rank::ProcNull)) = self.a.get(dest) {
            return;
        }
        e.sent += b.unwrap_or(0);
        let Some(Value::Rank(r)) = self.a.get(dest) else {
            return;
        };
        if r.is_special() {
            return;
        }
        let to = self.comm.and_then(|c| world_peer(self.caller, c, r));
        match b {
            Some(bytes) => e.link(to.map(|to| (self.caller.world(), to)), bytes, Kind::P2p),
            None => e.unresolved = true,
        }
    }

    /// The receive half of a call: capacity for `count` elements of `dt` from the rank in
    /// parameter `source` (what arrives is worked out in `crate::arrivals`). A receive from
    /// `MPI_PROC_NULL` posts nothing.
    pub fn recv(&self, e: &mut Effect, count: &str, dt: &str, source: &str) {
        let b = self.bytes(count, dt);
        e.size = e.size.or(b);
        if let Some(Value::Rank(Rank::ProcNull)) = self.a.get(source) {
            return;
        }
        e.posted += b.unwrap_or(0);
        if b.is_none() {
            e.unresolved = true;
        }
    }
}

/// One-sided operations: origin → target for puts and accumulates, target → origin for gets.
pub(super) fn rma(e: &mut Effect, a: &Args, name: &str, caller: &dyn Caller) {
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
    let me = caller.world();
    e.link(
        peer.map(|t| if get { (t, me) } else { (me, t) }),
        b,
        Kind::P2p,
    );
}
