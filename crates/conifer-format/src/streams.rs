//! Value streams (ScalaTrace's parameter-wise compression): when many signatures of a rank
//! differ only in integers or buffer offsets (a library that moves panels through a matrix,
//! creates a datatype per message, sends a different count each time), the stable part of
//! the call is kept as one *skeleton* signature — the varying fields replaced by
//! [`Value::StreamedInt`] / [`Value::StreamedOffset`] — and the varying values go, per thread,
//! skeleton and field, into a series in call order ([`Series`]: runs with strides, cycles and a
//! Sequitur grammar over them). Decoding fills each skeleton with the next values of its
//! streams, so it stays exact.
//!
//! The recorder makes a second kind of skeleton while the program runs: a *completion
//! skeleton* ([`crate::completion`]), a call whose outputs depend on what completed when
//! (`MPI_Waitany`'s index, `MPI_Test`'s flag, ...), the request array it was passed replaced
//! by [`Value::StreamedRequests`] and those outputs by [`Value::StreamedOutputs`]. Its
//! streams index the distinct values of the call site, kept beside them
//! ([`ThreadStreams::values`]).

use crate::columns::{put_column, read_column};
use crate::completion_fill::CompletionFiller;
use crate::signature::encode_signature;
use crate::signature::Signature;
use crate::value::{Buffer, Status, Value};
use crate::varint::{put_u64, Reader};
use conifer_compress::fast_hash::FastMap;
use conifer_compress::tree::{Series, SeriesIter};
use std::borrow::Cow;

/// A thread without value streams.
pub const NO_STREAMS: u32 = u32::MAX;

/// One thread's value streams: per skeleton terminal (sorted), one series per streamed field,
/// in the order the fields occur in the signature.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ThreadStreams {
    /// (skeleton terminal, the series of each of its streamed fields).
    pub entries: Vec<(u32, Vec<Series>)>,
    /// Completion skeletons (sorted): (terminal, the encoded values its series index).
    pub values: Vec<(u32, Vec<Vec<u8>>)>,
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
        let mut values: Vec<(u32, Vec<Vec<u8>>)> = self
            .values
            .iter()
            .map(|(t, v)| (f(*t), v.clone()))
            .collect();
        values.sort_by_key(|(t, _)| *t);
        ThreadStreams { entries, values }
    }

    /// True when there are no streams.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.values.is_empty()
    }
}

/// Fills skeleton signatures with their streams' values, in a thread's call order.
pub struct Filler<'a> {
    cursors: FastMap<u32, Vec<SeriesIter<'a>>>,
    completions: CompletionFiller<'a>,
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
        let completions = CompletionFiller::new(streams.map_or(&[][..], |s| &s.values));
        Filler {
            cursors,
            completions,
        }
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
        if self.completions.has(terminal) {
            return self
                .completions
                .fill(terminal, bytes, cursors)
                .map(Cow::Owned);
        }
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
pub fn encode_streams(sets: &[ThreadStreams], per_rank: &[&Vec<u32>]) -> (Vec<u8>, Vec<u8>) {
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
pub fn decode_streams(
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

/// `SVAL`: per stream set of `sets`, its completion skeletons' values (`varint e` entries,
/// each `varint terminal`, `varint k` and *k* `varint length, bytes`); `None` when no set
/// has any.
pub fn encode_values(sets: &[ThreadStreams]) -> Option<Vec<u8>> {
    if sets.iter().all(|s| s.values.is_empty()) {
        return None;
    }
    let mut out = Vec::new();
    for set in sets {
        put_u64(&mut out, set.values.len() as u64);
        for (t, values) in &set.values {
            put_u64(&mut out, (*t).into());
            put_u64(&mut out, values.len() as u64);
            for v in values {
                put_u64(&mut out, v.len() as u64);
                out.extend_from_slice(v);
            }
        }
    }
    Some(out)
}

/// Reads what [`encode_values`] wrote into `sets`; `None` when malformed.
pub fn decode_values(bytes: &[u8], sets: &mut [ThreadStreams]) -> Option<()> {
    let mut r = Reader::new(bytes);
    for set in sets.iter_mut() {
        let e = r.count()?;
        for _ in 0..e {
            let (t, k) = (r.u32()?, r.count()?);
            let values = (0..k)
                .map(|_| {
                    let n = r.count()?;
                    Some(r.take(n)?.to_vec())
                })
                .collect::<Option<Vec<_>>>()?;
            let series = set.entries.iter().find(|(x, _)| *x == t)?;
            if series.1.len() != crate::completion::SERIES {
                return None;
            }
            set.values.push((t, values));
        }
    }
    (r.remaining() == 0).then_some(())
}
