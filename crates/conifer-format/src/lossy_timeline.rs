//! Lossy timing (`--timing lossy:REL`): every call's interval and duration quantised by
//! [`LogQuantiser`] (each within relative error REL), then stored in whichever of two forms
//! is smaller for the thread:
//!
//! - [`FORM_GRAMMAR`]: each call's (interval code, duration code) pair numbered in order of
//!   first appearance, the pair numbers compressed by Sequitur (the grammar of
//!   `conifer-compress`), the pair table and grammar then by zstd;
//! - [`FORM_PREDICTOR`]: SZ-style, each code predicted by the code of the same kind `lag`
//!   calls earlier (the lag, 1 to [`MAX_LAG`], the one that predicts most codes exactly: the
//!   length of a loop body), the residuals zigzag varints, zstd-compressed; optionally
//!   without the prediction, and optionally with the calls of each loop-body position
//!   written together — whichever of the four compresses best (noisy times compress better
//!   unpredicted: a residual is noisier than the value).
//!
//! A thread's bytes: the form byte, REL, the achieved maximum and mean relative error (three
//! f64, little-endian: the recorder knows the true values), then the zstd frame.

use crate::call_time::CallTime;
use crate::log_quantiser::{relative_error, LogQuantiser};
use crate::varint::{put_i64, put_u64, Reader};
use conifer_compress::{FrozenGrammar, Grammar};
use std::collections::HashMap;

/// Form byte: Sequitur over quantised (interval, duration) pairs.
pub const FORM_GRAMMAR: u8 = 1;
/// Form byte: lag predictor over quantised values.
pub const FORM_PREDICTOR: u8 = 2;
/// The longest predictor lag tried.
pub const MAX_LAG: usize = 16;
/// Header bytes before the zstd frame.
const HEADER: usize = 1 + 3 * 8;

/// What a lossy timeline says about itself without being decoded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossyHeader {
    /// [`FORM_GRAMMAR`] or [`FORM_PREDICTOR`].
    pub form: u8,
    /// The relative error bound it was recorded with.
    pub rel: f64,
    /// The largest relative error of any of its values.
    pub max_error: f64,
    /// The mean relative error over its values (intervals and durations).
    pub mean_error: f64,
}

/// Both forms of a thread's times, for comparing them (the recorder keeps the smaller).
pub struct Encoded {
    /// [`FORM_GRAMMAR`] bytes.
    pub grammar: Vec<u8>,
    /// [`FORM_PREDICTOR`] bytes.
    pub predictor: Vec<u8>,
}

impl Encoded {
    /// The smaller form.
    pub fn smaller(self) -> Vec<u8> {
        if self.grammar.len() <= self.predictor.len() {
            self.grammar
        } else {
            self.predictor
        }
    }
}

/// Quantises a thread's call times within relative error `rel` and encodes them both ways.
pub fn encode_both(times: &[CallTime], rel: f64) -> Encoded {
    let q = LogQuantiser::new(rel);
    let codes: Vec<[u64; 2]> = times
        .iter()
        .map(|t| [q.code(t.interval_ns), q.code(t.duration_ns)])
        .collect();
    let (mut max_error, mut sum) = (0.0f64, 0.0);
    for (t, c) in times.iter().zip(&codes) {
        for (v, code) in [(t.interval_ns, c[0]), (t.duration_ns, c[1])] {
            let e = relative_error(v, q.value(code).unwrap_or(u64::MAX));
            max_error = max_error.max(e);
            sum += e;
        }
    }
    let mean_error = if times.is_empty() {
        0.0
    } else {
        sum / (2 * times.len()) as f64
    };
    let header = |form: u8| {
        let mut out = vec![form];
        for v in [rel, max_error, mean_error] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    };
    let mut grammar = header(FORM_GRAMMAR);
    grammar.extend(zstd_of(&grammar_payload(&codes)));
    let mut predictor = header(FORM_PREDICTOR);
    let lag = best_lag(&codes);
    let smallest = [(false, false), (true, false), (false, true), (true, true)]
        .into_iter()
        .map(|(predict, transpose)| zstd_of(&predictor_payload(&codes, lag, predict, transpose)))
        .min_by_key(Vec::len)
        .expect("four candidates");
    predictor.extend(smallest);
    Encoded { grammar, predictor }
}

