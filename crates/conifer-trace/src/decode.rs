//! Turning a trace back into calls: each rank's grammars expanded into signatures, each
//! signature parsed into its function and argument values, relative ranks restored.

use crate::as_run::{AsRunClock, RecorderTime, RunSpan};
use crate::small_map::SmallMap;
use conifer_format::signature::is_context;
pub use conifer_format::signature::Signature;
use conifer_format::stored::RankEntry;
use conifer_format::streams::Filler;
use conifer_format::timeline::CallTime;
use conifer_format::timing::CallTiming;
use conifer_format::value::{HandleRef, Position, Value};
use conifer_format::varint::Reader;
use conifer_format::{FunctionInfo, Trace};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

/// One decoded call.
pub struct Call<'t> {
    /// World rank.
    pub rank: u32,
    /// Position in its thread's sequence.
    pub index: u64,
    /// The signature (shared by the calls of one terminal, see [`Call::terminal`]).
    pub signature: Rc<Signature>,
    /// The call's terminal: its entry in the trace's signature table. Calls of one rank
    /// with the same terminal have the same signature, unless `streamed`.
    pub terminal: u32,
    /// True when the signature was filled from the thread's value streams: it may differ
    /// from the other calls of its terminal.
    pub streamed: bool,
    /// Function name.
    pub name: &'t str,
    /// Slot names.
    pub slots: &'t [String],
    /// The caller's position in the call's communicator, for restoring relative ranks.
    pub at: Option<Position<'t>>,
    /// The caller's position for each value where it differs from `at` (calls with several
    /// communicators or groups, such as `MPI_Group_translate_ranks`); empty otherwise.
    pub value_at: Vec<Option<Position<'t>>>,
    /// Timing statistics of this call's timing family, pooled over all ranks.
    pub timing: Option<CallTiming>,
    /// This call's own timing, with lossless timing.
    pub time: Option<CallTime>,
    /// Nanoseconds from the thread's first call to this call's start, with lossless timing,
    /// on the clock *without the recorder* (intervals and durations only).
    pub start_ns: Option<u64>,
    /// The recorder's own time around this call, with per-call timing (absent from traces
    /// written before Conifer kept it).
    pub recorder: Option<RecorderTime>,
    /// The call *as run* on the synchronised clock (rank 0's): when the program entered and
    /// left the call and when its MPI part ran, with per-call timing.
    pub run: Option<RunSpan>,
    /// Structure-tree call site that made the call (its id in the binary's structure tree),
    /// when a trace tree holds it.
    pub site: Option<u32>,
    /// That call site's source position (`file:line`), when known.
    pub at_source: Option<&'t str>,
    /// The path of the module holding the signature's caller, when the trace names it.
    pub caller_module: Option<&'t str>,
}

impl<'t> Call<'t> {
    /// Where the caller stands for value `i`: what its relative ranks are restored against.
    pub fn position(&self, i: usize) -> Option<Position<'t>> {
        self.value_at.get(i).copied().unwrap_or(self.at)
    }
}

impl fmt::Display for Call<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}", self.rank)?;
        if self.signature.thread > 0 {
            write!(f, ".t{}", self.signature.thread)?;
        }
        write!(f, " #{} {}(", self.index, self.name)?;
        for (i, v) in self.signature.values.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match self.slots.get(i) {
                Some(slot) => write!(f, "{slot}={}", v.display(self.position(i)))?,
                None => write!(f, "{}", v.display(self.position(i)))?,
            }
        }
        let ret = if self.signature.ret == 0 {
            "MPI_SUCCESS".to_string()
        } else {
            self.signature.ret.to_string()
        };
        write!(f, ") = {ret}")?;
        if let Some(site) = self.site {
            write!(f, "  @{}", self.at_source.unwrap_or("?"))?;
            write!(f, " [v{site}]")?;
        } else if let Some(c) = self.signature.caller {
            let module = self
                .caller_module
                .map_or("?", |m| m.rsplit('/').next().unwrap_or(m));
            write!(f, "  @{module}+{:#x}", c.offset)?;
        }
        if let Some(t) = &self.time {
            write!(f, "  {}", human_time(t.duration_ns as f64))?;
        } else if let Some(t) = &self.timing {
            write!(f, "  {}", human_time(t.duration.mean()))?;
        }
        Ok(())
    }
}

