//! OTF2 archives (read by Vampir, Score-P's tools, `otf2-print`, the OTF2 Python bindings),
//! written through libotf2: one location group (process) per rank, one location per
//! recorded thread, one region per MPI function, `Enter`/`Leave` around every call, MPI
//! point-to-point events (`MpiSend`, `MpiIsend`, `MpiIsendComplete`, `MpiIrecvRequest`,
//! `MpiIrecv`, `MpiRecv`: peers and roots as ranks of the communicator, as OTF2 defines
//! them) and `MpiCollectiveBegin`/`End` with root and bytes; communicators and their groups
//! defined. Timestamps are nanoseconds (timer resolution 10⁹) from each thread's first call.
//!
//! Events are written rank by rank; each rank's writers are closed when it is done, so
//! memory stays bounded by one rank's pending requests.

mod archive;
mod ffi;

use crate::causal;
use crate::messages::{Comm, Op};
use crate::Left;
use archive::{checked, Archive, Strings};
use conifer_analyze::context::{CommGroup, CommTable};
use conifer_trace::caller::Caller;
use conifer_trace::value::Value;
use conifer_trace::varint::Reader;
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// What an export wrote.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Written {
    /// Locations (rank threads).
    pub locations: u64,
    /// Events, all locations.
    pub events: u64,
    /// How the timestamps were reconstructed, for a trace without per-call timing.
    pub reconstructed: Option<String>,
}

/// The location of a rank's thread: the rank for thread 0 (as Score-P numbers master
/// threads), `thread << 32 | rank` for the others.
pub fn location(rank: u32, thread: u32) -> u64 {
    (u64::from(thread) << 32) | u64::from(rank)
}

/// Communicators as OTF2 numbers them: in order of first use.
struct Comms<'t> {
    table: &'t CommTable,
    members: HashMap<CommGroup, &'t [Option<u32>]>,
    used: HashMap<Comm, u32>,
}

impl<'t> Comms<'t> {
    fn new(table: &'t CommTable) -> Comms<'t> {
        Comms {
            table,
            members: table.groups().into_iter().collect(),
            used: HashMap::new(),
        }
    }

    /// The OTF2 id of `comm`, numbered on first use.
    fn id(&mut self, comm: &Comm) -> u32 {
        let next = self.used.len() as u32;
        *self.used.entry(comm.clone()).or_insert(next)
    }

    /// The groups of inter-communicator `id`: its two sides' members, as world ranks.
    fn sides(&self, id: &[u8]) -> Vec<&'t [Option<u32>]> {
        let mut sides: Vec<(usize, &[Option<u32>])> = self
            .members
            .iter()
            .filter(|(g, _)| *g.id == *id)
            .map(|(g, m)| (g.group, *m))
            .collect();
        sides.sort_unstable_by_key(|s| s.0);
        sides.into_iter().map(|s| s.1).collect()
    }
}

/// OTF2's collective operation for an [`Op::Collective`] operation name.
fn collective_op(operation: &str) -> ffi::OTF2_CollectiveOp {
    match operation {
        "Barrier" => ffi::OTF2_COLLECTIVE_OP_BARRIER as _,
        "Bcast" => ffi::OTF2_COLLECTIVE_OP_BCAST as _,
        "Gather" => ffi::OTF2_COLLECTIVE_OP_GATHER as _,
        "Gatherv" => ffi::OTF2_COLLECTIVE_OP_GATHERV as _,
        "Scatter" => ffi::OTF2_COLLECTIVE_OP_SCATTER as _,
        "Scatterv" => ffi::OTF2_COLLECTIVE_OP_SCATTERV as _,
        "Allgather" => ffi::OTF2_COLLECTIVE_OP_ALLGATHER as _,
        "Allgatherv" => ffi::OTF2_COLLECTIVE_OP_ALLGATHERV as _,
        "Alltoall" => ffi::OTF2_COLLECTIVE_OP_ALLTOALL as _,
        "Alltoallv" => ffi::OTF2_COLLECTIVE_OP_ALLTOALLV as _,
        "Alltoallw" => ffi::OTF2_COLLECTIVE_OP_ALLTOALLW as _,
        "Reduce" => ffi::OTF2_COLLECTIVE_OP_REDUCE as _,
        "Allreduce" => ffi::OTF2_COLLECTIVE_OP_ALLREDUCE as _,
        "Reduce_scatter" => ffi::OTF2_COLLECTIVE_OP_REDUCE_SCATTER as _,
        "Reduce_scatter_block" => ffi::OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK as _,
        "Scan" => ffi::OTF2_COLLECTIVE_OP_SCAN as _,
        _ => ffi::OTF2_COLLECTIVE_OP_EXSCAN as _,
    }
}

