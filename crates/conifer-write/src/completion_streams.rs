//! The value streams of a thread's completion skeletons, fed one call at a time while the
//! program runs (the layout is [`conifer_format::completion`]'s): per call site, its series
//! and the distinct values they index.

use conifer_compress::fast_hash::FastMap;
use conifer_compress::tree::{Series, SeriesBuilder};
use conifer_format::completion::{
    outputs_parts, Completed, OutputParts, Split, CHANGES, ITEMS, ITEM_COUNTS, OUTPUTS, SERIES,
    SLOTS, VALUES,
};
use conifer_format::streams::ThreadStreams;
use conifer_format::value::encode_array_header;
use std::collections::hash_map::Entry;

/// Runs a series compares a new run with.
const WINDOW: usize = 16;

/// One completion skeleton's streams.
struct Site {
    series: Vec<SeriesBuilder>,
    /// Distinct values → index into `values`.
    index: FastMap<Box<[u8]>, u32>,
    values: Vec<Vec<u8>>,
    /// Its call site's request arrays: an index into [`CompletionSites::arrays`] (a repeated
    /// poll reaches them without hashing the site's key).
    arrays: usize,
    /// True when its calls have request arrays.
    requests: bool,
    /// What the previous call's outputs appended: (series, value).
    last_outputs: Vec<(usize, u64)>,
}

/// A request array, value by value: the values' bytes one after another, and where each ends.
#[derive(Default)]
struct Flat {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Flat {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> &[u8] {
        let from = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[from..self.ends[i]]
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    fn push(&mut self, value: &[u8]) {
        self.bytes.extend_from_slice(value);
        self.ends.push(self.bytes.len());
    }
}

/// What a call site (the calls that found nothing and the others) remembers of its previous
/// request array.
#[derive(Default)]
struct Arrays {
    /// The previous array (empty: none).
    previous: Flat,
    /// The slots the previous call completed.
    completed: Vec<usize>,
    /// The value completed slots take, once an explicit change showed it.
    null: Option<Vec<u8>>,
}

/// Buffers a call is taken apart in, kept between calls so that steady state allocates
/// nothing.
#[derive(Default)]
struct Scratch {
    /// The array the call was expected to pass, then the one it passed.
    expected: Flat,
    /// Per slot of the array: completed by the previous call.
    completed: Vec<bool>,
    /// The slots that differ from the expected array.
    changed: Vec<usize>,
    /// A whole array, encoded.
    array: Vec<u8>,
    outputs: OutputParts,
}

impl Site {
    fn new(arrays: usize) -> Site {
        Site {
            series: (0..SERIES)
                .map(|_| SeriesBuilder::new(true, WINDOW))
                .collect(),
            index: FastMap::default(),
            values: Vec::new(),
            arrays,
            requests: false,
            last_outputs: Vec::new(),
        }
    }

    /// The index of value `bytes`, a new one for a value not seen before.
    fn index_of(&mut self, bytes: &[u8]) -> u64 {
        if let Some(&k) = self.index.get(bytes) {
            return k.into();
        }
        let k = self.values.len() as u32;
        self.index.insert(bytes.into(), k);
        self.values.push(bytes.to_vec());
        k.into()
    }

