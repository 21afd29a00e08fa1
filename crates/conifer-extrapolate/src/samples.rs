//! The input traces read into what fitting needs: per rank and thread, its calls as the
//! recorder wrote them (merge-chosen rank codes turned back into ranks relative to the
//! caller), each interned as a shape and its leaves (see [`crate::leaves`]); and, for the
//! largest input, each call's timing.

use crate::leaves::{split_call, split_comms, Leaves};
use conifer_compress::fast_hash::FastMap;
use conifer_format::membership::Membership;
use conifer_trace::decode::Signature;
use conifer_trace::{ReadCalls, Trace};

/// What a shape is the shape of.
pub enum Shape {
    /// A call.
    Call(Signature),
    /// A rank's list of communicators.
    Comms(Vec<Membership>),
}

/// Shapes and items (a shape with its leaves), interned over all inputs.
#[derive(Default)]
pub struct Items {
    /// Interned shapes.
    pub shapes: Vec<Shape>,
    shape_ids: FastMap<Vec<u8>, u32>,
    /// Interned items: (shape, leaves).
    pub items: Vec<(u32, Leaves)>,
    item_ids: FastMap<(u32, Leaves), u32>,
}

impl Items {
    fn intern(&mut self, key: Vec<u8>, shape: impl FnOnce() -> Shape, leaves: Leaves) -> u32 {
        let next = self.shapes.len() as u32;
        let s = *self.shape_ids.entry(key).or_insert(next);
        if s == next {
            self.shapes.push(shape());
        }
        let next = self.items.len() as u32;
        let i = *self.item_ids.entry((s, leaves.clone())).or_insert(next);
        if i == next {
            self.items.push((s, leaves));
        }
        i
    }
}

/// One rank of one input.
pub struct RankCalls {
    /// Per thread, its calls' items in order.
    pub threads: Vec<Vec<u32>>,
    /// The item of its communicators.
    pub comms: u32,
    /// Per thread, each call's (interval before it, duration) in ns: the means of its timing
    /// family (only for the input timing is taken from).
    pub times: Vec<Vec<(f64, f64)>>,
}

/// One input trace.
pub struct Run {
    /// Its rank count.
    pub p: i64,
    /// Its ranks.
    pub ranks: Vec<RankCalls>,
}

/// Reads `trace` into `items`; with `timed`, keeps every call's timing too.
pub fn read_run(trace: &Trace, items: &mut Items, timed: bool) -> Result<Run, String> {
    let reader = trace.reader();
    let mut ranks = Vec::with_capacity(trace.meta.ranks as usize);
    for rank in 0..trace.meta.ranks {
        let entry = &trace.record.ranks[rank as usize];
        let grids = crate::leaves::grids(&entry.comms);
        let mut threads = Vec::new();
        for seq in trace.thread_sequences(rank) {
            let mut calls = Vec::new();
            for bytes in seq {
                let sig = Signature::parse(&bytes).ok_or_else(|| {
                    format!("rank {rank} has a call that does not parse (a malformed trace)")
                })?;
                let (shape, leaves) = split_call(&sig, &grids);
                let key = conifer_format::signature::encode_signature(&shape);
                calls.push(items.intern(key, || Shape::Call(shape), leaves));
            }
            threads.push(calls);
        }
        let (key, leaves) = split_comms(&entry.comms);
        let comms = items.intern(key, || Shape::Comms(entry.comms.clone()), leaves);
        let mut times = Vec::new();
        if timed {
            let mut all = reader.calls(rank);
            for t in &threads {
                let mut thread = Vec::with_capacity(t.len());
                for _ in t {
                    let call = all.next().transpose().map_err(|e| e.0)?;
                    let timing = call.and_then(|c| c.timing).unwrap_or_default();
                    thread.push((timing.interval.mean(), timing.duration.mean()));
                }
                times.push(thread);
            }
        }
        ranks.push(RankCalls {
            threads,
            comms,
            times,
        });
    }
    Ok(Run {
        p: i64::from(trace.meta.ranks),
        ranks,
    })
}
