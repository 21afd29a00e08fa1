//! Value streams (ScalaTrace's parameter-wise compression): when many signatures of a rank
//! differ only in integers or buffer offsets (a library that moves panels through a matrix,
//! creates a datatype per message, sends a different count each time), the stable part of
//! the call is kept as one *skeleton* signature — the varying fields replaced by
//! [`Value::StreamedInt`] / [`Value::StreamedOffset`] — and the varying values go, per thread,
//! skeleton and field, into a series in call order ([`Series`]: runs with strides, cycles and a
//! Sequitur grammar over them). Decoding fills each skeleton with the next values of its
//! streams, so it stays exact.

use crate::columns::{put_column, read_column};
use crate::fast_hash::FastMap;
use crate::rank_codes::encode_signature;
use crate::rank_record::{CallTiming, RankRecord};
use crate::signature::Signature;
use crate::stored::NO_STREAMS;
use crate::value::{Buffer, Status, Value};
use crate::varint::{put_u64, Reader};
use conifer_compress::tree::{Expand, Series, SeriesBuilder, SeriesIter, VertexRecord};
use std::borrow::Cow;
use std::sync::Arc;

/// One thread's value streams: per skeleton terminal (sorted), one series per streamed field,
/// in the order the fields occur in the signature.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ThreadStreams {
    /// (skeleton terminal, the series of each of its streamed fields).
    pub entries: Vec<(u32, Vec<Series>)>,
}

impl ThreadStreams {
    /// The same streams with terminals renamed by `f` (one-to-one).
    pub fn map_terminals(&self, f: impl Fn(u32) -> u32) -> ThreadStreams {
        let mut entries: Vec<(u32, Vec<Series>)> = self
            .entries
            .iter()
            .map(|(t, series)| (f(*t), series.clone()))
            .collect();
        entries.sort_by_key(|(t, _)| *t);
        ThreadStreams { entries }
    }
}

/// A family is streamed when it has at least this many distinct signatures.
const MIN_DISTINCT: usize = 8;
/// Runs a stream compares a new run with.
const WINDOW: usize = 16;
/// Runs a renamed trace-tree terminal series compares a new run with (the recorder's default).
const TREE_WINDOW: usize = 64;

/// Calls `f` on every streamable leaf of `values` (integers, segment buffers and statuses, at
/// the top level and in arrays), in order.
fn for_each_leaf(values: &mut [Value], f: &mut impl FnMut(&mut Value)) {
    for v in values {
        match v {
            Value::Int(_) | Value::Buffer(Buffer::Segment { .. }) | Value::Status(_) => f(v),
            Value::Array(items) => for_each_leaf(items, f),
            _ => {}
        }
    }
}

/// A leaf's streamed values (integers and offsets as two's-complement u64; a status's tag
/// and received bytes).
fn leaf_values(v: &Value) -> Vec<u64> {
    match v {
        Value::Int(i) => vec![*i as u64],
        Value::Buffer(Buffer::Segment { offset, .. }) => vec![*offset as u64],
        Value::Status(s) => vec![s.tag as u64, s.bytes as u64],
        _ => Vec::new(),
    }
}

/// A leaf turned into its placeholder.
fn placeholder(v: &Value) -> Value {
    match v {
        Value::Buffer(Buffer::Segment { id, .. }) => Value::StreamedOffset(*id),
        Value::Status(s) => Value::StreamedStatus(s.source, s.error),
        _ => Value::StreamedInt,
    }
}

