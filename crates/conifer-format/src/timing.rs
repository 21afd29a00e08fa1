//! Aggregate timing (the default): per *timing family* — signatures that differ only in
//! message sizes within a power of two, buffer offsets, peers and request ids, i.e. roughly
//! one call site — the statistics of call durations and of the computation intervals before
//! the calls, pooled over all ranks, so the trace does not grow with ranks or behaviour
//! classes; per rank, its total time in MPI and between calls. Files store the values
//! log-quantised (0.14% steps for statistics, 4.4% for per-rank totals); merge messages keep
//! them exact (f64 bits) so pooling never compounds rounding.

use crate::columns::{put_column, read_column};
use crate::histogram::TimingHistogram;
use crate::signature::Signature;
use crate::value::{Buffer, HandleKind, HandleRef, Rank, Status, Value};
use crate::varint::{put_u64, Reader};

/// The timing statistics of one timing family (see [`crate::timing`]), pooled over all ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyTiming {
    /// A terminal whose signature belongs to the family (the family is derived from it).
    pub terminal: u32,
    /// Durations of and intervals before the family's calls.
    pub stats: CallTiming,
    /// Their histograms (`--timing histogram` only).
    pub histogram: Option<TimingHistogram>,
}

/// Running statistics of a set of durations, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timing {
    /// Values.
    pub count: u64,
    /// Sum of values.
    pub sum: f64,
    /// Sum of squared values.
    pub sum_sq: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Timing {
    /// Adds one value.
    pub fn add(&mut self, ns: f64) {
        if self.count == 0 || ns < self.min {
            self.min = ns;
        }
        if ns > self.max {
            self.max = ns;
        }
        self.count += 1;
        self.sum += ns;
        self.sum_sq += ns * ns;
    }

    /// The statistics of both sets together.
    pub fn combined(&self, other: &Timing) -> Timing {
        if self.count == 0 {
            return *other;
        }
        if other.count == 0 {
            return *self;
        }
        Timing {
            count: self.count + other.count,
            sum: self.sum + other.sum,
            sum_sq: self.sum_sq + other.sum_sq,
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The same statistics with every value multiplied by `factor` (unit conversion).
    pub fn scaled(&self, factor: f64) -> Timing {
        Timing {
            count: self.count,
            sum: self.sum * factor,
            sum_sq: self.sum_sq * factor * factor,
            min: self.min * factor,
            max: self.max * factor,
        }
    }

    /// Mean value.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Population standard deviation.
    pub fn stddev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let mean = self.mean();
        (self.sum_sq / self.count as f64 - mean * mean)
            .max(0.0)
            .sqrt()
    }

    /// Appends mean, standard deviation, min and max (not the count), log-quantised
    /// ([`put_quantised`]) when `compact`, else exact (f64 bits).
    fn encode_values(&self, out: &mut Vec<u8>, compact: bool) {
        for v in [self.mean(), self.stddev(), self.min, self.max] {
            if compact {
                put_quantised(out, v, FINE_STEPS);
            } else {
                put_u64(out, v.to_bits());
            }
        }
    }

    /// Reads what [`Timing::encode_values`] wrote, for `count` values.
    fn decode_values(r: &mut Reader, count: u64, compact: bool) -> Option<Timing> {
        let mut value = || {
            if compact {
                read_quantised(r, FINE_STEPS)
            } else {
                Some(f64::from_bits(r.u64()?)).filter(|v| v.is_finite())
            }
        };
        let (mean, stddev, min, max) = (value()?, value()?, value()?, value()?);
        let n = count as f64;
        Some(Timing {
            count,
            sum: mean * n,
            sum_sq: (stddev * stddev + mean * mean) * n,
            min,
            max,
        })
    }
}

/// A call's timing statistics: how long the calls took, and how long the thread computed
/// (outside MPI) before each of them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CallTiming {
    /// Durations of the calls.
    pub duration: Timing,
    /// Intervals from the end of the thread's previous call to the start of each call (0 for
    /// a thread's first call).
    pub interval: Timing,
}