/// [`encode_both`]'s smaller form.
pub fn encode(times: &[CallTime], rel: f64) -> Vec<u8> {
    encode_both(times, rel).smaller()
}

fn zstd_of(raw: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(raw, 3).expect("zstd compresses an in-memory buffer")
}

/// The pair table (count, then interval and duration code of each), then the grammar.
fn grammar_payload(codes: &[[u64; 2]]) -> Vec<u8> {
    let mut pairs: HashMap<[u64; 2], u32> = HashMap::new();
    let mut table = Vec::new();
    let mut grammar = Grammar::new();
    for c in codes {
        let id = *pairs.entry(*c).or_insert_with(|| {
            table.push(*c);
            table.len() as u32 - 1
        });
        grammar.push(id);
    }
    let mut out = Vec::new();
    put_u64(&mut out, table.len() as u64);
    table.iter().flatten().for_each(|&c| put_u64(&mut out, c));
    out.extend(grammar.freeze().to_bytes());
    out
}

/// The order codes are written in: call order, or `transpose`d — the calls at each position
/// of a `lag`-call loop body together (calls 0, lag, 2 lag, …, then 1, lag + 1, …), so each
/// run holds one call of the body's times.
fn order(n: usize, lag: usize, transpose: bool) -> Vec<usize> {
    if transpose {
        (0..lag).flat_map(|p| (p..n).step_by(lag)).collect()
    } else {
        (0..n).collect()
    }
}

/// The lag, flags (1: `predict`, 2: `transpose`), the call count, then per kind (intervals,
/// durations), in [`order`], each code — less the code `lag` calls earlier when predicting
/// (from the `lag`-th call on) — as a zigzag varint.
fn predictor_payload(codes: &[[u64; 2]], lag: usize, predict: bool, transpose: bool) -> Vec<u8> {
    let mut out = Vec::new();
    put_u64(&mut out, lag as u64);
    put_u64(&mut out, u64::from(predict) | u64::from(transpose) << 1);
    put_u64(&mut out, codes.len() as u64);
    let order = order(codes.len(), lag, transpose);
    for kind in [0, 1] {
        for &i in &order {
            let predicted = if predict && i >= lag {
                codes[i - lag][kind]
            } else {
                0
            };
            put_i64(&mut out, codes[i][kind].wrapping_sub(predicted) as i64);
        }
    }
    out
}

/// The lag whose prediction is right most often (over at most the first 65536 calls).
fn best_lag(codes: &[[u64; 2]]) -> usize {
    let sample = &codes[..codes.len().min(1 << 16)];
    (1..=MAX_LAG)
        .max_by_key(|&lag| {
            let hits = (lag..sample.len())
                .map(|i| {
                    (0..2)
                        .filter(|&k| sample[i][k] == sample[i - lag][k])
                        .count()
                })
                .sum::<usize>();
            // Ties go to the shorter lag.
            (hits, std::cmp::Reverse(lag))
        })
        .unwrap_or(1)
}

/// Reads the header of a lossy timeline; `None` when `bytes` is not one.
pub fn header(bytes: &[u8]) -> Option<LossyHeader> {
    let form = *bytes.first()?;
    if form != FORM_GRAMMAR && form != FORM_PREDICTOR || bytes.len() < HEADER {
        return None;
    }
    let f = |i: usize| {
        let at = 1 + 8 * i;
        f64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
    };
    let (rel, max_error, mean_error) = (f(0), f(1), f(2));
    (rel > 0.0 && rel < 1.0 && max_error >= 0.0 && mean_error >= 0.0).then_some(LossyHeader {
        form,
        rel,
        max_error,
        mean_error,
    })
}

