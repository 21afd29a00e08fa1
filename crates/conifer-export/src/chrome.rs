//! Chrome trace-event JSON (the JSON object format), which Perfetto (ui.perfetto.dev) and
//! `chrome://tracing` open: one process per rank, one thread per recorded thread, one
//! complete (`X`) slice per MPI call with its arguments in `args`, and a flow (`s` → `f`) from
//! each send to the call that completed its matching receive.
//!
//! Matching follows MPI's non-overtaking rule: the n-th message from rank i to rank j with tag
//! t on one communicator is received by j's n-th receive of such a message. It is determined
//! only where every receive's source and tag are known (from the arguments or the status);
//! sender–receiver pairs with a receive of unknown source or tag on that communicator get no
//! flows. A first pass counts sends and receives per (communicator, sender, receiver, tag) so
//! that every flow written has both ends.

use crate::causal;
use crate::messages::{Comm, Op};
use crate::timeline::Span;
use crate::{rank_events, Event};
use conifer_analyze::context::CommTable;
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use serde_json::{json, Map, Value as Json};
use std::collections::{BTreeMap, HashSet};
use std::io::Write;

/// Messages between two ranks on one communicator with one tag.
type Channel = (Comm, u32, u32, i64);

/// How many messages each channel carries, and the channels whose matching is determined.
#[derive(Default)]
struct Channels {
    sends: BTreeMap<Channel, u64>,
    receives: BTreeMap<Channel, u64>,
    /// (communicator, receiver) pairs with a receive of unknown source, and (communicator,
    /// sender, receiver) with one of unknown tag: their matching is not determined.
    unknown_source: HashSet<(Comm, u32)>,
    unknown_tag: HashSet<(Comm, u32, u32)>,
}

impl Channels {
    fn count(&mut self, rank: u32, op: &Op) {
        match op {
            Op::Send { to, tag, comm, .. } | Op::Isend { to, tag, comm, .. } => {
                *self
                    .sends
                    .entry((comm.clone(), rank, *to, *tag))
                    .or_default() += 1;
            }
            Op::Recv {
                from, tag, comm, ..
            }
            | Op::IrecvComplete {
                from, tag, comm, ..
            } => match from {
                None => {
                    self.unknown_source.insert((comm.clone(), rank));
                }
                Some((from, _)) if *tag < 0 => {
                    self.unknown_tag.insert((comm.clone(), *from, rank));
                }
                Some((from, _)) => {
                    *self
                        .receives
                        .entry((comm.clone(), *from, rank, *tag))
                        .or_default() += 1
                }
            },
            _ => {}
        }
    }

    /// Flow ids: each determined channel's messages numbered from its base.
    fn flow_bases(&self) -> BTreeMap<Channel, (u64, u64)> {
        let mut next = 1u64;
        let mut bases = BTreeMap::new();
        for (ch, &sent) in &self.sends {
            let (comm, from, to, _) = ch;
            let received = self.receives.get(ch).copied().unwrap_or(0);
            let determined = !self.unknown_source.contains(&(comm.clone(), *to))
                && !self.unknown_tag.contains(&(comm.clone(), *from, *to));
            let n = sent.min(received);
            if determined && n > 0 {
                bases.insert(ch.clone(), (next, n));
                next += n;
            }
        }
        bases
    }
}

/// What an export wrote.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Written {
    /// Slices (one per call).
    pub slices: u64,
    /// Flows (send → receive pairs).
    pub flows: u64,
    /// How the timestamps were reconstructed, for a trace without per-call timing.
    pub reconstructed: Option<String>,
}