impl CallTiming {
    /// Adds one call.
    pub fn add(&mut self, interval_ns: f64, duration_ns: f64) {
        self.interval.add(interval_ns);
        self.duration.add(duration_ns);
    }

    /// Both sets of calls together.
    pub fn combined(&self, other: &CallTiming) -> CallTiming {
        CallTiming {
            duration: self.duration.combined(&other.duration),
            interval: self.interval.combined(&other.interval),
        }
    }

    /// Every value multiplied by `factor`.
    pub fn scaled(&self, factor: f64) -> CallTiming {
        CallTiming {
            duration: self.duration.scaled(factor),
            interval: self.interval.scaled(factor),
        }
    }

    /// Appends the calls' count (durations and intervals come in pairs, so one count), then
    /// the duration and the interval statistics.
    pub fn encode(&self, out: &mut Vec<u8>, compact: bool) {
        debug_assert_eq!(self.duration.count, self.interval.count);
        put_u64(out, self.duration.count);
        if self.duration.count > 0 {
            self.duration.encode_values(out, compact);
            self.interval.encode_values(out, compact);
        }
    }

    /// Reads what [`CallTiming::encode`] wrote.
    pub fn decode(r: &mut Reader, compact: bool) -> Option<CallTiming> {
        let count = r.u64()?;
        if count == 0 {
            return Some(CallTiming::default());
        }
        Some(CallTiming {
            duration: Timing::decode_values(r, count, compact)?,
            interval: Timing::decode_values(r, count, compact)?,
        })
    }
}

/// One rank's totals over all its threads: nanoseconds inside MPI calls and between them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RankTime {
    /// Time inside MPI calls.
    pub mpi_ns: f64,
    /// Time between calls (computation).
    pub compute_ns: f64,
}

impl RankTime {
    /// The totals of `timing` (per terminal, over all threads).
    pub fn of<'a>(timing: impl IntoIterator<Item = &'a CallTiming>) -> RankTime {
        timing
            .into_iter()
            .fold(RankTime::default(), |t, c| RankTime {
                mpi_ns: t.mpi_ns + c.duration.sum,
                compute_ns: t.compute_ns + c.interval.sum,
            })
    }

    /// The totals as stored in a file: quantised to [`COARSE_STEPS`], so ranks that spent
    /// about the same time store the same value and the rank column stays small.
    pub fn quantised(&self) -> (u64, u64) {
        (
            quantise(self.mpi_ns, COARSE_STEPS),
            quantise(self.compute_ns, COARSE_STEPS),
        )
    }

    /// The totals a file's quantised codes stand for.
    pub fn from_quantised(mpi: u64, compute: u64) -> Option<RankTime> {
        Some(RankTime {
            mpi_ns: dequantise(mpi, COARSE_STEPS)?,
            compute_ns: dequantise(compute, COARSE_STEPS)?,
        })
    }
}

/// Quantisation steps per doubling for timing statistics: relative error at most
/// 2^(1/1024) − 1 ≈ 0.07% each way (a step is 0.14%).
pub const FINE_STEPS: f64 = 512.0;
/// Quantisation steps per doubling for per-rank totals: at most ±4.4%.
pub const COARSE_STEPS: f64 = 8.0;

/// The log-quantised code of a non-negative value: `round(log2(1 + v) · steps)`.
pub fn quantise(v: f64, steps: f64) -> u64 {
    ((1.0 + v.max(0.0)).log2() * steps).round() as u64
}

/// The value a [`quantise`]d code stands for; `None` for codes no finite value has.
pub fn dequantise(code: u64, steps: f64) -> Option<f64> {
    let v = (code as f64 / steps).exp2() - 1.0;
    (code as f64 / steps <= 1024.0).then_some(v.max(0.0))
}

fn put_quantised(out: &mut Vec<u8>, v: f64, steps: f64) {
    put_u64(out, quantise(v, steps));
}