    /// Appends a call's request array, whose values are `sig`'s bytes at `elements`, given its
    /// call site's `arrays`.
    fn push_requests(
        &mut self,
        arrays: &mut Arrays,
        sig: &[u8],
        elements: &[(usize, usize)],
        scratch: &mut Scratch,
    ) {
        self.requests = true;
        let len = elements.len();
        let now = |i: usize| &sig[elements[i].0..elements[i].1];
        // The array expected: the previous one with its completed slots null (once known).
        let Scratch {
            expected,
            completed,
            changed,
            ..
        } = scratch;
        expected.clear();
        changed.clear();
        if arrays.previous.len() == len {
            completed.clear();
            completed.resize(len, false);
            arrays
                .completed
                .iter()
                .filter(|&&s| s < len)
                .for_each(|&s| completed[s] = true);
            for (i, &done) in completed.iter().enumerate() {
                match &arrays.null {
                    Some(null) if done => expected.push(null),
                    _ => expected.push(arrays.previous.get(i)),
                }
                if now(i) != expected.get(i) {
                    changed.push(i);
                }
            }
        }
        if arrays.previous.len() != len || changed.len() * 2 > len {
            let array = &mut scratch.array;
            array.clear();
            encode_array_header(array, len);
            arrays.previous.clear();
            for i in 0..len {
                array.extend_from_slice(now(i));
                arrays.previous.push(now(i));
            }
            let k = self.index_of(&scratch.array);
            self.series[CHANGES].push(0);
            self.series[VALUES].push(k);
            return;
        }
        self.series[CHANGES].push(1 + scratch.changed.len() as u64);
        let mut null = None;
        for &slot in &scratch.changed {
            let k = self.index_of(now(slot));
            self.series[SLOTS].push(slot as u64);
            self.series[VALUES].push(k);
            if scratch.completed[slot] {
                null = Some(slot);
            }
        }
        // The array now: the expected one with the changed slots as passed.
        arrays.previous.clear();
        let mut changed = scratch.changed.iter().peekable();
        for i in 0..len {
            if changed.next_if_eq(&&i).is_some() {
                arrays.previous.push(now(i));
            } else {
                arrays.previous.push(scratch.expected.get(i));
            }
        }
        if let Some(slot) = null {
            let value = arrays.null.get_or_insert_with(Vec::new);
            value.clear();
            value.extend_from_slice(now(slot));
        }
    }

    /// Appends a call's outputs.
    fn push_outputs(&mut self, outputs: &[u8], parts: &mut OutputParts) {
        if outputs_parts(outputs, parts).is_none() {
            parts.head.clear();
            parts.head.push(0);
            parts.head.extend_from_slice(outputs);
        }
        let mut pushed = std::mem::take(&mut self.last_outputs);
        pushed.clear();
        pushed.push((OUTPUTS, self.index_of(&parts.head)));
        if parts.head.first() == Some(&1) {
            pushed.push((ITEM_COUNTS, parts.items().len() as u64));
            for item in parts.items() {
                pushed.push((ITEMS, self.index_of(item)));
            }
        }
        for &(series, v) in &pushed {
            self.series[series].push(v);
        }
        self.last_outputs = pushed;
    }
}

/// A thread's completion skeletons, by terminal, and their call sites' request arrays.
#[derive(Default)]
pub struct CompletionSites {
    sites: FastMap<u32, Site>,
    /// Each call site's request arrays (shared by its skeletons).
    arrays: Vec<Arrays>,
    /// Call-site key (see [`Split::site_end`]) → index into `arrays`.
    site_arrays: FastMap<Box<[u8]>, usize>,
    scratch: Scratch,
}

impl CompletionSites {
    /// Appends the call of skeleton `skeleton` (terminal `terminal`) whose full signature
    /// `sig` [`split`] took apart as `split`; `completed` says how the call names the
    /// requests it completed.
    ///
    /// [`split`]: conifer_format::completion::split
    pub fn push(
        &mut self,
        terminal: u32,
        skeleton: &[u8],
        sig: &[u8],
        split: &Split,
        completed: Completed,
    ) {
        let site = match self.sites.entry(terminal) {
            Entry::Occupied(site) => site.into_mut(),
            Entry::Vacant(slot) => {
                let key = &skeleton[..split.site_end];
                let next = self.arrays.len();
                let index = *self.site_arrays.entry(key.into()).or_insert(next);
                if index == next {
                    self.arrays.push(Arrays::default());
                }
                slot.insert(Site::new(index))
            }
        };
        if split.has_requests {
            let arrays = &mut self.arrays[site.arrays];
            site.push_requests(arrays, sig, &split.requests, &mut self.scratch);
            let read = completed.at().and_then(|at| split.value(sig, at));
            completed.slots(read.as_ref(), split.requests.len(), &mut arrays.completed);
        }
        if !split.quiet {
            let (a, b) = split.outputs;
            site.push_outputs(&sig[a..b], &mut self.scratch.outputs);
        }
    }

    /// Appends a call of skeleton `terminal` that repeats the site's previous call exactly,
    /// a poll that again completed nothing; false when `terminal` is no completion skeleton.
    pub fn repeat(&mut self, terminal: u32) -> bool {
        let Some(site) = self.sites.get_mut(&terminal) else {
            return false;
        };
        if site.requests {
            // Nothing completed: the array is the expected one.
            site.series[CHANGES].push(1);
            self.arrays[site.arrays].completed.clear();
        }
        for &(series, v) in &site.last_outputs {
            site.series[series].push(v);
        }
        true
    }

