//! What arrived for point-to-point receives, as opposed to the capacity they posted.
//!
//! A receive's status records the bytes that arrived (`MPI_Get_count` with `MPI_BYTE`): the
//! blocking receive's own, or, for a non-blocking one, the status of the call that completed
//! its request. A request's symbolic id names its pool, one per creating signature (whose
//! arguments, count and datatype included, come before the request), so a completion's
//! request tells which receive it ends and the arrived bytes are credited to that receive's
//! function, site and communicator. Receives whose status the trace does not have
//! (`MPI_STATUS_IGNORE`) take what the matching sends bring ([`settle`]).
//!
//! Each rank is gathered on its own ([`RankArrivals`], turned into [`Gathered`] with the
//! rank's context); [`settle`] runs once all ranks are in.

mod gathered;
mod settle;

pub(crate) use gathered::{Envelope, Gathered, Key};
pub(crate) use settle::settle;

use crate::call::Args;
use crate::effect::{base, world_peer, Caller, Effect, Kind};
use crate::site::Site;
use conifer_trace::decode::Signature;
use conifer_trace::value::{HandleKind, HandleRef, Rank, Value, REQUEST_LOCAL_BITS};
use conifer_trace::Trace;
use std::collections::HashMap;

/// A receive's arguments as posted: its communicator value, source and tag.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Posted {
    comm: Option<Value>,
    source: Option<Rank>,
    tag: Option<i64>,
}

/// Completions by their status's (source, tag): (completions, bytes).
type ByStatus = HashMap<(Rank, i64), (u64, u64)>;

/// A pool of receive requests: who creates them, their capacity and what they match.
struct Pool {
    capacity: u64,
    posted: Posted,
    /// Receives started, per key of the call that started them (the `MPI_Irecv`, or the
    /// `MPI_Start`/`MPI_Startall` of a persistent receive, where its sends count too).
    started: HashMap<usize, u64>,
}

/// One rank's receives, completions and sends, as met (in any order).
#[derive(Default)]
pub(crate) struct RankArrivals {
    keys: Vec<Key>,
    index: HashMap<Key, usize>,
    pools: HashMap<u32, Pool>,
    /// Completions with a status per pool.
    completions: HashMap<u32, ByStatus>,
    /// Starts of persistent requests by pool, per key of the starting call.
    starts: HashMap<u32, HashMap<usize, u64>>,
    /// Blocking receives with a status: (key, posted, status source, tag) → bytes.
    known: HashMap<(usize, Posted, Rank, i64), u64>,
    /// Blocking receives whose status was ignored: (key, posted) → capacity.
    unknown: HashMap<(usize, Posted), u64>,
    /// Bytes of this rank's point-to-point sends: (receiver, communicator, tag) → bytes.
    sends: HashMap<(u32, Option<String>, Option<i64>), u64>,
}

/// A call as [`RankArrivals::add`] takes it.
pub(crate) struct Seen<'a> {
    /// Its arguments.
    pub args: &'a Args<'a>,
    /// Its effect.
    pub effect: &'a Effect,
    /// Called from Fortran (1-based indices).
    pub fortran: bool,
    /// Where its bytes are credited.
    pub key: Key,
}

impl<'a> Seen<'a> {
    /// Call `args` with effect `e`, credited to its function at `site`.
    pub fn new(args: &'a Args<'a>, e: &'a Effect, fortran: bool, site: Site) -> Self {
        Seen {
            args,
            effect: e,
            fortran,
            key: Key {
                function: args.name.to_string(),
                site,
                comm: e.comm.clone(),
            },
        }
    }
}

/// True when the signature's function is a Fortran binding.
pub(crate) fn fortran(trace: &Trace, sig: &Signature) -> bool {
    trace
        .catalog
        .iter()
        .any(|f| f.id == sig.function && f.language == conifer_trace::Language::Fortran)
}

