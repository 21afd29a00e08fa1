//! Each rank's calls on the synchronised clock and what the matching needs of them, read
//! rank by rank from a trace ([`collect`]) or built by hand (the tests).

use super::error::WaitsError;
use crate::context::{CommGroup, CommTable};
use crate::messages::{Comm, Messages, Op};
use crate::Site;
use conifer_trace::fast_hash::FastMap;
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use serde::Serialize;
use std::collections::HashMap;

/// One call as run, ns on the synchronised clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRec {
    /// The program entered the call.
    pub enter: i64,
    /// The call returned.
    pub exit: i64,
    /// Index into [`Timelines::functions`].
    pub function: u32,
    /// Index into [`Timelines::sites`].
    pub site: u32,
}

/// How a send waits for its receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendMode {
    /// `MPI_Ssend`, `MPI_Issend`: completes only once the receive is posted.
    Synchronous,
    /// A blocking standard `MPI_Send`: waits for the receive when the MPI sends it by
    /// rendezvous.
    Standard,
    /// A non-blocking standard send (`MPI_Isend`, a started persistent send): the call
    /// completing it waits for the receiver when the message is sent by rendezvous (larger
    /// than [`RENDEZVOUS_BYTES`](super::patterns::RENDEZVOUS_BYTES)), else only for the send
    /// to complete.
    Nonblocking,
    /// Anything else (buffered, ready, the send half of `MPI_Sendrecv`): never taken as
    /// waiting for its receiver.
    Other,
}

/// One point-to-point send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendRec {
    /// Receiver, world rank.
    pub to: u32,
    /// Communicator, index into the communicators of [`Timelines`].
    pub comm: u32,
    /// Tag.
    pub tag: i64,
    /// The call that posted it (its enter is when the send started).
    pub post: u32,
    /// The call that completed it (the posting call for blocking sends), when one did.
    pub complete: Option<u32>,
    /// How it waits for its receiver.
    pub mode: SendMode,
    /// Bytes sent.
    pub bytes: u64,
}

/// One point-to-point receive, completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvRec {
    /// Sender, world rank (the actual one, from the status, for wildcard receives).
    pub from: u32,
    /// Communicator index.
    pub comm: u32,
    /// Tag (the actual one).
    pub tag: i64,
    /// The call that posted it (`MPI_Irecv`, or the blocking receive itself).
    pub post: u32,
    /// The call that completed it.
    pub complete: u32,
    /// Its place among the rank's posted receives (MPI matches receives in posting order).
    pub order: u64,
}

/// The collectives the patterns know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollKind {
    /// `MPI_Barrier`.
    Barrier,
    /// All-to-all data: `Allreduce`, `Alltoall(v/w)`, `Allgather(v)`,
    /// `Reduce_scatter(_block)`.
    NxN,
    /// One-to-all: `Bcast`, `Scatter(v)`.
    OneToAll,
    /// All-to-one: `Reduce`, `Gather(v)`.
    AllToOne,
    /// Any other collective (`Scan`, `Exscan`): counted for instance matching only.
    Other,
}

impl CollKind {
    /// The kind of the collective `operation` (as [`Op::Collective`] names it).
    pub fn of(operation: &str) -> CollKind {
        match operation {
            "Barrier" => CollKind::Barrier,
            "Allreduce"
            | "Alltoall"
            | "Alltoallv"
            | "Alltoallw"
            | "Allgather"
            | "Allgatherv"
            | "Reduce_scatter"
            | "Reduce_scatter_block" => CollKind::NxN,
            "Bcast" | "Scatter" | "Scatterv" => CollKind::OneToAll,
            "Reduce" | "Gather" | "Gatherv" => CollKind::AllToOne,
            _ => CollKind::Other,
        }
    }
}

/// One rank's part in one collective instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollRec {
    /// Communicator index.
    pub comm: u32,
    /// Which collective on that communicator, counted from 0 by every member alike.
    pub instance: u64,
    /// The call.
    pub call: u32,
    /// What kind of collective.
    pub kind: CollKind,
    /// The root, world rank, for rooted collectives.
    pub root: Option<u32>,
    /// False for non-blocking collectives (their waiting is in the completing call, not
    /// analysed).
    pub blocking: bool,
}

/// One rank's timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RankTimeline {
    /// The main thread's calls in order (enter times ascending).
    pub calls: Vec<CallRec>,
    /// Sends in posting order.
    pub sends: Vec<SendRec>,
    /// Receives in completion order.
    pub recvs: Vec<RecvRec>,
    /// Collective calls in order.
    pub colls: Vec<CollRec>,
}