/// A duration in nanoseconds, in the unit that reads best.
pub fn human_time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.1}ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1}us", ns / 1e3)
    } else {
        format!("{ns:.0}ns")
    }
}

/// Why a trace cannot be decoded.
#[derive(Debug)]
pub struct DecodeError(pub String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

/// Reading a trace's calls: what the read side adds to the format's [`Trace`].
///
/// ```no_run
/// use conifer_trace::ReadCalls;
///
/// let trace = conifer_trace::open("run.cft".as_ref())?;
/// let reader = trace.reader();
/// for rank in 0..trace.meta.ranks {
///     for call in reader.calls(rank) {
///         let call = call?;
///         println!("rank {rank}, call {}: {call}", call.index);
///     }
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ReadCalls {
    /// The signature bytes each thread of `rank` recorded, thread by thread, in call order:
    /// exactly what the recorder wrote (rank fields the merge stored under another code are
    /// turned back into the recorder's relative form).
    fn thread_sequences(&self, rank: u32) -> Vec<impl Iterator<Item = Cow<'_, [u8]>> + '_>;

    /// Every call of `rank`, thread by thread, each thread in call order. Streams: memory does
    /// not grow with the number of calls. (To read many ranks, make one [`ReadCalls::reader`]:
    /// this computes the trace-wide tables again on every call.)
    fn calls(&self, rank: u32) -> impl Iterator<Item = Result<Call<'_>, DecodeError>> + '_;

    /// A reader of every rank's calls, with the trace-wide tables decoding needs (each
    /// signature's timing, the callers' modules) computed once.
    fn reader(&self) -> CallReader<'_>;
}

impl ReadCalls for Trace {
    fn thread_sequences(&self, rank: u32) -> Vec<impl Iterator<Item = Cow<'_, [u8]>> + '_> {
        let Some(entry) = self.record.ranks.get(rank as usize) else {
            return Vec::new();
        };
        let positions: conifer_compress::fast_hash::FastMap<&[u8], i64> = entry
            .comms
            .iter()
            .map(|m| (m.comm.as_slice(), m.my_rank))
            .collect();
        (0..entry.threads.len())
            .map(move |thread| {
                let positions = positions.clone();
                let mut requests = conifer_format::recorded::RequestContexts::default();
                signature_bytes(self, entry, thread).map(move |bytes| {
                    match conifer_format::recorded::as_recorded(
                        &bytes,
                        rank,
                        &positions,
                        &mut requests,
                    ) {
                        Cow::Borrowed(_) => bytes,
                        Cow::Owned(recorded) => Cow::Owned(recorded),
                    }
                })
            })
            .collect()
    }

    fn calls(&self, rank: u32) -> impl Iterator<Item = Result<Call<'_>, DecodeError>> + '_ {
        self.reader().calls(rank)
    }

    fn reader(&self) -> CallReader<'_> {
        let timing = self
            .record
            .timing_index()
            .into_iter()
            .map(|f| Some(self.record.timing.get(f? as usize)?.stats))
            .collect();
        let modules = self
            .meta
            .modules
            .iter()
            .map(|m| (conifer_format::caller::module_key(m), m.as_str()))
            .collect();
        CallReader {
            trace: self,
            shared: Rc::new(Shared {
                timing,
                modules,
                parsed: RefCell::new(Vec::new()),
            }),
        }
    }
}