fn read_quantised(r: &mut Reader, steps: f64) -> Option<f64> {
    dequantise(r.u64()?, steps)
}

/// The timing family of a signature, as bytes: equal for signatures whose calls are pooled.
pub fn timing_family(signature: &[u8]) -> Vec<u8> {
    let Some(parsed) = Signature::parse(signature) else {
        return signature.to_vec();
    };
    let mut key = Vec::new();
    crate::varint::put_u64(&mut key, parsed.function.into());
    crate::varint::put_u64(&mut key, parsed.thread.into());
    if let Some(caller) = &parsed.caller {
        caller.encode(&mut key);
    }
    family_values(&parsed.values)
        .iter()
        .for_each(|v| v.encode(&mut key));
    key
}

/// The timing family of a parsed signature's values: ints reduced to their magnitude class
/// (sign and bit length), buffers to their kind, peers, request ids and statuses blanked,
/// while function, thread, communicators, datatypes, ops and special ranks are kept.
pub fn family_values(values: &[Value]) -> Vec<Value> {
    values.iter().map(family_value).collect()
}

fn magnitude(v: i64) -> i64 {
    let bits = 64 - i64::from(v.unsigned_abs().leading_zeros());
    if v < 0 {
        -bits
    } else {
        bits
    }
}

/// A timing family's placeholder for a per-rank integer (no magnitude class is this).
const PER_RANK: i64 = i64::MIN;

fn family_value(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Int(magnitude(*i)),
        Value::Rank(r) => Value::Rank(blank_rank(*r)),
        Value::Buffer(Buffer::Segment { .. } | Buffer::Stack { .. }) => {
            Value::Buffer(Buffer::Segment { id: 0, offset: 0 })
        }
        Value::Handle(HandleKind::Request, HandleRef::Id(_)) => {
            Value::Handle(HandleKind::Request, HandleRef::Id(0))
        }
        Value::Array(items) => Value::Array(items.iter().map(family_value).collect()),
        Value::Status(s) => Value::Status(Status {
            source: blank_rank(s.source),
            tag: 0,
            error: s.error,
            bytes: magnitude(s.bytes),
        }),
        Value::Coords(c) => Value::Coords(vec![0; c.len()]),
        // Per-rank values (chosen at the merge): one placeholder, so the calls a joint
        // signature stands for pool their timing.
        Value::RankAffine { .. } | Value::RankColumn(_) => Value::Int(PER_RANK),
        Value::RankStatus { source, error, .. } => Value::Status(Status {
            source: blank_rank(*source),
            tag: 0,
            error: *error,
            bytes: PER_RANK,
        }),
        Value::RankBuffer { .. } => Value::Buffer(Buffer::Segment { id: 0, offset: 0 }),
        Value::RankHandle { kind, .. } => Value::Handle(*kind, HandleRef::Id(0)),
        other => other.clone(),
    }
}

/// Special ranks as they are; every numbered peer as one placeholder.
pub fn blank_rank(r: Rank) -> Rank {
    if r.is_special() {
        r
    } else {
        Rank::Absolute(0)
    }
}

/// `TIME`: a flag (1 when values are quantised, in files; 0 exact, in merge messages), the
/// family statistics (a terminal of the family, then its [`CallTiming`]), and a rank column of
/// each rank's totals (quantised codes, or exact f64 values).
pub fn encode_timing<'a>(
    timing: &[FamilyTiming],
    rank_times: Option<impl Iterator<Item = &'a RankTime>>,
    compact: bool,
) -> Vec<u8> {
    let mut out = vec![u8::from(compact)];
    put_u64(&mut out, timing.len() as u64);
    for family in timing {
        put_u64(&mut out, family.terminal.into());
        family.stats.encode(&mut out, compact);
    }
    let Some(rank_times) = rank_times else {
        return out;
    };
    if compact {
        let codes: Vec<(u64, u64)> = rank_times.map(|t| t.quantised()).collect();
        put_column(&mut out, &codes, |o, &(mpi, compute)| {
            put_u64(o, mpi);
            put_u64(o, compute);
        });
    } else {
        let exact: Vec<[u64; 2]> = rank_times
            .map(|t| [t.mpi_ns.to_bits(), t.compute_ns.to_bits()])
            .collect();
        put_column(&mut out, &exact, |o, v| {
            v.iter().for_each(|&b| put_u64(o, b))
        });
    }
    out
}