/// A call site as reports name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteInfo {
    /// The site.
    pub site: Site,
    /// The function called there.
    pub function: String,
    /// `file:line`, when known.
    pub source: Option<String>,
}

/// Every rank's timeline with the tables its indices refer to.
#[derive(Debug, Clone, Default)]
pub struct Timelines {
    /// Per world rank.
    pub ranks: Vec<RankTimeline>,
    /// Function names.
    pub functions: Vec<String>,
    /// Call sites.
    pub sites: Vec<SiteInfo>,
    /// Members of each communicator (its size), `None` when unknown.
    pub comm_sizes: Vec<Option<u32>>,
    /// What reading left out.
    pub unmatched: Unmatched,
}

impl Timelines {
    /// The index of function `name`, added when new.
    pub fn function(&mut self, name: &str) -> u32 {
        match self.functions.iter().position(|f| f == name) {
            Some(i) => i as u32,
            None => {
                self.functions.push(name.to_string());
                self.functions.len() as u32 - 1
            }
        }
    }
}

/// What the matching could not pair (partial traces, wildcard receives whose status was
/// ignored, inter-communicators): left out of the patterns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Unmatched {
    /// Sends without a matching receive.
    pub sends: u64,
    /// Receives without a matching send, or whose sender or tag the trace cannot tell.
    pub receives: u64,
    /// Collective calls whose instance lacks members, or on communicators the trace does not
    /// describe.
    pub collectives: u64,
    /// Calls of threads other than each rank's main thread (not analysed).
    pub other_threads: u64,
}

/// What [`collect`] interns across ranks.
struct Interner {
    sites: FastMap<(Site, u32), u32>,
    functions: FastMap<String, u32>,
    comms: FastMap<Comm, u32>,
    members: HashMap<CommGroup, Vec<Option<u32>>>,
}

impl Interner {
    fn comm(&mut self, tl: &mut Timelines, comm: &Comm) -> u32 {
        if let Some(&i) = self.comms.get(comm) {
            return i;
        }
        let size = match comm {
            Comm::Group(g) => self.members.get(g).map(|m| m.len() as u32),
            Comm::Own => Some(1),
            Comm::Inter(_) => None,
        };
        tl.comm_sizes.push(size);
        let i = tl.comm_sizes.len() as u32 - 1;
        self.comms.insert(comm.clone(), i);
        i
    }

    fn function(&mut self, tl: &mut Timelines, name: &str) -> u32 {
        if let Some(&i) = self.functions.get(name) {
            return i;
        }
        let i = tl.function(name);
        self.functions.insert(name.to_string(), i);
        i
    }
}

