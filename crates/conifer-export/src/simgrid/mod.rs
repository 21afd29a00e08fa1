//! SimGrid time-independent traces, in the action grammar SMPI's offline replay of SimGrid
//! 3.32 reads (`smpirun -replay LIST`, `src/smpi/internals/smpi_replay.cpp`): one file per
//! rank, `rank-R.txt`, and the list of those files, [`LIST`], one path per line in rank
//! order. Each line is `R action args…`; sizes are bytes (the file starts with a bare
//! `init`, which makes `MPI_BYTE` the replay's default datatype) and peers are world ranks.
//!
//! | calls | actions |
//! |---|---|
//! | `MPI_Init`, `MPI_Init_thread` | `init` (always the first line) |
//! | `MPI_Finalize` | `finalize` |
//! | time between two calls | `compute FLOPS` (seconds × `--flops-per-second`) |
//! | `MPI_Send`, `Ssend`, `Bsend`, `Rsend` | `send TO TAG BYTES` |
//! | `MPI_Recv` | `recv FROM TAG BYTES` |
//! | `MPI_Isend` (all modes), a started persistent send | `isend TO TAG BYTES` |
//! | `MPI_Irecv`, a started persistent receive | `irecv FROM TAG BYTES` |
//! | `MPI_Sendrecv`, `Sendrecv_replace` | `isend`, `recv`, `wait` (keeps both tags) |
//! | a request completed by `MPI_Wait`/`Test`/`Waitany`/`Testany`/`Waitsome`/`Testsome`, or by `Waitall`/`Testall` while others are pending | `wait SRC DST TAG` |
//! | `MPI_Waitall`/`Testall` completing every pending request | `waitall` |
//! | collectives (and their `I` forms) on a communicator of all ranks | see `collective.rs` |
//! | `MPI_Comm_size`, `Comm_split`, `Comm_dup` | `comm_size P`, `comm_split`, `comm_dup` |
//!
//! The replay files each posted request under (sender, receiver, tag) and `wait` completes
//! the oldest one filed under its arguments, while `waitall` completes every pending
//! request: hence `waitall` only where the traced call completed all of them. A
//! non-blocking receive from `MPI_ANY_SOURCE` or with `MPI_ANY_TAG` is written with the
//! sender and tag its completion's status recorded (the lines after it are held back until
//! then, at most [`HOLD_LIMIT`]); without a status it keeps SMPI's wildcards (`-555`,
//! `-444`), filed under sender `-556`. Tests that complete nothing, calls on threads other
//! than the first, collectives on other communicators and every other MPI function are left
//! out and counted ([`Left`]); records that are not MPI calls (the heap tracker's `free`)
//! count as computation. Non-blocking collectives are replayed as the blocking ones at the
//! call that starts them.

mod collective;
mod writer;

use crate::messages::{Comm, Op};
use crate::{rank_events, Event, Left};
use conifer_analyze::call::Args;
use conifer_analyze::context::CommTable;
use conifer_analyze::types::TypeSizes;
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
pub use writer::HOLD_LIMIT;
use writer::{source_of, tag_of, RankWriter, Resolved};

/// The list of per-rank files, in the output directory (`smpirun -replay` reads it).
pub const LIST: &str = "traces.txt";

/// The per-rank file of `rank`.
pub fn rank_file(rank: u32) -> String {
    format!("rank-{rank}.txt")
}

/// What an export wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// Ranks (files besides the list).
    pub ranks: u32,
    /// Actions, over all ranks.
    pub actions: u64,
    /// Calls left out.
    pub left: Left,
}