/// The signature bytes of the calls of thread `thread` of `entry` in order (skeletons
/// filled from the thread's value streams; empty when a stream ran out, which only a
/// malformed trace does).
fn signature_bytes<'t>(
    trace: &'t Trace,
    entry: &'t RankEntry,
    thread: usize,
) -> impl Iterator<Item = Cow<'t, [u8]>> + 't {
    let mut terminals = trace.record.thread_terminals(entry, thread);
    let streams = entry
        .streams
        .get(thread)
        .and_then(|&s| trace.record.streams.get(s as usize));
    let mut filler = Filler::new(streams);
    std::iter::from_fn(move || {
        let t = terminals.next()?;
        let bytes = filler
            .fill(t, &trace.record.signatures[t as usize])
            .unwrap_or(Cow::Borrowed(&[]));
        Some(bytes)
    })
}

/// What decoding needs from the whole trace, computed once per [`CallReader`].
struct Shared<'t> {
    /// Each terminal's timing family statistics.
    timing: Vec<Option<CallTiming>>,
    /// Module key → path of the callers' modules.
    modules: HashMap<u32, &'t str>,
    /// Per terminal, its parsed signature once a rank met it, for every rank (not kept for
    /// signatures with rank-affine integers or filled from streams): a reader of 10⁵ ranks at
    /// once parses each signature once, not once per rank.
    parsed: RefCell<Vec<Option<Rc<Parsed<'t>>>>>,
}

impl<'t> Shared<'t> {
    /// Terminal `terminal`'s parsed signature, parsed from `bytes` (call `index` of `rank`)
    /// unless a rank met it before; kept for the other ranks when it does not depend on the
    /// rank. True with it when it is the rank's own (depends on the rank).
    fn parsed(
        &self,
        trace: &'t Trace,
        terminal: u32,
        streamed: bool,
        (rank, index, bytes): (u32, u64, &[u8]),
    ) -> Result<(Rc<Parsed<'t>>, bool), DecodeError> {
        let slot = terminal as usize;
        if !streamed {
            if let Some(p) = self.parsed.borrow().get(slot).and_then(Option::as_ref) {
                return Ok((Rc::clone(p), false));
            }
        }
        let (parsed, per_rank) = Parsed::new(trace, rank, index, bytes)?;
        let parsed = Rc::new(parsed);
        if !streamed && !per_rank {
            let mut cache = self.parsed.borrow_mut();
            if cache.len() <= slot {
                cache.resize(slot + 1, None);
            }
            cache[slot] = Some(Rc::clone(&parsed));
        }
        Ok((parsed, per_rank))
    }
}

/// Reads the calls of any rank of a trace (see [`ReadCalls::reader`]).
pub struct CallReader<'t> {
    trace: &'t Trace,
    shared: Rc<Shared<'t>>,
}