/// Moves the varying fields of `record`'s large signature families into value streams,
/// renaming the family members to their skeleton in the threads' grammars and trace trees;
/// leaves the record unchanged when no family is large enough.
pub fn extract(record: &mut RankRecord) {
    let parsed: Vec<Option<Signature>> = record
        .signatures
        .iter()
        .map(|s| Signature::parse(s))
        .collect();
    // Families: signatures equal once every leaf is a placeholder.
    let mut families: FastMap<Vec<u8>, Vec<u32>> = FastMap::default();
    for (t, sig) in parsed.iter().enumerate() {
        let Some(sig) = sig else { continue };
        let mut blank = sig.clone();
        let mut leaves = 0;
        for_each_leaf(&mut blank.values, &mut |v| {
            *v = placeholder(v);
            leaves += 1;
        });
        if leaves > 0 {
            families
                .entry(encode_signature(&blank))
                .or_default()
                .push(t as u32);
        }
    }
    let mut families: Vec<Vec<u32>> = families
        .into_values()
        .filter(|members| members.len() >= MIN_DISTINCT)
        .collect();
    if families.is_empty() {
        return;
    }
    families.sort();
    // Per family: which leaves vary, the skeleton, and each member's values of those leaves.
    let mut new_signatures: Vec<Vec<u8>> = Vec::new();
    let mut new_of: Vec<Option<u32>> = vec![None; record.signatures.len()];
    let mut streamed: Vec<Option<Vec<u64>>> = vec![None; record.signatures.len()];
    for members in &families {
        let leaves_of = |t: u32| {
            let mut sig = parsed[t as usize].clone().expect("parsed");
            let mut leaves = Vec::new();
            for_each_leaf(&mut sig.values, &mut |v| leaves.push(v.clone()));
            leaves
        };
        let first = leaves_of(members[0]);
        let mut varies = vec![false; first.len()];
        for &t in &members[1..] {
            for (j, leaf) in leaves_of(t).iter().enumerate() {
                varies[j] |= *leaf != first[j];
            }
        }
        let mut skeleton = parsed[members[0] as usize].clone().expect("parsed");
        let mut j = 0;
        for_each_leaf(&mut skeleton.values, &mut |v| {
            if varies[j] {
                *v = placeholder(v);
            }
            j += 1;
        });
        let id = new_signatures.len() as u32;
        new_signatures.push(encode_signature(&skeleton));
        for &t in members {
            new_of[t as usize] = Some(id);
            let values = leaves_of(t)
                .iter()
                .zip(&varies)
                .filter(|(_, &v)| v)
                .flat_map(|(leaf, _)| leaf_values(leaf))
                .collect();
            streamed[t as usize] = Some(values);
        }
    }
    let skeletons = new_signatures.len() as u32;
    for (t, sig) in record.signatures.iter().enumerate() {
        if new_of[t].is_none() {
            new_of[t] = Some(new_signatures.len() as u32);
            new_signatures.push(sig.clone());
        }
    }
    let new_of: Vec<u32> = new_of
        .into_iter()
        .map(|n| n.expect("every terminal"))
        .collect();
    let mut timing = vec![CallTiming::default(); new_signatures.len()];
    for (t, stats) in record.timing.iter().enumerate() {
        let n = new_of[t] as usize;
        timing[n] = timing[n].combined(stats);
    }
    let shape = record.structure.as_ref().map(|s| Arc::clone(&s.shape));
    let mut streams = Vec::new();
    for (thread, foreign) in record.grammars.iter_mut().enumerate() {
        let tree = record.trees.get_mut(thread).and_then(Option::as_mut);
        // The thread's calls in order: its tree's, with the grammar's in their places.
        let calls: Vec<u32> = match (&tree, &shape) {
            (Some(tree), Some(shape)) => {
                let records: Vec<&VertexRecord> = tree.vertices.iter().collect();
                Expand::new(shape, &records, tree.leading_foreign, foreign.expand()).collect()
            }
            _ => foreign.expand().collect(),
        };
        let mut builders: FastMap<u32, Vec<SeriesBuilder>> = FastMap::default();
        for t in calls {
            if let Some(values) = &streamed[t as usize] {
                let series = builders.entry(new_of[t as usize]).or_insert_with(|| {
                    values
                        .iter()
                        .map(|_| SeriesBuilder::new(true, WINDOW))
                        .collect()
                });
                series.iter_mut().zip(values).for_each(|(b, &v)| b.push(v));
            }
        }
        let mut entries: Vec<(u32, Vec<Series>)> = builders
            .into_iter()
            .map(|(t, b)| (t, b.iter().map(SeriesBuilder::snapshot).collect()))
            .collect();
        entries.sort_by_key(|(t, _)| *t);
        debug_assert!(entries.iter().all(|(t, _)| *t < skeletons));
        streams.push(ThreadStreams { entries });
        // Renamed in place: the final pass over all grammars compresses what merged.
        *foreign = foreign.map_terminals(|t| new_of[t as usize]);
        if let Some(tree) = tree {
            for vertex in &mut tree.vertices {
                let mut terminals = SeriesBuilder::new(false, TREE_WINDOW);
                vertex
                    .terminals
                    .iter()
                    .for_each(|t| terminals.push(new_of[t as usize].into()));
                vertex.terminals = terminals.snapshot();
            }
        }
    }
    record.signatures = new_signatures;
    record.timing = timing;
    record.streams = streams;
}