/// Reads what [`encode_timing`] wrote for `ranks` ranks; without `with_ranks` (the writer
/// had no rank times: `RQTM` holds them), the rank times are 0.
pub fn decode_timing(
    bytes: &[u8],
    ranks: usize,
    with_ranks: bool,
) -> Option<(Vec<FamilyTiming>, Vec<RankTime>)> {
    let mut r = Reader::new(bytes);
    let compact = match r.byte()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    let n = r.count()?;
    let families = (0..n)
        .map(|_| {
            Some(FamilyTiming {
                terminal: r.u32()?,
                stats: CallTiming::decode(&mut r, compact)?,
                histogram: None,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    if !with_ranks {
        return (r.remaining() == 0).then(|| (families, vec![RankTime::default(); ranks]));
    }
    let times = read_column(&mut r, ranks, |c| {
        let (a, b) = (c.u64()?, c.u64()?);
        if compact {
            RankTime::from_quantised(a, b)
        } else {
            let (mpi_ns, compute_ns) = (f64::from_bits(a), f64::from_bits(b));
            (mpi_ns.is_finite() && compute_ns.is_finite())
                .then_some(RankTime { mpi_ns, compute_ns })
        }
    })?;
    (r.remaining() == 0).then_some((families, times))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantisation_keeps_the_stated_relative_error() {
        for &v in &[0.0, 1.0, 37.0, 1_234.5, 9.9e6, 3.3e12] {
            let back = dequantise(quantise(v, FINE_STEPS), FINE_STEPS).unwrap();
            // 1 + v is within half a step: 2^(1/1024) - 1 = 0.068%.
            assert!(
                ((1.0 + back) / (1.0 + v) - 1.0).abs() <= 0.00068,
                "{v} -> {back}"
            );
            let coarse = dequantise(quantise(v, COARSE_STEPS), COARSE_STEPS).unwrap();
            assert!(((1.0 + coarse) / (1.0 + v) - 1.0).abs() <= 0.0443);
        }
        assert_eq!(dequantise(u64::MAX, FINE_STEPS), None);
    }

    #[test]
    fn statistics_round_trip_exactly_in_messages_and_within_bounds_in_files() {
        let mut t = CallTiming::default();
        for i in 0..100 {
            t.add(1000.0 + f64::from(i), 50.0 + f64::from(i % 7));
        }
        for compact in [false, true] {
            let mut out = Vec::new();
            t.encode(&mut out, compact);
            let back = CallTiming::decode(&mut Reader::new(&out), compact).unwrap();
            if compact {
                assert_eq!(back.duration.count, 100);
                assert!((back.interval.mean() / t.interval.mean() - 1.0).abs() < 0.001);
                assert!((back.duration.max - 56.0).abs() < 0.1);
                assert!(out.len() <= 1 + 8 * 2, "{} bytes", out.len());
            } else {
                assert_eq!(back.duration.count, t.duration.count);
                assert!((back.duration.sum - t.duration.sum).abs() < 1e-6);
                assert!((back.interval.stddev() - t.interval.stddev()).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn families_ignore_sizes_within_a_power_of_two_and_peers() {
        let send = |count, dest, offset| {
            vec![
                Value::Buffer(Buffer::Segment { id: 3, offset }),
                Value::Int(count),
                Value::Rank(Rank::Relative(dest)),
                Value::Rank(Rank::ProcNull),
            ]
        };
        assert_eq!(
            family_values(&send(4734, 1, 0)),
            family_values(&send(4656, -3, 800))
        );
        assert_ne!(
            family_values(&send(4734, 1, 0)),
            family_values(&send(9000, 1, 0))
        );
    }
}
