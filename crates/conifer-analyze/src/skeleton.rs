//! Skeleton signatures (value streams): a skeleton's calls differ only in the values of its
//! streams. Only the streamed values the statistics depend on — counts, block lengths, sizes,
//! and statuses (the bytes that arrived, and the tag that says which send they came from) —
//! matter; the others (other integers, buffer offsets) are filled with placeholders. With one
//! such stream, its value counts come from the series' compressed form (runs, repeats and
//! grammar multiplicities, never expanded); with several, the streams are read in step.

use conifer_compress::tree::Series;
use conifer_trace::decode::Signature;
use conifer_trace::value::{Buffer, Status, Value};
use std::collections::HashMap;

/// Where a placeholder is: top-level value index, and index inside an array value.
#[derive(Clone, Copy)]
struct Spot {
    top: usize,
    inner: Option<usize>,
    /// Index of its (first) series.
    series: usize,
    /// Its series: 1, or 2 for a status (tag, bytes).
    width: usize,
    /// True when the statistics depend on its value.
    relevant: bool,
}

/// True for the integer parameters whose values the statistics read.
fn matters(slot: &str) -> bool {
    slot.contains("count") || slot.contains("length") || slot.contains("size")
}

fn spots(sig: &Signature, slots: &[String]) -> Vec<Spot> {
    let mut out = Vec::new();
    let mut series = 0;
    let mut visit = |v: &Value, top: usize, inner: Option<usize>, out: &mut Vec<Spot>| {
        let slot = slots.get(top).map_or("", String::as_str);
        let (width, relevant) = match v {
            Value::StreamedInt => (1, matters(slot)),
            Value::StreamedOffset(_) => (1, false),
            Value::StreamedStatus(..) => (2, true),
            _ => return,
        };
        out.push(Spot {
            top,
            inner,
            series,
            width,
            relevant,
        });
        series += width;
    };
    for (i, v) in sig.values.iter().enumerate() {
        match v {
            Value::Array(items) => {
                for (k, item) in items.iter().enumerate() {
                    visit(item, i, Some(k), &mut out);
                }
            }
            v => visit(v, i, None, &mut out),
        }
    }
    out
}

/// The skeleton with its relevant placeholders set to `values` (in order) and the others to
/// neutral values.
fn fill(sig: &Signature, spots: &[Spot], values: &[u64]) -> Signature {
    let mut s = sig.clone();
    let mut next = values.iter();
    for spot in spots {
        let v = match spot.inner {
            None => &mut s.values[spot.top],
            Some(k) => match &mut s.values[spot.top] {
                Value::Array(items) => &mut items[k],
                _ => continue,
            },
        };
        *v = match v.clone() {
            Value::StreamedInt if spot.relevant => {
                Value::Int(next.next().copied().unwrap_or(0) as i64)
            }
            Value::StreamedInt => Value::Int(0),
            Value::StreamedOffset(id) => Value::Buffer(Buffer::Segment { id, offset: 0 }),
            Value::StreamedStatus(source, error) => {
                let tag = next.next().copied().unwrap_or(0);
                let bytes = next.next().copied().unwrap_or(0);
                Value::Status(Status {
                    source,
                    tag: tag as i64,
                    error,
                    bytes: bytes as i64,
                })
            }
            other => other,
        };
    }
    s
}

/// The distinct filled forms of skeleton `sig` over its calls, with their counts, per group
/// (a call site): `calls` is how many calls each group made, and `order`, when the calls of
/// several groups interleave, the group of each call in call order (else the groups' calls
/// are taken to follow each other).
pub fn fills(
    sig: &Signature,
    slots: &[String],
    series: &[Series],
    calls: &[u64],
    order: Option<&[usize]>,
) -> Vec<Vec<(Signature, u64)>> {
    let spots = spots(sig, slots);
    let relevant: Vec<usize> = spots
        .iter()
        .filter(|s| s.relevant)
        .flat_map(|s| s.series..s.series + s.width)
        .collect();
    if relevant.is_empty() {
        return calls
            .iter()
            .map(|&n| vec![(fill(sig, &spots, &[]), n)])
            .collect();
    }
    if relevant.len() == 1 && calls.len() == 1 {
        if let Some(s) = series.get(relevant[0]) {
            let counts = s.value_counts();
            if counts.iter().map(|c| c.1).sum::<u64>() == calls[0] {
                return vec![counts
                    .into_iter()
                    .map(|(v, k)| (fill(sig, &spots, &[v]), k))
                    .collect()];
            }
        }
    }
    // Several relevant streams, or several call sites: read the streams in step.
    let mut iters: Vec<_> = relevant
        .iter()
        .map(|&i| series.get(i).map(Series::iter))
        .collect();
    let groups: Vec<usize> = match order {
        Some(o) => o.to_vec(),
        None => calls
            .iter()
            .enumerate()
            .flat_map(|(g, &n)| std::iter::repeat_n(g, n as usize))
            .collect(),
    };
    let mut tuples: Vec<HashMap<Vec<u64>, u64>> = vec![HashMap::new(); calls.len()];
    let mut key = Vec::with_capacity(iters.len());
    for g in groups {
        key.clear();
        for it in iters.iter_mut() {
            key.push(it.as_mut().and_then(Iterator::next).unwrap_or(0));
        }
        let Some(t) = tuples.get_mut(g) else { continue };
        match t.get_mut(&key) {
            Some(c) => *c += 1,
            None => {
                t.insert(key.clone(), 1);
            }
        }
    }
    tuples
        .into_iter()
        .map(|t| {
            let mut t: Vec<_> = t.into_iter().collect();
            t.sort_unstable();
            t.into_iter()
                .map(|(values, k)| (fill(sig, &spots, &values), k))
                .collect()
        })
        .collect()
}