/// Fills skeleton signatures with their streams' values, in a thread's call order.
pub struct Filler<'a> {
    cursors: FastMap<u32, Vec<SeriesIter<'a>>>,
}

impl<'a> Filler<'a> {
    /// A filler at the start of `streams` (`None`: a thread without streams).
    pub fn new(streams: Option<&'a ThreadStreams>) -> Filler<'a> {
        let cursors = streams
            .map(|s| {
                s.entries
                    .iter()
                    .map(|(t, series)| (*t, series.iter().map(Series::iter).collect()))
                    .collect()
            })
            .unwrap_or_default();
        Filler { cursors }
    }

    /// True when terminal `terminal` is a skeleton filled from streams.
    pub fn streams(&self, terminal: u32) -> bool {
        self.cursors.contains_key(&terminal)
    }

    /// The full signature of the next call of terminal `terminal`, whose table entry is
    /// `bytes`; `None` when its stream has run out (a malformed trace).
    pub fn fill<'b>(&mut self, terminal: u32, bytes: &'b [u8]) -> Option<Cow<'b, [u8]>> {
        let Some(cursors) = self.cursors.get_mut(&terminal) else {
            return Some(Cow::Borrowed(bytes));
        };
        let mut sig = Signature::parse(bytes)?;
        let mut next = cursors.iter_mut();
        let mut ok = true;
        let mut take = || next.next().and_then(|stream| stream.next());
        fill_leaves(&mut sig.values, &mut |v| {
            let filled = match v.clone() {
                Value::StreamedInt => take().map(|x| Value::Int(x as i64)),
                Value::StreamedOffset(id) => take().map(|x| {
                    Value::Buffer(Buffer::Segment {
                        id,
                        offset: x as i64,
                    })
                }),
                Value::StreamedStatus(source, error) => take().zip(take()).map(|(tag, bytes)| {
                    Value::Status(Status {
                        source,
                        tag: tag as i64,
                        error,
                        bytes: bytes as i64,
                    })
                }),
                _ => None,
            };
            match filled {
                Some(value) => *v = value,
                None => ok = false,
            }
        });
        ok.then(|| Cow::Owned(encode_signature(&sig)))
    }
}

/// Calls `f` on every placeholder of `values`, in order.
fn fill_leaves(values: &mut [Value], f: &mut impl FnMut(&mut Value)) {
    for v in values {
        match v {
            Value::StreamedInt | Value::StreamedOffset(_) | Value::StreamedStatus(..) => f(v),
            Value::Array(items) => fill_leaves(items, f),
            _ => {}
        }
    }
}

/// `STRM`: the distinct thread streams (per entry: skeleton terminal, series count, series);
/// `SMAP`: a rank column of each thread's streams (0 none, else 1 + index).
pub(crate) fn encode_streams(sets: &[ThreadStreams], per_rank: &[&Vec<u32>]) -> (Vec<u8>, Vec<u8>) {
    let mut streams = Vec::new();
    put_u64(&mut streams, sets.len() as u64);
    for set in sets {
        put_u64(&mut streams, set.entries.len() as u64);
        for (t, series) in &set.entries {
            put_u64(&mut streams, (*t).into());
            put_u64(&mut streams, series.len() as u64);
            series.iter().for_each(|s| s.encode(&mut streams));
        }
    }
    let mut map = Vec::new();
    put_column(&mut map, per_rank, |o, threads| {
        put_u64(o, threads.len() as u64);
        threads
            .iter()
            .for_each(|&s| put_u64(o, u64::from(s.wrapping_add(1))));
    });
    (streams, map)
}