/// The region role of an MPI function, by its name.
fn region_role(name: &str) -> ffi::OTF2_RegionRole {
    let n = name.strip_prefix("MPI_").unwrap_or(name);
    let n = n
        .strip_prefix('I')
        .filter(|b| crate::messages::COLLECTIVES.contains(b))
        .unwrap_or(n);
    match n {
        "Barrier" => ffi::OTF2_REGION_ROLE_BARRIER as _,
        "Bcast" | "Scatter" | "Scatterv" => ffi::OTF2_REGION_ROLE_COLL_ONE2ALL as _,
        "Gather" | "Gatherv" | "Reduce" => ffi::OTF2_REGION_ROLE_COLL_ALL2ONE as _,
        "Scan" | "Exscan" => ffi::OTF2_REGION_ROLE_COLL_OTHER as _,
        n if crate::messages::COLLECTIVES.contains(&n) => ffi::OTF2_REGION_ROLE_COLL_ALL2ALL as _,
        n if n.contains("send")
            || n.contains("recv")
            || n.contains("Send")
            || n.contains("Recv") =>
        {
            ffi::OTF2_REGION_ROLE_POINT2POINT as _
        }
        _ => ffi::OTF2_REGION_ROLE_FUNCTION as _,
    }
}

/// The name `decode` gives communicator id `id` (its value's encoding).
fn comm_name(id: &[u8]) -> String {
    Value::decode(&mut Reader::new(id))
        .map_or_else(|| "comm".to_string(), |v| v.display(None).to_string())
}

/// A call's region: its function, and its call site's source position (`file:line`, maybe
/// followed by ` (function)`) when the trace knows it (tree mode, `--callsites`).
type RegionKey = (String, Option<String>);

/// Writes `trace` as an OTF2 archive in `dir`; what it could not express goes to `left`.
/// `name_caller` names a recorded caller (`--callsites`) as `file:line (function)`: each
/// call site becomes a region of its own, with its source file and line, so Vampir shows
/// where calls were made.
pub fn export(
    trace: &Trace,
    dir: &Path,
    left: &mut Left,
    name_caller: &mut dyn FnMut(Caller) -> String,
) -> Result<Written, String> {
    let table = CommTable::new(trace);
    let reader = trace.reader();
    let mut comms = Comms::new(&table);
    let causal = causal::when_reconstructed(trace, &table)?;
    let described = causal::describe(trace, causal.as_ref());
    let description = format!(
        "{} ranks of `{}`; timestamps {described}",
        trace.meta.ranks,
        trace.meta.command_line.join(" "),
    );
    let creator = format!("conifer {}", env!("CARGO_PKG_VERSION"));
    let mut archive = Archive::create(dir, &creator, &description)?;
    let mut regions: BTreeMap<RegionKey, u32> = BTreeMap::new();
    let mut callers: HashMap<Caller, String> = HashMap::new();
    let mut end_ns = 0u64;
    for rank in 0..trace.meta.ranks {
        for event in causal::events(&reader, &table, rank, causal.as_ref())? {
            let event = event?;
            let w = archive.writer(location(rank, event.call.signature.thread))?;
            let next = regions.len() as u32;
            let call = &event.call;
            let source = match (call.at_source, call.signature.caller) {
                (Some(at), _) => Some(at.to_string()),
                (None, Some(caller)) => Some(
                    callers
                        .entry(caller)
                        .or_insert_with(|| name_caller(caller))
                        .clone(),
                ),
                (None, None) => None,
            };
            let region = *regions
                .entry((call.name.to_string(), source))
                .or_insert(next);
            let (start, end) = (event.span.start_ns, event.span.end_ns);
            end_ns = end_ns.max(end);
            let none = std::ptr::null_mut();
            // SAFETY: `w` is an open event writer; timestamps do not decrease per location.
            unsafe {
                checked(ffi::OTF2_EvtWriter_Enter(w, none, start, region), "Enter")?;
                for op in &event.ops {
                    write_op(w, op, start, end, &mut comms, left)?;
                }
                checked(ffi::OTF2_EvtWriter_Leave(w, none, end, region), "Leave")?;
            }
        }
        archive.close_writers()?;
    }
    let g = archive.finish_events()?;
    let written = Written {
        locations: archive.events.len() as u64,
        events: archive.events.values().sum(),
        reconstructed: causal.as_ref().map(|_| described.clone()),
    };
    definitions(trace, g, &archive.events, &regions, &comms, end_ns)?;
    archive.close()?;
    Ok(written)
}