    /// The thread's streams so far.
    pub fn snapshot(&self) -> ThreadStreams {
        let mut entries: Vec<(u32, Vec<Series>)> = self
            .sites
            .iter()
            .map(|(t, s)| (*t, s.series.iter().map(SeriesBuilder::snapshot).collect()))
            .collect();
        entries.sort_by_key(|(t, _)| *t);
        let mut values: Vec<(u32, Vec<Vec<u8>>)> = self
            .sites
            .iter()
            .map(|(t, s)| (*t, s.values.clone()))
            .collect();
        values.sort_by_key(|(t, _)| *t);
        ThreadStreams { entries, values }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_format::completion::{split, Layout};
    use conifer_format::signature::{encode_signature, Signature};
    use conifer_format::streams::Filler;
    use conifer_format::value::{HandleKind, HandleRef, Rank, Status, Value};

    /// `MPI_Waitany(count, requests, index, status)` with slots `done` already null.
    fn waitany(done: &[usize], index: i64) -> Vec<u8> {
        let request = |i: usize| {
            let h = if done.contains(&i) {
                HandleRef::Named(0)
            } else {
                HandleRef::Id(i as u32)
            };
            Value::Handle(HandleKind::Request, h)
        };
        encode_signature(&Signature {
            function: 9,
            thread: 0,
            caller: None,
            values: vec![
                Value::Int(4),
                Value::Array((0..4).map(request).collect()),
                Value::Int(index),
                Value::Status(Status {
                    source: Rank::Relative(index + 1),
                    tag: 0,
                    error: 0,
                    bytes: 8,
                }),
            ],
            ret: 0,
        })
    }

    #[test]
    fn completion_order_goes_to_streams_and_fills_back_exactly() {
        let layout = Layout {
            requests: Some(1),
            outputs: 2,
            completed: Completed::Index(2),
            quiet: None,
        };
        // Two rounds of four completions, in different orders.
        let mut calls = Vec::new();
        for order in [[2, 0, 3, 1], [1, 3, 0, 2]] {
            let mut done = Vec::new();
            for i in order {
                calls.push(waitany(&done, i as i64));
                done.push(i);
            }
        }
        let mut sites = CompletionSites::default();
        let (mut skeleton, mut parts) = (Vec::new(), Split::default());
        let mut skeletons = Vec::new();
        for sig in &calls {
            split(sig, layout, &mut skeleton, &mut parts).unwrap();
            sites.push(0, &skeleton, sig, &parts, layout.completed);
            skeletons.push(skeleton.clone());
        }
        assert!(skeletons.iter().all(|s| *s == skeletons[0]), "one skeleton");
        let streams = sites.snapshot();
        // Distinct values: the four outputs (an index and its status), the whole array (given
        // whole at each round's start) and the null request the slots become.
        assert_eq!(streams.values[0].1.len(), 4 + 1 + 1);
        // Each call's array is the previous one with the slot it completed made null: only
        // the first completion of the run shows what null is, explicitly.
        let series = &streams.entries[0].1;
        assert_eq!(series[SLOTS].len(), 1);
        assert_eq!(series[CHANGES].len(), calls.len() as u64);
        let mut filler = Filler::new(Some(&streams));
        let back: Vec<Vec<u8>> = (0..calls.len())
            .map(|_| filler.fill(0, &skeletons[0]).unwrap().into_owned())
            .collect();
        assert_eq!(back, calls);
        assert!(filler.fill(0, &skeletons[0]).is_none(), "streams end");
    }

    #[test]
    fn a_call_without_outputs_is_kept_whole() {
        let sig = encode_signature(&Signature {
            function: 1,
            thread: 0,
            caller: None,
            values: vec![Value::Int(1)],
            ret: 0,
        });
        let layout = Layout {
            requests: None,
            outputs: 1,
            completed: Completed::Unknown,
            quiet: None,
        };
        assert!(split(&sig, layout, &mut Vec::new(), &mut Split::default()).is_none());
    }
}