/// Reads what [`encode_streams`] wrote.
pub(crate) fn decode_streams(
    streams: &[u8],
    map: &[u8],
    ranks: usize,
) -> Option<(Vec<ThreadStreams>, Vec<Vec<u32>>)> {
    let mut bytes = streams;
    let mut r = Reader::new(bytes);
    let n = r.count()?;
    bytes = &bytes[bytes.len() - r.remaining()..];
    let mut sets = Vec::with_capacity(n);
    for _ in 0..n {
        let mut r = Reader::new(bytes);
        let entries = r.count()?;
        bytes = &bytes[bytes.len() - r.remaining()..];
        let mut set = ThreadStreams::default();
        for _ in 0..entries {
            let mut r = Reader::new(bytes);
            let (t, k) = (r.u32()?, r.count()?);
            bytes = &bytes[bytes.len() - r.remaining()..];
            let series = (0..k)
                .map(|_| Series::decode(&mut bytes).ok())
                .collect::<Option<Vec<_>>>()?;
            set.entries.push((t, series));
        }
        sets.push(set);
    }
    if !bytes.is_empty() {
        return None;
    }
    let mut r = Reader::new(map);
    let per_rank = read_column(&mut r, ranks, |c| {
        let n = c.count()?;
        (0..n)
            .map(|_| Some(c.u32()?.wrapping_sub(1)))
            .collect::<Option<Vec<u32>>>()
    })?;
    let valid = per_rank
        .iter()
        .flatten()
        .all(|&s| s == NO_STREAMS || (s as usize) < sets.len());
    (r.remaining() == 0 && valid).then_some((sets, per_rank))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{HandleKind, HandleRef};
    use conifer_compress::Grammar;

    fn signature(count: i64, offset: i64) -> Vec<u8> {
        encode_signature(&Signature {
            function: 3,
            thread: 0,
            caller: None,
            values: vec![
                Value::Buffer(Buffer::Segment { id: 2, offset }),
                Value::Int(count),
                Value::Handle(HandleKind::Datatype, HandleRef::Named(4)),
                Value::Array(vec![Value::Int(7), Value::Int(count * 2)]),
            ],
            ret: 0,
        })
    }

    #[test]
    fn varying_fields_move_to_streams_and_fill_back_exactly() {
        // A panel moving through a matrix: offsets stride by 800, counts shrink by 1.
        let calls: Vec<Vec<u8>> = (0..100).map(|i| signature(100 - i, 800 * i)).collect();
        let mut record = RankRecord {
            signatures: calls.clone(),
            timing: vec![CallTiming::default(); 100],
            grammars: vec![{
                let mut g = Grammar::new();
                (0..100).for_each(|t| g.push(t));
                g.freeze()
            }],
            ..Default::default()
        };
        extract(&mut record);
        assert_eq!(record.signatures.len(), 1, "one skeleton");
        let skeleton = Signature::parse(&record.signatures[0]).unwrap();
        assert_eq!(skeleton.values[0], Value::StreamedOffset(2));
        assert_eq!(skeleton.values[1], Value::StreamedInt);
        // The array's constant 7 stays; the doubled count streams.
        assert_eq!(
            skeleton.values[3],
            Value::Array(vec![Value::Int(7), Value::StreamedInt])
        );
        let streams = &record.streams[0];
        // Three arithmetic runs: one piece each.
        assert!(streams.entries[0].1.iter().all(|s| s.size() <= 2));
        let mut filler = Filler::new(Some(streams));
        let back: Vec<Vec<u8>> = record.grammars[0]
            .expand()
            .map(|t| {
                filler
                    .fill(t, &record.signatures[t as usize])
                    .unwrap()
                    .into_owned()
            })
            .collect();
        assert_eq!(back, calls);
        assert!(
            filler.fill(0, &record.signatures[0]).is_none(),
            "streams end"
        );
    }

    #[test]
    fn small_families_are_left_alone() {
        let calls: Vec<Vec<u8>> = (0..4).map(|i| signature(i, 0)).collect();
        let mut record = RankRecord {
            signatures: calls.clone(),
            timing: vec![CallTiming::default(); 4],
            grammars: vec![Grammar::new().freeze()],
            ..Default::default()
        };
        extract(&mut record);
        assert_eq!(record.signatures, calls);
        assert!(record.streams.is_empty());
    }
}