/// The file and line of a call site named `file:line` or `file:line (function)`; the whole
/// name and line 0 when it has no line.
fn source_position(at: &str) -> (Option<&str>, u32) {
    let position = at.split(" (").next().unwrap_or(at);
    match position.rsplit_once(':') {
        Some((file, line)) => match line.parse() {
            Ok(line) => (Some(file), line),
            Err(_) => (Some(position), 0),
        },
        None => (Some(position), 0),
    }
}

/// The events of one op of a call from `start` to `end`.
///
/// # Safety
/// `w` must be an open event writer whose last timestamp is at most `start`.
unsafe fn write_op(
    w: *mut ffi::OTF2_EvtWriter,
    op: &Op,
    start: u64,
    end: u64,
    comms: &mut Comms,
    left: &mut Left,
) -> Result<(), String> {
    let none = std::ptr::null_mut();
    let tag = |t: i64| u32::try_from(t).unwrap_or(ffi::UNDEFINED_U32);
    match op {
        Op::Send {
            to_rank,
            tag: t,
            comm,
            bytes,
            ..
        } => checked(
            ffi::OTF2_EvtWriter_MpiSend(w, none, start, *to_rank, comms.id(comm), tag(*t), *bytes),
            "MpiSend",
        ),
        Op::Isend {
            to_rank,
            tag: t,
            comm,
            bytes,
            request,
            ..
        } => checked(
            ffi::OTF2_EvtWriter_MpiIsend(
                w,
                none,
                start,
                *to_rank,
                comms.id(comm),
                tag(*t),
                *bytes,
                *request,
            ),
            "MpiIsend",
        ),
        Op::IsendComplete { request } => checked(
            ffi::OTF2_EvtWriter_MpiIsendComplete(w, none, end, *request),
            "MpiIsendComplete",
        ),
        Op::IrecvRequest { request, .. } => checked(
            ffi::OTF2_EvtWriter_MpiIrecvRequest(w, none, start, *request),
            "MpiIrecvRequest",
        ),
        Op::IrecvCancel { request } => checked(
            ffi::OTF2_EvtWriter_MpiRequestCancelled(w, none, end, *request),
            "MpiRequestCancelled",
        ),
        Op::Recv {
            from: Some((_, from)),
            tag: t,
            comm,
            bytes,
        } => checked(
            ffi::OTF2_EvtWriter_MpiRecv(w, none, end, *from, comms.id(comm), tag(*t), *bytes),
            "MpiRecv",
        ),
        Op::IrecvComplete {
            from: Some((_, from)),
            tag: t,
            comm,
            bytes,
            request,
        } => checked(
            ffi::OTF2_EvtWriter_MpiIrecv(
                w,
                none,
                end,
                *from,
                comms.id(comm),
                tag(*t),
                *bytes,
                *request,
            ),
            "MpiIrecv",
        ),
        Op::Recv { from: None, .. } | Op::IrecvComplete { from: None, .. } => {
            left.add("receive of unknown source (MPI_ANY_SOURCE, status ignored)");
            Ok(())
        }
        Op::Collective {
            operation,
            comm,
            root,
            sent,
            received,
        } => {
            let root = root.unwrap_or(ffi::OTF2_COLLECTIVE_ROOT_NONE as _);
            checked(
                ffi::OTF2_EvtWriter_MpiCollectiveBegin(w, none, start),
                "MpiCollectiveBegin",
            )?;
            checked(
                ffi::OTF2_EvtWriter_MpiCollectiveEnd(
                    w,
                    none,
                    end,
                    collective_op(operation),
                    comms.id(comm),
                    root,
                    *sent,
                    *received,
                ),
                "MpiCollectiveEnd",
            )
        }
    }
}

