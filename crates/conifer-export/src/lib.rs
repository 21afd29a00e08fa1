//! Conifer traces in the formats other tools read: OTF2 (Vampir, the Score-P ecosystem),
//! Chrome trace-event JSON (Perfetto) and SimGrid time-independent traces (SMPI replay).
//!
//! Every export reads the trace through the trace crate's decoding iterators, one rank at a
//! time ([`rank_events`]): memory stays bounded by the compressed trace and one rank's
//! pending requests, whatever the number of calls.

pub mod causal;
pub mod chrome;
pub mod otf2;
pub mod shifts;
pub mod simgrid;
pub mod timeline;

use conifer_analyze::context::CommTable;
pub use conifer_analyze::messages;
use conifer_trace::decode::{Call, CallReader, DecodeError};
use messages::{Messages, Op};
use shifts::Causal;
use std::collections::{BTreeMap, HashMap};
use timeline::{Clock, Span};

/// One call with its time and what it does in message terms.
pub struct Event<'t> {
    /// The call.
    pub call: Call<'t>,
    /// When it ran.
    pub span: Span,
    /// Its messages, requests and collectives.
    pub ops: Vec<Op>,
}

/// The events of world rank `rank`, thread by thread, each thread in call order. Conifer's
/// own `free` records (heap tracking) are not MPI calls and are left out.
pub fn rank_events<'t>(
    reader: &CallReader<'t>,
    table: &'t CommTable,
    rank: u32,
) -> Result<RankEvents<'t>, String> {
    let calls = reader
        .calls(rank)
        .filter(|c| c.as_ref().map_or(true, |c| c.name != "free"));
    let trace = reader.trace();
    Ok(RankEvents {
        calls: Box::new(calls),
        messages: Messages::new(reader, table, rank)?,
        clocks: HashMap::new(),
        causal: None,
        cursors: HashMap::new(),
        rank,
        clock: &trace.record.ranks[rank as usize].clock,
        origin_ns: conifer_trace::clock::earliest_ns(trace.record.ranks.iter().map(|r| &r.clock)),
    })
}

/// One rank's [`Event`]s (see [`rank_events`]); between events, [`RankEvents::messages`]
/// gives the state the ops were derived from (datatype sizes, pending requests).
pub struct RankEvents<'t> {
    calls: Box<dyn Iterator<Item = Result<Call<'t>, DecodeError>> + 't>,
    messages: Messages<'t>,
    clocks: HashMap<u32, Clock>,
    /// The shifts that make a reconstructed timeline causal, when applied.
    causal: Option<&'t Causal>,
    cursors: HashMap<u32, shifts::Cursor<'t>>,
    rank: u32,
    /// The rank's clock (offsets to rank 0, where its threads start).
    clock: &'t conifer_trace::clock::RankClock,
    /// The run's earliest moment on the synchronised clock: timestamps count from here.
    origin_ns: i64,
}

impl<'t> RankEvents<'t> {
    /// These events with `causal`'s shifts applied (see [`causal`]).
    pub fn causal(mut self, causal: &'t Causal) -> Self {
        self.causal = Some(causal);
        self
    }

    /// The follower that turns this rank's calls into ops.
    pub fn messages(&self) -> &Messages<'t> {
        &self.messages
    }
}

impl<'t> Iterator for RankEvents<'t> {
    type Item = Result<Event<'t>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let call = match self.calls.next()? {
            Ok(call) => call,
            Err(e) => return Some(Err(e.0)),
        };
        let (clock, origin) = (self.clock, self.origin_ns);
        let thread = call.signature.thread;
        let mut span = self
            .clocks
            .entry(thread)
            .or_insert_with(|| Clock::new(clock, thread as usize, origin))
            .next(&call);
        if let Some(causal) = self.causal {
            let (rank, cursors) = (self.rank, &mut self.cursors);
            let (start, end) = cursors
                .entry(thread)
                .or_insert_with(|| causal.cursor(rank, thread))
                .next_call();
            span.start_ns += start;
            span.end_ns += end;
        }
        let ops = self.messages.ops(&call);
        Some(Ok(Event { call, span, ops }))
    }
}

/// Calls of functions a format cannot express, counted by function: reported once on stderr.
#[derive(Debug, Default)]
pub struct Left {
    counts: BTreeMap<String, u64>,
}

impl Left {
    /// Notes one call of `function` left out.
    pub fn add(&mut self, function: &str) {
        *self.counts.entry(function.to_string()).or_default() += 1;
    }

    /// The functions left out, with their calls.
    pub fn counts(&self) -> &BTreeMap<String, u64> {
        &self.counts
    }

    /// One line for stderr, `None` when nothing was left out.
    pub fn report(&self, format: &str) -> Option<String> {
        if self.counts.is_empty() {
            return None;
        }
        let list: Vec<String> = self
            .counts
            .iter()
            .map(|(f, n)| format!("{f} ×{n}"))
            .collect();
        Some(format!(
            "conifer export {format}: {} calls the format cannot express were left out: {}",
            self.counts.values().sum::<u64>(),
            list.join(", ")
        ))
    }
}