impl<'t> CallReader<'t> {
    /// The trace read.
    pub fn trace(&self) -> &'t Trace {
        self.trace
    }

    /// The timing statistics of terminal `terminal`'s family (pooled over every rank), if it
    /// has any.
    pub fn family_timing(&self, terminal: u32) -> Option<&CallTiming> {
        self.shared.timing.get(terminal as usize)?.as_ref()
    }

    /// The functions `rank` calls, in catalog order, read from its threads' grammars and
    /// trees without expanding them.
    pub fn functions(&self, rank: u32) -> Vec<&'t FunctionInfo> {
        let record = &self.trace.record;
        let Some(entry) = record.ranks.get(rank as usize) else {
            return Vec::new();
        };
        let ids: std::collections::HashSet<u64> = (0..entry.threads.len())
            .flat_map(|thread| record.thread_terminal_counts(entry, thread).into_keys())
            .filter_map(|t| Reader::new(record.signatures.get(t as usize)?).u64())
            .collect();
        self.trace
            .catalog
            .iter()
            .filter(|f| ids.contains(&u64::from(f.id)))
            .collect()
    }

    /// Every call of `rank`, thread by thread, each thread in call order. A signature is
    /// parsed once per terminal of each thread and shared by that terminal's calls (those
    /// filled from value streams are parsed on every call).
    pub fn calls(&self, rank: u32) -> impl Iterator<Item = Result<Call<'t>, DecodeError>> + 't {
        let trace = self.trace;
        let shared = Rc::clone(&self.shared);
        let entry = &trace.record.ranks[rank as usize];
        let memberships: Rc<HashMap<&[u8], Position>> = Rc::new(
            entry
                .comms
                .iter()
                .rev()
                .map(|m| {
                    let at = Position {
                        rank: m.my_rank,
                        grid: m.grid.as_ref(),
                    };
                    (m.comm.as_slice(), at)
                })
                .collect(),
        );
        let structure = trace.record.forest.as_ref().map(|f| &f.structure);
        (0..entry.threads.len()).flat_map(move |thread| {
            let memberships = Rc::clone(&memberships);
            let shared = Rc::clone(&shared);
            let mut terminals = trace.record.thread_terminals(entry, thread);
            let mut filler = Filler::new(
                entry
                    .streams
                    .get(thread)
                    .and_then(|&s| trace.record.streams.get(s as usize)),
            );
            let calls = trace.record.thread_calls(entry, thread);
            let all_times = entry
                .timelines
                .get(thread)
                .and_then(|t| conifer_format::timeline::decode(t, calls))
                .unwrap_or_default();
            let recorder: Vec<RecorderTime> = entry
                .recorder_times
                .get(thread)
                .and_then(|t| conifer_format::timeline::decode(t, calls))
                .unwrap_or_default()
                .into_iter()
                .map(RecorderTime::from_call_time)
                .collect();
            let mut as_run = AsRunClock::new(&entry.clock, thread, &all_times, &recorder);
            let mut recorder = recorder.into_iter();
            let mut times = all_times.into_iter();
            let mut clock = 0u64;
            let mut request_positions: SmallMap<HandleRef, Position> = SmallMap::default();
            // The parsed signatures of this rank's own (rank-affine integers resolved for
            // it); the others are shared by all ranks.
            let mut own: SmallMap<u32, Rc<Parsed>> = SmallMap::default();
            let mut scratch = Vec::new();
            let mut index = 0u64;
            // Boxed: `flat_map` keeps room for two inner iterators inline, and a reader of 10⁵
            // ranks keeps every rank's iterator alive at once.
            let calls: Box<dyn Iterator<Item = Result<Call<'t>, DecodeError>> + 't> =
                Box::new(std::iter::from_fn(move || {
                    let terminal = terminals.next()?;
                    let site = terminals.site();
                    let call_index = index;
                    index += 1;
                    let time = times.next();
                    let start_ns = time.map(|t| {
                        clock += t.interval_ns;
                        let start = clock;
                        clock += t.duration_ns;
                        start
                    });
                    let recorder_time = recorder.next();
                    let run = time.map(|t| as_run.next(t, recorder_time.unwrap_or_default()));
                    let streamed = filler.streams(terminal);
                    let known = own.get(&terminal).filter(|_| !streamed).map(Rc::clone);
                    let parsed = match known {
                        Some(p) => p,
                        None => {
                            let bytes = filler
                                .fill(terminal, &trace.record.signatures[terminal as usize])
                                .unwrap_or(Cow::Borrowed(&[]));
                            match shared.parsed(
                                trace,
                                terminal,
                                streamed,
                                (rank, call_index, &bytes),
                            ) {
                                Ok((p, true)) if !streamed => {
                                    own.insert(terminal, Rc::clone(&p));
                                    p
                                }
                                Ok((p, _)) => p,
                                Err(e) => return Some(Err(e)),
                            }
                        }
                    };
                    // Positions are worked out per call: kept per terminal, they made most of
                    // what a reader of 10⁶ ranks holds per rank.
                    let template = Template::new(parsed, &memberships, &mut scratch);
                    let at = match template.comm_position {
                        Some(p) => {
                            for req in &template.parsed.requests {
                                request_positions.insert(*req, p);
                            }
                            Some(p)
                        }
                        None => template
                            .parsed
                            .requests
                            .iter()
                            .find_map(|r| request_positions.get(r).copied()),
                    };
                    let caller_module = template
                        .parsed
                        .signature
                        .caller
                        .and_then(|c| shared.modules.get(&c.module).copied());
                    Some(Ok(Call {
                        rank,
                        index: call_index,
                        name: &template.parsed.info.name,
                        slots: &template.parsed.info.slots,
                        at,
                        value_at: template.value_at,
                        timing: shared.timing[terminal as usize],
                        time,
                        start_ns,
                        recorder: recorder_time,
                        run,
                        signature: Rc::clone(&template.parsed.signature),
                        terminal,
                        streamed,
                        site: site.and_then(|s| structure?.ids.get(s as usize).copied()),
                        at_source: site.and_then(|s| structure?.locs.get(s as usize)?.as_deref()),
                        caller_module,
                    }))
                }));
            calls
        })
    }
}