impl RankArrivals {
    fn key(&mut self, key: Key) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        self.keys.push(key.clone());
        self.index.insert(key, self.keys.len() - 1);
        self.keys.len() - 1
    }

    /// Adds `n` calls of `call` made by `caller`.
    pub fn add(&mut self, call: Seen, caller: &dyn Caller, n: u64) {
        let a = call.args;
        let name = base(a.name);
        let int = |slot: &str| match a.get(slot) {
            Some(Value::Int(t)) if *t >= 0 => Some(*t),
            _ => None,
        };
        if matches!(
            name,
            "Send" | "Ssend" | "Bsend" | "Rsend" | "Isend" | "Issend" | "Ibsend" | "Irsend"
        ) || name.contains("endrecv")
            || name.starts_with("Start")
        {
            let tag = int("tag")
                .or_else(|| int("sendtag"))
                .filter(|_| !name.starts_with("Start"));
            for edge in call.effect.edges.iter().filter(|e| e.kind == Kind::P2p) {
                let at = (edge.to, call.effect.comm.clone(), tag);
                *self.sends.entry(at).or_default() += edge.bytes * n;
            }
        }
        let capacity = |count: &str, dt: &str| {
            let size = caller.types().size(a.get(dt)?)?;
            Some(a.int(count)?.saturating_mul(size))
        };
        let source = match a.get("source") {
            Some(Value::Rank(Rank::ProcNull)) => return self.complete(a, call.fortran, n),
            Some(Value::Rank(r)) => Some(*r),
            _ => None,
        };
        let tag_slot = if name.contains("endrecv") {
            "recvtag"
        } else {
            "tag"
        };
        let posted = Posted {
            comm: a.get("comm").cloned(),
            source,
            tag: int(tag_slot),
        };
        match name {
            "Recv" | "Mrecv" | "Sendrecv" | "Sendrecv_replace" => {
                let cap = if name == "Sendrecv" {
                    capacity("recvcount", "recvtype")
                } else {
                    capacity("count", "datatype")
                };
                let key = self.key(call.key);
                match a.get("status") {
                    Some(Value::Status(s)) if s.source == Rank::ProcNull => {}
                    Some(Value::Status(s)) => {
                        let at = (key, posted, s.source, s.tag);
                        *self.known.entry(at).or_default() += s.bytes.max(0) as u64 * n;
                    }
                    _ => *self.unknown.entry((key, posted)).or_default() += cap.unwrap_or(0) * n,
                }
            }
            "Irecv" | "Imrecv" | "Recv_init" | "Isendrecv" | "Isendrecv_replace" => {
                let cap = if name == "Isendrecv" {
                    capacity("recvcount", "recvtype")
                } else {
                    capacity("count", "datatype")
                };
                let (Some(pool), Some(cap)) = (pool(a.get("request")), cap) else {
                    return;
                };
                let key = self.key(call.key);
                let more = self.starts.remove(&pool).unwrap_or_default();
                let p = self.pools.entry(pool).or_insert(Pool {
                    capacity: cap,
                    posted,
                    started: HashMap::new(),
                });
                if name != "Recv_init" {
                    *p.started.entry(key).or_default() += n;
                }
                for (k, m) in more {
                    *p.started.entry(k).or_default() += m;
                }
            }
            "Start" => {
                let key = self.key(call.key);
                self.start(a.get("request"), key, n)
            }
            "Startall" => {
                let key = self.key(call.key);
                if let Some(Value::Array(reqs)) = a.get("array_of_requests") {
                    reqs.iter().for_each(|r| self.start(Some(r), key, n));
                }
            }
            _ => self.complete(a, call.fortran, n),
        }
    }

    /// `n` calls of `a`, a call that may complete requests.
    fn complete(&mut self, a: &Args, fortran: bool, n: u64) {
        for (r, status) in crate::completions::completed(a, fortran) {
            if let (Some(pool), Some(Value::Status(s))) = (pool(Some(r)), status) {
                let slot = self.completions.entry(pool).or_default();
                let c = slot.entry((s.source, s.tag)).or_default();
                c.0 += n;
                c.1 += s.bytes.max(0) as u64 * n;
            }
        }
    }

    /// `n` starts of the persistent request `r` by calls of `key`.
    fn start(&mut self, r: Option<&Value>, key: usize, n: u64) {
        if let Some(pool) = pool(r) {
            let started = match self.pools.get_mut(&pool) {
                Some(p) => &mut p.started,
                None => self.starts.entry(pool).or_default(),
            };
            *started.entry(key).or_default() += n;
        }
    }

    /// The rank's receives resolved with `caller`'s communicators.
    pub fn gather(self, caller: &dyn Caller) -> Gathered {
        let mut g = Gathered {
            known: vec![0; self.keys.len()],
            keys: self.keys,
            known_from: HashMap::new(),
            unknown: Vec::new(),
            sends: Vec::new(),
        };
        let comm_name = |p: &Posted| p.comm.as_ref().map(|c| c.display(None).to_string());
        let envelope = |p: &Posted, source: Option<&Rank>, tag: Option<i64>| Envelope {
            from: p
                .comm
                .as_ref()
                .zip(source)
                .and_then(|(c, r)| world_peer(caller, c, r)),
            comm: comm_name(p),
            tag,
        };
        let known = |g: &mut Gathered, key: usize, e: Envelope, bytes: u64| {
            g.known[key] += bytes;
            *g.known_from.entry(e).or_default() += bytes;
        };
        for ((key, posted, source, tag), bytes) in self.known {
            known(
                &mut g,
                key,
                envelope(&posted, Some(&source), Some(tag)),
                bytes,
            );
        }
        for ((key, posted), cap) in self.unknown {
            let e = envelope(&posted, posted.source.as_ref(), posted.tag);
            g.unknown.push((key, e, cap));
        }
        for (id, p) in &self.pools {
            let (mut completed, mut arrived) = (0, 0);
            for (&(source, tag), &(count, bytes)) in self.completions.get(id).into_iter().flatten()
            {
                if source == Rank::ProcNull {
                    continue;
                }
                completed += count;
                arrived += bytes;
                let e = envelope(&p.posted, Some(&source), Some(tag));
                *g.known_from.entry(e).or_default() += bytes;
            }
            // What arrived, and the capacity whose arrival is unknown, go to the starting
            // calls in proportion to their starts (one key but for persistent receives
            // started at several sites).
            let mut keys: Vec<(usize, u64)> = p.started.iter().map(|(&k, &n)| (k, n)).collect();
            keys.sort_unstable();
            let weights: Vec<u64> = keys.iter().map(|k| k.1).collect();
            let total: u64 = weights.iter().sum();
            let left = total.saturating_sub(completed) * p.capacity;
            let e = envelope(&p.posted, p.posted.source.as_ref(), p.posted.tag);
            let (bytes, unknown) = (split(arrived, &weights), split(left, &weights));
            for (((key, _), b), u) in keys.iter().zip(bytes).zip(unknown) {
                g.known[*key] += b;
                if u > 0 {
                    g.unknown.push((*key, e.clone(), u));
                }
            }
        }
        let me = caller.world();
        for ((to, comm, tag), bytes) in self.sends {
            g.sends.push((
                to,
                Envelope {
                    from: Some(me),
                    comm,
                    tag,
                },
                bytes,
            ));
        }
        g
    }
}

/// `amount` split in proportion to `weights` (rounded down, the remainder to the first).
fn split(amount: u64, weights: &[u64]) -> Vec<u64> {
    let total: u64 = weights.iter().sum();
    if total == 0 {
        return vec![0; weights.len()];
    }
    let mut out: Vec<u64> = weights
        .iter()
        .map(|&w| (u128::from(amount) * u128::from(w) / u128::from(total)) as u64)
        .collect();
    let rest = amount - out.iter().sum::<u64>();
    if let Some(first) = out.first_mut() {
        *first += rest;
    }
    out
}

/// The pool of a request handle value.
fn pool(r: Option<&Value>) -> Option<u32> {
    match r? {
        Value::Handle(HandleKind::Request, HandleRef::Id(id)) => Some(id >> REQUEST_LOCAL_BITS),
        _ => None,
    }
}