/// One global definition, its strings already numbered.
type Def = Box<dyn Fn(*mut ffi::OTF2_GlobalDefWriter) -> ffi::OTF2_ErrorCode>;

/// The global definitions: clock, paradigm, system tree (machine, hosts), one location
/// group per rank and its locations, regions, groups and communicators — written after
/// the strings they name.
fn definitions(
    trace: &Trace,
    g: *mut ffi::OTF2_GlobalDefWriter,
    events: &HashMap<u64, u64>,
    regions: &BTreeMap<RegionKey, u32>,
    comms: &Comms,
    end_ns: u64,
) -> Result<(), String> {
    let mut s = Strings::default();
    let undefined = ffi::UNDEFINED_U32;
    // Timestamps count from the run's earliest moment, which is this far before rank 0's
    // recorder started (when its MPI_Init returned, `start_unix_seconds`).
    let earliest = conifer_trace::clock::earliest_ns(trace.record.ranks.iter().map(|r| &r.clock));
    let start = ((trace.meta.start_unix_seconds * 1e9) as i64 + earliest).max(0) as u64;
    // SAFETY (every closure): `g` is the archive's open global definition writer, and every
    // pointer passed points into data the closure owns.
    let mut defs: Vec<(&str, Def)> = vec![(
        "WriteClockProperties",
        Box::new(move |g| unsafe {
            ffi::OTF2_GlobalDefWriter_WriteClockProperties(g, 1_000_000_000, 0, end_ns + 1, start)
        }),
    )];
    let mpi = s.id("MPI");
    defs.push((
        "WriteParadigm",
        Box::new(move |g| unsafe {
            ffi::OTF2_GlobalDefWriter_WriteParadigm(
                g,
                ffi::OTF2_PARADIGM_MPI as _,
                mpi,
                ffi::OTF2_PARADIGM_CLASS_PROCESS as _,
            )
        }),
    ));
    let machine = s.id("machine");
    defs.push((
        "WriteSystemTreeNode",
        Box::new(move |g| unsafe {
            ffi::OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, machine, undefined)
        }),
    ));
    let mut hosts: BTreeMap<String, u32> = BTreeMap::new();
    let node_class = s.id("node");
    for (rank, entry) in trace.record.ranks.iter().enumerate() {
        let host = if entry.host.is_empty() {
            "unknown host"
        } else {
            entry.host.as_str()
        };
        let next = hosts.len() as u32 + 1;
        let node = *hosts.entry(host.to_string()).or_insert(next);
        if node == next {
            let name = s.id(host);
            defs.push((
                "WriteSystemTreeNode",
                Box::new(move |g| unsafe {
                    ffi::OTF2_GlobalDefWriter_WriteSystemTreeNode(g, node, name, node_class, 0)
                }),
            ));
        }
        let (rank, name) = (rank as u32, s.id(&format!("MPI Rank {rank}")));
        defs.push((
            "WriteLocationGroup",
            Box::new(move |g| unsafe {
                ffi::OTF2_GlobalDefWriter_WriteLocationGroup(
                    g,
                    rank,
                    name,
                    ffi::OTF2_LOCATION_GROUP_TYPE_PROCESS as _,
                    node,
                    undefined,
                )
            }),
        ));
    }
    let mut locations: Vec<(u64, u64)> = events.iter().map(|(&l, &n)| (l, n)).collect();
    locations.sort_unstable();
    for (l, n) in locations {
        let (rank, thread) = ((l & 0xffff_ffff) as u32, (l >> 32) as u32);
        let name = s.id(&format!("rank {rank} thread {thread}"));
        defs.push((
            "WriteLocation",
            Box::new(move |g| unsafe {
                ffi::OTF2_GlobalDefWriter_WriteLocation(
                    g,
                    l,
                    name,
                    ffi::OTF2_LOCATION_TYPE_CPU_THREAD as _,
                    n,
                    rank,
                )
            }),
        ));
    }
    let empty = s.id("");
    let mut by_id: Vec<(&RegionKey, &u32)> = regions.iter().collect();
    by_id.sort_unstable_by_key(|(_, &id)| id);
    for ((function, source), &id) in by_id {
        let (name, role) = (s.id(function), region_role(function));
        let (file, line) = source.as_deref().map_or((None, 0), source_position);
        let description = match source {
            Some(at) => s.id(&format!("{function} called at {at}")),
            None => empty,
        };
        let file = file.map_or(empty, |f| s.id(f));
        defs.push((
            "WriteRegion",
            Box::new(move |g| unsafe {
                ffi::OTF2_GlobalDefWriter_WriteRegion(
                    g,
                    id,
                    name,
                    name,
                    description,
                    role,
                    ffi::OTF2_PARADIGM_MPI as _,
                    ffi::OTF2_REGION_FLAG_NONE as _,
                    file,
                    line,
                    line,
                )
            }),
        ));
    }
    // Group 0 lists the ranks' locations (MPI_COMM_WORLD's order); a communicator's group
    // lists world ranks, i.e. positions in group 0.
    let world: Vec<u64> = (0..trace.meta.ranks).map(|r| location(r, 0)).collect();
    defs.push(group_def(
        0,
        s.id("MPI_COMM_WORLD locations"),
        ffi::OTF2_GROUP_TYPE_COMM_LOCATIONS as _,
        world,
    ));
    let mut used: Vec<(&Comm, u32)> = comms.used.iter().map(|(c, &i)| (c, i)).collect();
    used.sort_unstable_by_key(|u| u.1);
    let mut next_group = 1;
    let mut group = |members: &[Option<u32>], name: u32, kind, defs: &mut Vec<(&str, Def)>| {
        let ranks: Vec<u64> = members
            .iter()
            .map(|m| m.map_or(u64::MAX, u64::from))
            .collect();
        let id = next_group;
        next_group += 1;
        defs.push(group_def(id, name, kind, ranks));
        id
    };
    for (comm, id) in used {
        match comm {
            Comm::Group(g) => {
                let name = s.id(&comms.table.label(g));
                let members = comms.members.get(g).copied().unwrap_or(&[]);
                let gid = group(
                    members,
                    name,
                    ffi::OTF2_GROUP_TYPE_COMM_GROUP as _,
                    &mut defs,
                );
                defs.push(comm_def(id, name, gid));
            }
            Comm::Inter(bytes) => {
                let base = comm_name(bytes);
                let name = s.id(&base);
                let sides = comms.sides(bytes);
                let side = |i: usize| sides.get(i).copied().unwrap_or(&[]);
                let kind = ffi::OTF2_GROUP_TYPE_COMM_GROUP as _;
                let a = group(side(0), s.id(&format!("{base} side A")), kind, &mut defs);
                let b = group(side(1), s.id(&format!("{base} side B")), kind, &mut defs);
                defs.push((
                    "WriteInterComm",
                    Box::new(move |g| unsafe {
                        ffi::OTF2_GlobalDefWriter_WriteInterComm(
                            g,
                            id,
                            name,
                            a,
                            b,
                            ffi::UNDEFINED_U32,
                            ffi::OTF2_COMM_FLAG_NONE as _,
                        )
                    }),
                ));
            }
            Comm::Own => {
                let name = s.id("MPI_COMM_SELF");
                let gid = group(&[], name, ffi::OTF2_GROUP_TYPE_COMM_SELF as _, &mut defs);
                defs.push(comm_def(id, name, gid));
            }
        }
    }
    s.write(g)?;
    for (what, def) in defs {
        checked(def(g), what)?;
    }
    Ok(())
}

/// A group definition.
fn group_def(
    id: u32,
    name: u32,
    kind: ffi::OTF2_GroupType,
    members: Vec<u64>,
) -> (&'static str, Def) {
    (
        "WriteGroup",
        Box::new(move |g| unsafe {
            ffi::OTF2_GlobalDefWriter_WriteGroup(
                g,
                id,
                name,
                kind,
                ffi::OTF2_PARADIGM_MPI as _,
                ffi::OTF2_GROUP_FLAG_NONE as _,
                members.len() as u32,
                members.as_ptr(),
            )
        }),
    )
}

/// A communicator definition over group `group`.
fn comm_def(id: u32, name: u32, group: u32) -> (&'static str, Def) {
    (
        "WriteComm",
        Box::new(move |g| unsafe {
            ffi::OTF2_GlobalDefWriter_WriteComm(
                g,
                id,
                name,
                group,
                ffi::UNDEFINED_U32,
                ffi::OTF2_COMM_FLAG_NONE as _,
            )
        }),
    )
}