/// Writes `trace` to directory `dir` (created if needed), turning time between calls into
/// `compute` actions at `flops_per_second`.
pub fn export(trace: &Trace, dir: &Path, flops_per_second: f64) -> Result<Written, String> {
    if !(flops_per_second.is_finite() && flops_per_second > 0.0) {
        return Err(format!(
            "--flops-per-second must be a positive number, not {flops_per_second}"
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let table = CommTable::new(trace);
    let reader = trace.reader();
    // Communicators holding every rank, with their members' world ranks by local rank.
    let ranks = trace.meta.ranks;
    let mut everyone: HashMap<Comm, Vec<u32>> = table
        .groups()
        .into_iter()
        .filter_map(|(group, members)| {
            let members: Option<Vec<u32>> = members.iter().copied().collect();
            let members = members.filter(|m| is_permutation(m, ranks))?;
            Some((Comm::Group(group), members))
        })
        .collect();
    if ranks == 1 {
        everyone.insert(Comm::Own, vec![0]);
    }
    let mut written = Written {
        ranks,
        ..Written::default()
    };
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
    let mut list = String::new();
    for rank in 0..ranks {
        let path = dir.join(rank_file(rank));
        let file =
            File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let io = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
        let mut w = RankWriter::new(rank, BufWriter::new(file), flops_per_second).map_err(io)?;
        let mut events = rank_events(&reader, &table, rank)?;
        let mut main_thread = None;
        let mut previous_end = None;
        while let Some(event) = events.next() {
            let event = event?;
            if !event.call.name.starts_with("MPI_") {
                // A record of the heap tracker (`free`): application time.
                continue;
            }
            let thread = event.call.signature.thread;
            if *main_thread.get_or_insert(thread) != thread {
                written.left.add(&format!(
                    "{} (on a thread other than the first)",
                    event.call.name
                ));
                continue;
            }
            if let Some(end) = previous_end {
                w.elapse(event.span.start_ns.saturating_sub(end));
            }
            previous_end = Some(event.span.end_ns);
            let call = Translation {
                event: &event,
                types: events.messages().types(),
                everyone: &everyone,
                rank,
            };
            call.translate(&mut w, &mut written.left)
                .map_err(|e| match e {
                    Error::Io(e) => io(e),
                    Error::Export(e) => e,
                })?;
        }
        written.actions += w.finish().map_err(io)?;
        list.push_str(&format!("{}\n", path.display()));
    }
    let path = dir.join(LIST);
    std::fs::write(&path, list).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(written)
}

/// True when `members` holds each of `0..ranks` once.
fn is_permutation(members: &[u32], ranks: u32) -> bool {
    let mut seen = vec![false; ranks as usize];
    members.len() == ranks as usize
        && members
            .iter()
            .all(|&m| m < ranks && !std::mem::replace(&mut seen[m as usize], true))
}

/// Why a translation failed.
enum Error {
    /// Writing the file.
    Io(std::io::Error),
    /// A call SMPI cannot replay.
    Export(String),
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// One call being translated, with what its translation needs.
struct Translation<'a, 't> {
    event: &'a Event<'t>,
    types: &'a TypeSizes,
    everyone: &'a HashMap<Comm, Vec<u32>>,
    rank: u32,
}

impl Translation<'_, '_> {
    /// Writes the call's actions to `w`, or counts it in `left`.
    fn translate<W: Write>(&self, w: &mut RankWriter<W>, left: &mut Left) -> Result<(), Error> {
        let call = &self.event.call;
        let name = call.name.strip_prefix("MPI_").unwrap_or(call.name);
        let name = name.strip_suffix("_c").unwrap_or(name);
        let ops = &self.event.ops;
        match name {
            "Init" | "Init_thread" => {}
            "Finalize" => w.text("finalize".into())?,
            "Comm_size" => {
                let a = self.args();
                w.text(match a.int("size") {
                    Some(size) => format!("comm_size {size}"),
                    None => "comm_size".into(),
                })?
            }
            "Comm_split" => w.text("comm_split".into())?,
            "Comm_dup" => w.text("comm_dup".into())?,
            "Sendrecv" | "Sendrecv_replace" => self.sendrecv(w)?,
            "Waitall" | "Testall" => {
                let done = completions(ops);
                if name == "Testall" && done.is_empty() {
                    left.add(&format!("{} (completing nothing)", call.name));
                } else {
                    w.wait_all(done)?;
                }
            }
            "Send" | "Ssend" | "Bsend" | "Rsend" | "Recv" | "Isend" | "Issend" | "Ibsend"
            | "Irsend" | "Irecv" | "Start" | "Startall" | "Wait" | "Test" | "Waitany"
            | "Testany" | "Waitsome" | "Testsome" => {
                if name.starts_with("Test") && ops.is_empty() {
                    left.add(&format!("{} (completing nothing)", call.name));
                }
                for op in ops {
                    p2p(w, op)?;
                }
            }
            _ => match ops.first() {
                Some(Op::Collective {
                    operation,
                    comm,
                    root,
                    ..
                }) => match self.everyone.get(comm) {
                    Some(members) => {
                        let cx = collective::Context {
                            types: self.types,
                            members,
                            me: self.rank,
                            root: *root,
                        };
                        let action =
                            collective::action(operation, &self.args(), &cx).map_err(|e| {
                                Error::Export(format!(
                                    "rank {} call {} ({}): {e}",
                                    self.rank, call.index, call.name
                                ))
                            })?;
                        match action {
                            Some(text) => w.text(text)?,
                            None => left.add(call.name),
                        }
                    }
                    None => left.add(&format!("{} (on a communicator of fewer ranks)", call.name)),
                },
                _ => left.add(call.name),
            },
        }
        Ok(())
    }

    /// The call's arguments by name.
    fn args(&self) -> Args<'_> {
        let call = &self.event.call;
        Args {
            name: call.name,
            slots: call.slots,
            values: &call.signature.values,
        }
    }

    /// `MPI_Sendrecv`: both halves as non-blocking operations around the receive, so that
    /// neither blocks the other and both tags are kept (SMPI's own `sendRecv` action uses
    /// tag 0).
    fn sendrecv<W: Write>(&self, w: &mut RankWriter<W>) -> std::io::Result<()> {
        let ops = &self.event.ops;
        let send = ops.iter().find_map(|op| match op {
            Op::Send { to, tag, bytes, .. } => Some((*to, *tag, *bytes)),
            _ => None,
        });
        let receive = ops.iter().find(|op| matches!(op, Op::Recv { .. }));
        let (Some((to, tag, bytes)), Some(receive)) = (send, receive) else {
            // One half to or from MPI_PROC_NULL: the other alone, blocking.
            for op in ops {
                p2p(w, op)?;
            }
            return Ok(());
        };
        w.isend(None, to, tag, bytes)?;
        p2p(w, receive)?;
        w.wait((i64::from(self.rank), i64::from(to), tag_of(tag)))
    }
}

/// Writes the action of point-to-point op `op`.
fn p2p<W: Write>(w: &mut RankWriter<W>, op: &Op) -> std::io::Result<()> {
    match op {
        Op::Send { to, tag, bytes, .. } => w.text(format!("send {to} {} {bytes}", tag_of(*tag))),
        Op::Recv {
            from, tag, bytes, ..
        } => w.text(format!(
            "recv {} {} {bytes}",
            source_of(from.map(|(world, _)| world)),
            tag_of(*tag)
        )),
        Op::Isend {
            to,
            tag,
            bytes,
            request,
            ..
        } => w.isend(Some(*request), *to, *tag, *bytes),
        Op::IrecvRequest {
            from,
            tag,
            bytes,
            request,
            ..
        } => w.irecv(*request, *from, *tag, *bytes),
        Op::IrecvCancel { request } => w.cancel(*request),
        Op::IsendComplete { .. } | Op::IrecvComplete { .. } => {
            for (request, resolved) in completions(std::slice::from_ref(op)) {
                if let Some(key) = w.complete(request, resolved)? {
                    w.wait(key)?;
                }
            }
            Ok(())
        }
        Op::Collective { .. } => Ok(()),
    }
}

/// The requests `ops` complete, with what their statuses tell of receives.
fn completions(ops: &[Op]) -> Vec<(u64, Option<Resolved>)> {
    ops.iter()
        .filter_map(|op| match op {
            Op::IsendComplete { request } => Some((*request, None)),
            Op::IrecvComplete {
                from,
                tag,
                bytes,
                request,
                ..
            } => Some((*request, Some((from.map(|(world, _)| world), *tag, *bytes)))),
            _ => None,
        })
        .collect()
}