/// Writes `trace` as Chrome trace-event JSON to `out`.
pub fn export(trace: &Trace, out: &mut dyn Write) -> Result<Written, String> {
    let table = CommTable::new(trace);
    let reader = trace.reader();
    let mut channels = Channels::default();
    for rank in 0..trace.meta.ranks {
        for event in rank_events(&reader, &table, rank)? {
            for op in &event?.ops {
                channels.count(rank, op);
            }
        }
    }
    let bases = channels.flow_bases();
    let causal = causal::when_reconstructed(trace, &table)?;
    let described = causal::describe(trace, causal.as_ref());
    let io = |e: std::io::Error| format!("cannot write the JSON: {e}");
    let other = json!({
        "producer": format!("conifer {}", env!("CARGO_PKG_VERSION")),
        "command_line": trace.meta.command_line.join(" "),
        "ranks": trace.meta.ranks,
        "mpi": trace.meta.mpi_library_version,
        "timestamps": described,
    });
    writeln!(
        out,
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{other},\"traceEvents\":["
    )
    .map_err(io)?;
    let mut written = Written {
        reconstructed: causal.as_ref().map(|_| described.clone()),
        ..Written::default()
    };
    let mut first = true;
    let mut emit = |out: &mut dyn Write, e: Json| -> Result<(), String> {
        if !first {
            out.write_all(b",\n").map_err(io)?;
        }
        first = false;
        serde_json::to_writer(&mut *out, &e).map_err(|e| e.to_string())
    };
    for rank in 0..trace.meta.ranks {
        let host = trace
            .record
            .ranks
            .get(rank as usize)
            .map(|r| r.host.as_str())
            .unwrap_or("");
        let label = if host.is_empty() {
            format!("rank {rank}")
        } else {
            format!("rank {rank} ({host})")
        };
        emit(out, meta("process_name", rank, None, &label))?;
        emit(out, meta_sort(rank))?;
        // Per channel, how many messages this rank has sent / received so far.
        let mut sent: BTreeMap<Channel, u64> = BTreeMap::new();
        let mut received: BTreeMap<Channel, u64> = BTreeMap::new();
        let mut threads = HashSet::new();
        for event in causal::events(&reader, &table, rank, causal.as_ref())? {
            let event = event?;
            let thread = event.call.signature.thread;
            if threads.insert(thread) {
                emit(
                    out,
                    meta(
                        "thread_name",
                        rank,
                        Some(thread),
                        &format!("thread {thread}"),
                    ),
                )?;
            }
            emit(out, slice(rank, &event))?;
            written.slices += 1;
            for op in &event.ops {
                let (channel, counter, phase) = match op {
                    Op::Send { to, tag, comm, .. } | Op::Isend { to, tag, comm, .. } => {
                        ((comm.clone(), rank, *to, *tag), &mut sent, "s")
                    }
                    Op::Recv {
                        from: Some((from, _)),
                        tag,
                        comm,
                        ..
                    }
                    | Op::IrecvComplete {
                        from: Some((from, _)),
                        tag,
                        comm,
                        ..
                    } => ((comm.clone(), *from, rank, *tag), &mut received, "f"),
                    _ => continue,
                };
                let n = counter.entry(channel.clone()).or_default();
                let seq = *n;
                *n += 1;
                let Some(&(base, count)) = bases.get(&channel) else {
                    continue;
                };
                if seq < count {
                    emit(out, flow(phase, base + seq, rank, thread, event.span))?;
                    if phase == "f" {
                        written.flows += 1;
                    }
                }
            }
        }
    }
    out.write_all(b"\n]}\n").map_err(io)?;
    Ok(written)
}

/// Microseconds, the unit of `ts` and `dur`.
fn micros(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn meta(name: &str, rank: u32, thread: Option<u32>, label: &str) -> Json {
    let mut e = json!({"name": name, "ph": "M", "pid": rank, "args": {"name": label}});
    if let Some(t) = thread {
        e["tid"] = json!(t);
    }
    e
}

/// Ranks in rank order in the viewer.
fn meta_sort(rank: u32) -> Json {
    json!({"name": "process_sort_index", "ph": "M", "pid": rank, "args": {"sort_index": rank}})
}

/// The slice of one call, its arguments in `args`.
fn slice(rank: u32, event: &Event) -> Json {
    let call = &event.call;
    let mut args = Map::new();
    for (i, v) in call.signature.values.iter().enumerate() {
        let name = call
            .slots
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("arg{i}"));
        args.insert(name, Json::String(v.display(call.position(i)).to_string()));
    }
    args.insert("call".into(), json!(call.index));
    if call.signature.ret != 0 {
        args.insert("return".into(), json!(call.signature.ret));
    }
    if let Some(source) = call.at_source {
        args.insert("source".into(), json!(source));
    }
    json!({
        "name": call.name,
        "cat": "mpi",
        "ph": "X",
        "ts": micros(event.span.start_ns),
        "dur": micros(event.span.end_ns - event.span.start_ns),
        "pid": rank,
        "tid": call.signature.thread,
        "args": args,
    })
}

/// One end of a message's flow, bound to the enclosing slice: a send's at its call's start,
/// a receive's where the message had arrived, its call's end (1 ns inside the slice, so it
/// binds to it and not to a slice starting right after).
fn flow(phase: &str, id: u64, rank: u32, thread: u32, span: Span) -> Json {
    let ts = if phase == "f" {
        span.end_ns.saturating_sub(1).max(span.start_ns)
    } else {
        span.start_ns
    };
    json!({
        "name": "message",
        "cat": "p2p",
        "ph": phase,
        "id": id,
        "ts": micros(ts),
        "pid": rank,
        "tid": thread,
        "bp": "e",
    })
}
