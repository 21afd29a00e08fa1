//! Completion skeletons (see `conifer_trace::completion`): their calls differ in what
//! completed, which only the thread's order tells (each call's request array follows from the
//! previous one's), so their filled forms are counted by walking the thread once.

use conifer_trace::decode::Signature;
use conifer_trace::stored::{RankEntry, TraceRecord};
use conifer_trace::streams::{Filler, ThreadStreams};
use std::collections::HashMap;

/// A thread's completion calls: per (skeleton terminal, call site), each distinct filled
/// signature with its count (`None` for a call whose signature does not parse).
pub type CompletionFills = HashMap<(u32, Option<u32>), Vec<(Option<Signature>, u64)>>;

/// The filled completion calls of thread `thread` of `entry`, whose streams are `streams`.
pub fn completion_fills(
    record: &TraceRecord,
    entry: &RankEntry,
    thread: usize,
    streams: &ThreadStreams,
) -> CompletionFills {
    let mut counts: HashMap<(u32, Option<u32>), HashMap<Vec<u8>, u64>> = HashMap::new();
    if streams.values.is_empty() {
        return HashMap::new();
    }
    let ids = record.forest.as_ref().map(|f| &f.structure.ids);
    let mut filler = Filler::new(Some(streams));
    let mut terminals = record.thread_terminals(entry, thread);
    while let Some(t) = terminals.next() {
        if !filler.streams(t) {
            continue;
        }
        let Some(skeleton) = record.signatures.get(t as usize) else {
            continue;
        };
        let filled = filler.fill(t, skeleton).unwrap_or_default();
        if streams.values.iter().any(|(x, _)| *x == t) {
            let site = terminals
                .site()
                .and_then(|v| ids.and_then(|ids| ids.get(v as usize).copied()));
            *counts
                .entry((t, site))
                .or_default()
                .entry(filled.into_owned())
                .or_default() += 1;
        }
    }
    counts
        .into_iter()
        .map(|(key, fills)| {
            let mut fills: Vec<(Vec<u8>, u64)> = fills.into_iter().collect();
            fills.sort_unstable();
            let fills = fills
                .into_iter()
                .map(|(bytes, n)| (Signature::parse(&bytes), n))
                .collect();
            (key, fills)
        })
        .collect()
}
