//! Stream extraction, at the recording rank: the signature families of a rank's record that
//! differ only in integers or buffer offsets become one skeleton signature each, their varying
//! values series in the thread's [`ThreadStreams`] (see [`conifer_format::streams`]).

use crate::family_key::{family_key, Key};
use conifer_compress::fast_hash::FastMap;
use conifer_compress::tree::{Expand, Series, SeriesBuilder, VertexRecord};
use conifer_format::rank_record::{CallTiming, RankRecord};
use conifer_format::signature::{encode_signature, Signature};
use conifer_format::streams::ThreadStreams;
use conifer_format::value::{Buffer, Value};
use std::sync::Arc;

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
    // Families: signatures equal once every leaf is a placeholder, keyed straight from their
    // bytes (a rank with tens of thousands of signatures holding large arrays would need far
    // more memory parsed than encoded); members of large families are parsed.
    let mut families: FastMap<Vec<u8>, Vec<u32>> = FastMap::default();
    let mut key = Vec::new();
    for (t, bytes) in record.signatures.iter().enumerate() {
        // Completion skeletons have their streams already (the recorder's).
        if let Some(Key::Leaves(1..)) = family_key(bytes, &mut key) {
            match families.get_mut(&key) {
                Some(members) => members.push(t as u32),
                None => {
                    families.insert(key.clone(), vec![t as u32]);
                }
            }
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
    let parse = |t: u32| Signature::parse(&record.signatures[t as usize]).expect("parsed before");
    for members in &families {
        let leaves_of = |t: u32| {
            let mut sig = parse(t);
            let mut leaves = Vec::new();
            for_each_leaf(&mut sig.values, &mut |v| leaves.push(v.clone()));
            leaves
        };
        let leaves: Vec<Vec<Value>> = members.iter().map(|&t| leaves_of(t)).collect();
        let first = &leaves[0];
        let mut varies = vec![false; first.len()];
        for other in &leaves[1..] {
            for (j, leaf) in other.iter().enumerate() {
                varies[j] |= *leaf != first[j];
            }
        }
        let mut skeleton = parse(members[0]);
        let mut j = 0;
        for_each_leaf(&mut skeleton.values, &mut |v| {
            if varies[j] {
                *v = placeholder(v);
            }
            j += 1;
        });
        let id = new_signatures.len() as u32;
        new_signatures.push(encode_signature(&skeleton));
        for (&t, member_leaves) in members.iter().zip(&leaves) {
            new_of[t as usize] = Some(id);
            let values = member_leaves
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
        // Per skeleton, the series of its streamed fields, fed in call order: a member's
        // values go to every field's series, a run of n calls of it as n copies at once.
        let mut builders: Vec<Option<Vec<SeriesBuilder>>> = vec![None; skeletons as usize];
        let mut feed = |t: u32, n: u64| {
            let Some(values) = &streamed[t as usize] else {
                return;
            };
            let series = builders[new_of[t as usize] as usize].get_or_insert_with(|| {
                values
                    .iter()
                    .map(|_| SeriesBuilder::new(true, WINDOW))
                    .collect()
            });
            series
                .iter_mut()
                .zip(values)
                .for_each(|(b, &v)| b.push_n(v, n));
        };
        match (&tree, &shape) {
            // The thread's calls in order: its tree's, with the grammar's in their places.
            (Some(tree), Some(shape)) => {
                let records: Vec<&VertexRecord> = tree.vertices.iter().collect();
                Expand::new(shape, &records, tree.leading_foreign, foreign.expand())
                    .for_each(|t| feed(t, 1));
            }
            // Only the rules that reach a streamed member are walked.
            _ => foreign.for_each_run(|t| streamed[t as usize].is_some(), feed),
        }
        let mut entries: Vec<(u32, Vec<Series>)> = builders
            .into_iter()
            .enumerate()
            .filter_map(|(t, b)| Some((t as u32, b?.iter().map(SeriesBuilder::snapshot).collect())))
            .collect();
        // The recorder's completion streams, renamed.
        let recorded = record
            .streams
            .get(thread)
            .map(|s| s.map_terminals(|t| new_of[t as usize]))
            .unwrap_or_default();
        entries.extend(recorded.entries);
        entries.sort_by_key(|(t, _)| *t);
        streams.push(ThreadStreams {
            entries,
            values: recorded.values,
        });
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

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_compress::Grammar;
    use conifer_format::streams::Filler;
    use conifer_format::value::{HandleKind, HandleRef};

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