/// Reads every rank's main thread from `trace` (which must have per-call timing).
pub fn collect(trace: &Trace, progress: &mut dyn FnMut(u64, u64)) -> Result<Timelines, WaitsError> {
    let table = CommTable::new(trace);
    let reader = trace.reader();
    let families = crate::Families::new(trace);
    let mut tl = Timelines::default();
    let mut names = Interner {
        sites: FastMap::default(),
        functions: FastMap::default(),
        comms: FastMap::default(),
        members: table
            .groups()
            .into_iter()
            .map(|(g, m)| (g, m.to_vec()))
            .collect(),
    };
    let ranks = trace.meta.ranks;
    let mut ops = Vec::new();
    for rank in 0..ranks {
        let mut messages = Messages::new(&reader, &table, rank).map_err(WaitsError::Decode)?;
        let mut r = RankTimeline::default();
        // Pending requests: request number → send index, or (posting call, order).
        let mut isends: FastMap<u64, usize> = FastMap::default();
        let mut irecvs: FastMap<u64, (u32, u64)> = FastMap::default();
        let mut order = 0u64;
        let mut instances: FastMap<u32, u64> = FastMap::default();
        // (terminal, tree site) → (site, function) of calls not filled from value streams.
        let mut named: FastMap<(u32, Option<u32>), (u32, u32)> = FastMap::default();
        for call in reader.calls(rank) {
            let call = call.map_err(|e| WaitsError::Decode(format!("rank {rank}: {}", e.0)))?;
            if call.signature.thread != 0 {
                tl.unmatched.other_threads += 1;
                continue;
            }
            // Conifer's own `free` records are not MPI calls.
            if call.name == "free" {
                continue;
            }
            let Some(run) = call.run else {
                return Err(WaitsError::NeedsPerCallTiming("no per-call".into()));
            };
            let idx = r.calls.len() as u32;
            let cached = named.get(&(call.terminal, call.site)).copied();
            let (site, function) = match cached {
                Some(known) if !call.streamed => known,
                _ => {
                    let (site, source) = crate::site_of(
                        trace,
                        families.of(call.terminal, &call.signature),
                        call.terminal,
                        call.site,
                        call.signature.caller,
                    );
                    let function = names.function(&mut tl, call.name);
                    let site = *names.sites.entry((site, function)).or_insert_with(|| {
                        tl.sites.push(SiteInfo {
                            site,
                            function: call.name.to_string(),
                            source: source.map(str::to_string),
                        });
                        tl.sites.len() as u32 - 1
                    });
                    if !call.streamed {
                        named.insert((call.terminal, call.site), (site, function));
                    }
                    (site, function)
                }
            };
            r.calls.push(CallRec {
                enter: run.enter_ns,
                exit: run.exit_ns.max(run.enter_ns),
                function,
                site,
            });
            let base = crate::effect::base(call.name);
            ops.clear();
            messages.ops_into(&call, &mut ops);
            for op in &ops {
                match op {
                    Op::Send {
                        to,
                        tag,
                        comm,
                        bytes,
                        ..
                    } => {
                        let comm = names.comm(&mut tl, comm);
                        r.sends.push(SendRec {
                            to: *to,
                            comm,
                            tag: *tag,
                            post: idx,
                            complete: Some(idx),
                            mode: match base {
                                "Ssend" => SendMode::Synchronous,
                                "Send" => SendMode::Standard,
                                _ => SendMode::Other,
                            },
                            bytes: *bytes,
                        });
                    }
                    Op::Isend {
                        to,
                        tag,
                        comm,
                        request,
                        bytes,
                        ..
                    } => {
                        let comm = names.comm(&mut tl, comm);
                        isends.insert(*request, r.sends.len());
                        r.sends.push(SendRec {
                            to: *to,
                            comm,
                            tag: *tag,
                            post: idx,
                            complete: None,
                            mode: match base {
                                "Issend" => SendMode::Synchronous,
                                "Ibsend" | "Irsend" => SendMode::Other,
                                _ => SendMode::Nonblocking,
                            },
                            bytes: *bytes,
                        });
                    }
                    Op::IsendComplete { request } => {
                        if let Some(i) = isends.remove(request) {
                            r.sends[i].complete = Some(idx);
                        }
                    }
                    Op::IrecvRequest { request, .. } => {
                        irecvs.insert(*request, (idx, order));
                        order += 1;
                    }
                    Op::IrecvCancel { request } => {
                        irecvs.remove(request);
                    }
                    Op::Recv {
                        from, tag, comm, ..
                    } => {
                        let at = (idx, order);
                        order += 1;
                        received(&mut tl, &mut names, &mut r, *from, *tag, comm, at, idx);
                    }
                    Op::IrecvComplete {
                        from,
                        tag,
                        comm,
                        request,
                        ..
                    } => {
                        let at = irecvs.remove(request).unwrap_or((idx, u64::MAX));
                        received(&mut tl, &mut names, &mut r, *from, *tag, comm, at, idx);
                    }
                    Op::Collective {
                        operation,
                        comm,
                        root,
                        ..
                    } => {
                        let members = match comm {
                            Comm::Group(g) => names.members.get(g).cloned(),
                            _ => None,
                        };
                        let Some(members) = members else {
                            if !matches!(comm, Comm::Own) {
                                tl.unmatched.collectives += 1;
                            }
                            continue;
                        };
                        let c = names.comm(&mut tl, comm);
                        let n = instances.entry(c).or_default();
                        let instance = *n;
                        *n += 1;
                        r.colls.push(CollRec {
                            comm: c,
                            instance,
                            call: idx,
                            kind: CollKind::of(operation),
                            root: root.and_then(|l| members.get(l as usize).copied().flatten()),
                            blocking: base == operation,
                        });
                    }
                }
            }
        }
        tl.ranks.push(r);
        progress(u64::from(rank) + 1, u64::from(ranks));
    }
    Ok(tl)
}

/// A receive completed by call `complete`, posted at `(call, order)`.
#[allow(clippy::too_many_arguments)]
fn received(
    tl: &mut Timelines,
    names: &mut Interner,
    r: &mut RankTimeline,
    from: Option<(u32, u32)>,
    tag: i64,
    comm: &Comm,
    (post, order): (u32, u64),
    complete: u32,
) {
    match from {
        Some((from, _)) if tag >= 0 => {
            let comm = names.comm(tl, comm);
            r.recvs.push(RecvRec {
                from,
                comm,
                tag,
                post,
                complete,
                order,
            });
        }
        // A wildcard whose status was not recorded: which message it took is unknown.
        _ => tl.unmatched.receives += 1,
    }
}