/// Decodes a lossy timeline of at most `calls` calls; `None` when malformed.
pub fn decode(bytes: &[u8], calls: u64) -> Option<Vec<CallTime>> {
    let head = header(bytes)?;
    let frame = &bytes[HEADER..];
    // Each call takes at least two bytes in either form, plus the tables.
    let size = zstd::zstd_safe::get_frame_content_size(frame).ok()??;
    if size > calls.saturating_mul(40).saturating_add(1 << 20) {
        return None;
    }
    let raw = zstd::bulk::decompress(frame, usize::try_from(size).ok()?.max(1)).ok()?;
    let codes = match head.form {
        FORM_GRAMMAR => grammar_codes(&raw, calls)?,
        _ => predictor_codes(&raw, calls)?,
    };
    let q = LogQuantiser::new(head.rel);
    codes
        .into_iter()
        .map(|[i, d]| {
            Some(CallTime {
                interval_ns: q.value(i)?,
                duration_ns: q.value(d)?,
            })
        })
        .collect()
}

fn grammar_codes(raw: &[u8], calls: u64) -> Option<Vec<[u64; 2]>> {
    let mut r = Reader::new(raw);
    let n = r.count()?;
    let table = (0..n)
        .map(|_| Some([r.u64()?, r.u64()?]))
        .collect::<Option<Vec<_>>>()?;
    let grammar = FrozenGrammar::from_bytes(r.take(r.remaining())?).ok()?;
    if grammar.len() > calls {
        return None;
    }
    grammar
        .expand()
        .map(|id| table.get(id as usize).copied())
        .collect()
}

fn predictor_codes(raw: &[u8], calls: u64) -> Option<Vec<[u64; 2]>> {
    let mut r = Reader::new(raw);
    let lag = usize::try_from(r.u64()?).ok()?;
    let flags = r.u64()?;
    let n = r.u64()?;
    if n > calls || !(1..=MAX_LAG).contains(&lag) || flags > 3 {
        return None;
    }
    let (predict, transpose) = (flags & 1 != 0, flags & 2 != 0);
    let mut codes = vec![[0u64; 2]; n as usize];
    let order = order(codes.len(), lag, transpose);
    for kind in [0, 1] {
        for &i in &order {
            let predicted = if predict && i >= lag {
                codes[i - lag][kind]
            } else {
                0
            };
            codes[i][kind] = predicted.wrapping_add(r.i64()? as u64);
        }
    }
    (r.remaining() == 0).then_some(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loop_times(n: u64) -> Vec<CallTime> {
        (0..n)
            .map(|i| CallTime {
                interval_ns: [12_000, 40, 0][(i % 3) as usize] + i % 7 * 13,
                duration_ns: [900, 3_000_000, 15][(i % 3) as usize] + i % 11,
            })
            .collect()
    }

    #[test]
    fn both_forms_decode_within_the_bound_and_report_their_error() {
        let times = loop_times(30_000);
        for rel in [0.1, 0.01] {
            let both = encode_both(&times, rel);
            for bytes in [&both.grammar, &both.predictor] {
                let back = decode(bytes, times.len() as u64).unwrap();
                assert_eq!(back.len(), times.len());
                let mut max = 0.0f64;
                for (t, b) in times.iter().zip(&back) {
                    max = max
                        .max(relative_error(t.interval_ns, b.interval_ns))
                        .max(relative_error(t.duration_ns, b.duration_ns));
                }
                assert!(max <= rel, "{max}");
                let head = header(bytes).unwrap();
                assert_eq!(head.max_error, max);
                assert!(head.mean_error <= head.max_error);
                // Far smaller than 16 bytes a call.
                assert!(bytes.len() < times.len(), "{} bytes", bytes.len());
            }
        }
    }

    #[test]
    fn corrupt_or_oversized_input_is_rejected() {
        let times = loop_times(100);
        let bytes = encode(&times, 0.1);
        assert_eq!(decode(&bytes, 10), None);
        assert_eq!(decode(&bytes[..bytes.len() / 2], 100), None);
        assert_eq!(decode(&bytes[..3], 100), None);
        assert_eq!(header(b"\x28not lossy"), None);
        assert_eq!(decode(&encode(&[], 0.1), 0), Some(Vec::new()));
    }
}