/// What every call of one terminal shares: its parsed signature (rank-affine integers
/// resolved), its function and the caller's positions in its communicators.
struct Template<'t> {
    parsed: Rc<Parsed<'t>>,
    /// The caller's position in the call's (first) communicator or group.
    comm_position: Option<Position<'t>>,
    /// Per value, where it differs from `at` (see [`Call::value_at`]).
    value_at: Vec<Option<Position<'t>>>,
}

/// What a terminal's calls share whoever makes them: the parsed signature, its function and
/// its request handles.
struct Parsed<'t> {
    signature: Rc<Signature>,
    info: &'t FunctionInfo,
    /// The request handles among the values.
    requests: Vec<HandleRef>,
}

impl<'t> Parsed<'t> {
    /// From the signature bytes of call `index` of world rank `rank`, its rank-affine
    /// integers resolved for that rank; true with it when there were any (the result is then
    /// that rank's alone).
    fn new(
        trace: &'t Trace,
        rank: u32,
        index: u64,
        bytes: &[u8],
    ) -> Result<(Parsed<'t>, bool), DecodeError> {
        let mut signature = Signature::parse(bytes).ok_or_else(|| {
            DecodeError(format!(
                "rank {rank}: call {index} has a malformed signature"
            ))
        })?;
        let per_rank = conifer_format::recorded::resolve(&mut signature, rank);
        let info = trace
            .catalog
            .iter()
            .find(|c| c.id == signature.function)
            .ok_or_else(|| {
                DecodeError(format!(
                    "rank {rank}: unknown function id {}",
                    signature.function
                ))
            })?;
        let requests = signature.requests().collect();
        let parsed = Parsed {
            signature: Rc::new(signature),
            info,
            requests,
        };
        Ok((parsed, per_rank))
    }
}

impl<'t> Template<'t> {
    /// `parsed` as the caller whose positions in its communicators are `memberships` sees it.
    fn new(
        parsed: Rc<Parsed<'t>>,
        memberships: &HashMap<&[u8], Position<'t>>,
        scratch: &mut Vec<u8>,
    ) -> Template<'t> {
        let signature = &parsed.signature;
        let mut lookup = |c: &Value| {
            scratch.clear();
            c.encode(scratch);
            memberships.get(scratch.as_slice()).copied()
        };
        let comm_position = signature.comm().and_then(&mut lookup);
        // With one communicator or group (or none), every value's is `at`'s.
        let several = signature.values.iter().filter(|v| is_context(v)).nth(1);
        let value_at = if several.is_some() {
            let contexts = signature.contexts();
            contexts
                .into_iter()
                .map(|c| c.and_then(&mut lookup))
                .collect()
        } else {
            Vec::new()
        };
        Template {
            parsed,
            comm_position,
            value_at,
        }
    }
}
