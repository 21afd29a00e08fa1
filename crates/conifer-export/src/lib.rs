//! Conifer traces in the formats other tools read: OTF2 (Vampir, the Score-P ecosystem),
//! Chrome trace-event JSON (Perfetto) and SimGrid time-independent traces (SMPI replay).
//!
//! Every export reads the trace through the trace crate's decoding iterators, one rank at a
//! time ([`rank_events`]): memory stays bounded by the compressed trace and one rank's
//! pending requests, whatever the number of calls.

pub mod chrome;
pub mod messages;
pub mod otf2;
pub mod timeline;

use conifer_analyze::context::CommTable;
use conifer_trace::decode::{Call, CallReader};
use messages::{Messages, Op};
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
) -> Result<impl Iterator<Item = Result<Event<'t>, String>> + 't, String> {
    let mut messages = Messages::new(reader, table, rank)?;
    let mut clocks: HashMap<u32, Clock> = HashMap::new();
    let calls = reader
        .calls(rank)
        .filter(|c| c.as_ref().map_or(true, |c| c.name != "free"));
    Ok(calls.map(move |call| {
        let call = call.map_err(|e| e.0)?;
        let span = clocks.entry(call.signature.thread).or_default().next(&call);
        let ops = messages.ops(&call);
        Ok(Event { call, span, ops })
    }))
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
