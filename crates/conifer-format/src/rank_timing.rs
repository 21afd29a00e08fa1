//! Per-rank timing in a few bytes (`RQTM`): in files recorded with aggregate or histogram
//! timing, each rank's clock ([`RankClock`]) and totals ([`RankTotals`]) are kept within a
//! stated error — every figure within a relative error ε of itself, or within ε × a floor
//! for figures below the floor (0.1% and 1 µs by default) — rather than exactly. Each figure
//! is quantised (linearly below the floor, logarithmically above it; clock offsets to rank 0
//! linearly, within ε × the floor), and per figure the ranks' codes are stored as deviations
//! from a prediction — their common value, a rank a few places earlier, or another figure of
//! the same rank — in Exp-Golomb codes, so ranks that behave alike cost a few bits a figure.
//! Lossless and lossy per-call timing keep `CLCK` and `RTOT`, exact.

use crate::clock::{ClockSample, RankClock, ThreadSpan};
use crate::columns::{put_column, read_column};
use crate::exp_golomb::{best_order, cost, BitReader, BitWriter};
use crate::rank_totals::{FunctionTotals, RankTotals};
use crate::varint::{put_u64, unzigzag, zigzag, Reader};

/// The error the per-rank figures of a trace carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    /// Every figure is within this fraction of itself (0.001: 0.1%)...
    pub relative: f64,
    /// ... or, below this many nanoseconds, within `relative` × this.
    pub floor_ns: u64,
}

/// What one clock read costs is in picoseconds; below this many, it is within ε × this.
const READ_FLOOR_PS: u64 = 1_000;

impl Precision {
    /// What files recorded with aggregate or histogram timing keep: 0.1%, or 1 µs below 1 ms.
    pub const DEFAULT: Precision = Precision {
        relative: 0.001,
        floor_ns: 1_000_000,
    };

    /// The largest error of a figure of `value` ns.
    pub fn bound_ns(&self, value: f64) -> f64 {
        self.relative * value.abs().max(self.floor_ns as f64)
    }

    /// How the error reads in tables: "0.1% (1 µs below 1 ms)".
    pub fn describe(&self) -> String {
        let floor = self.floor_ns as f64;
        format!(
            "{}% ({} below {})",
            self.relative * 100.0,
            short_time(floor * self.relative),
            short_time(floor)
        )
    }

    fn ppm(&self) -> u64 {
        (self.relative * 1e6).round() as u64
    }

    /// Linear codes below the floor: 0 ..= `steps()`, each `floor / steps()` wide.
    fn steps(&self) -> u64 {
        (0.5 / self.relative).ceil() as u64
    }

    /// Width of a logarithmic bin above the floor: its centre is within 0.9 ε of every value
    /// in it, leaving 0.1 ε for rounding to a whole nanosecond.
    fn width(&self) -> f64 {
        2.0 * (0.9 * self.relative).ln_1p()
    }

    /// The code of `v` ≥ 0 for a floor of `floor` units.
    fn code(&self, v: u64, floor: u64) -> i64 {
        let (steps, floor) = (self.steps(), floor.max(1));
        let code = if v < floor {
            (v as f64 * steps as f64 / floor as f64).round() as u64
        } else {
            steps + ((v as f64 / floor as f64).ln() / self.width()).round() as u64
        };
        code as i64
    }

    /// The value a code stands for (`None` beyond `i64`).
    fn value(&self, code: i64, floor: u64) -> Option<u64> {
        let (steps, floor) = (self.steps() as i64, floor.max(1) as f64);
        let v = match code {
            c if c < 0 => return None,
            c if c <= steps => c as f64 * floor / steps as f64,
            c => floor * ((c - steps) as f64 * self.width()).exp(),
        };
        (v < i64::MAX as f64).then(|| v.round() as u64)
    }

    /// Offsets are kept within ε × the floor whatever their size: codes of that many
    /// nanoseconds, doubled.
    fn linear_code(&self, v: i64) -> i64 {
        (v as f64 / self.linear_step()).round() as i64
    }

    fn linear_value(&self, code: i64) -> Option<i64> {
        let v = code as f64 * self.linear_step();
        (v.abs() < i64::MAX as f64).then(|| v.round() as i64)
    }

    fn linear_step(&self) -> f64 {
        self.floor_ns as f64 / self.steps() as f64
    }

    fn signed_code(&self, v: i64, floor: u64) -> i64 {
        let code = self.code(v.unsigned_abs(), floor);
        if v < 0 {
            -code
        } else {
            code
        }
    }

    fn signed_value(&self, code: i64, floor: u64) -> Option<i64> {
        let v = i64::try_from(self.value(code.checked_abs()?, floor)?).ok()?;
        Some(if code < 0 { -v } else { v })
    }
}

fn short_time(ns: f64) -> String {
    match ns {
        v if v >= 1e6 => format!("{} ms", v / 1e6),
        v if v >= 1e3 => format!("{} µs", v / 1e3),
        v => format!("{v} ns"),
    }
}

/// Which figures a rank has: its offset measurements, threads and functions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Shape {
    init: bool,
    finalize: bool,
    threads: usize,
    functions: Vec<u16>,
}

impl Shape {
    fn of(clock: &RankClock, functions: &[FunctionTotals]) -> Shape {
        Shape {
            init: clock.init.is_some(),
            finalize: clock.finalize.is_some(),
            threads: clock.threads.len(),
            functions: functions.iter().map(|f| f.function).collect(),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, u64::from(self.init) | u64::from(self.finalize) << 1);
        put_u64(out, self.threads as u64);
        put_u64(out, self.functions.len() as u64);
        let mut previous = 0;
        for &f in &self.functions {
            put_u64(out, u64::from(f - previous));
            previous = f;
        }
    }

    fn decode(r: &mut Reader) -> Option<Shape> {
        let flags = r.u64().filter(|&f| f < 4)?;
        let threads = r.count()?;
        let n = r.count()?;
        let mut function = 0u16;
        let functions = (0..n)
            .map(|i| {
                let gap = u16::try_from(r.u64()?).ok().filter(|&g| g > 0 || i == 0)?;
                function = function.checked_add(gap)?;
                Some(function)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Shape {
            init: flags & 1 == 1,
            finalize: flags & 2 == 2,
            threads,
            functions,
        })
    }

    /// Whether the rank has `field`.
    fn has(&self, field: Field) -> bool {
        match field {
            Field::ReadPs | Field::Recorder | Field::Compute => true,
            Field::InitLocal | Field::InitOffset => self.init,
            Field::FinalizeLocal | Field::FinalizeOffset => self.finalize,
            Field::Base(t) | Field::End(t) => t < self.threads,
            Field::Function(f) => self.functions.binary_search(&f).is_ok(),
        }
    }
}

/// One figure of a rank, in the order the section stores them.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Field {
    ReadPs,
    InitLocal,
    InitOffset,
    FinalizeLocal,
    FinalizeOffset,
    Base(usize),
    End(usize),
    Recorder,
    Compute,
    Function(u16),
}

/// Every field some rank has, in section order.
fn fields(shapes: &[Shape]) -> Vec<Field> {
    let threads = shapes.iter().map(|s| s.threads).max().unwrap_or(0);
    let mut functions: Vec<u16> = shapes.iter().flat_map(|s| s.functions.clone()).collect();
    functions.sort_unstable();
    functions.dedup();
    let mut out = vec![
        Field::ReadPs,
        Field::InitLocal,
        Field::InitOffset,
        Field::FinalizeLocal,
        Field::FinalizeOffset,
    ];
    out.extend((0..threads).flat_map(|t| [Field::Base(t), Field::End(t)]));
    out.extend([Field::Recorder, Field::Compute]);
    out.extend(functions.into_iter().map(Field::Function));
    out
}

/// One rank's figures merged per function (ids ascending, each once).
fn merged_functions(totals: &RankTotals) -> Vec<FunctionTotals> {
    let mut out: Vec<FunctionTotals> = Vec::new();
    let mut sorted = totals.functions.clone();
    sorted.sort_by_key(|f| f.function);
    for f in sorted {
        match out.last_mut() {
            Some(last) if last.function == f.function => last.mpi_ns += f.mpi_ns,
            _ => out.push(f),
        }
    }
    out
}

/// The code of `field` of a rank.
fn code_of(
    p: &Precision,
    field: Field,
    clock: &RankClock,
    totals: &[FunctionTotals],
    recorder: u64,
    compute: u64,
) -> i64 {
    let floor = p.floor_ns;
    let sample = |s: Option<ClockSample>| s.unwrap_or_default();
    let thread = |t: usize| clock.threads[t];
    match field {
        Field::ReadPs => p.code(clock.read_ps, READ_FLOOR_PS),
        Field::InitLocal => p.signed_code(sample(clock.init).local_ns, floor),
        Field::InitOffset => p.linear_code(sample(clock.init).offset_ns),
        Field::FinalizeLocal => p.signed_code(sample(clock.finalize).local_ns, floor),
        Field::FinalizeOffset => p.linear_code(sample(clock.finalize).offset_ns),
        Field::Base(t) => p.signed_code(thread(t).base_ns, floor),
        Field::End(t) => p.signed_code(thread(t).end_ns, floor),
        Field::Recorder => p.code(recorder, floor),
        Field::Compute => p.code(compute, floor),
        Field::Function(id) => {
            let f = totals
                .iter()
                .find(|f| f.function == id)
                .map_or(0, |f| f.mpi_ns);
            p.code(f, floor)
        }
    }
}

/// How a field's codes are predicted: 0 the common value alone; 1–8 the code of the rank
/// that many owners of the field earlier (0 for the first ones); 9 + 2 *j* + *s* the same
/// rank's code of field *j* (an earlier field every owner has), negated when *s* is 1.
type Mode = u64;

const LAGS: u64 = 8;

/// The prediction of owner `i`'s code of `field` under `mode` (`codes[f][rank]`, owners in
/// rank order); `None` when the mode does not apply.
fn predict(mode: Mode, codes: &[Vec<Option<i64>>], owners: &[usize], i: usize) -> Option<i64> {
    match mode {
        0 => Some(0),
        lag if lag <= LAGS => Some(
            i.checked_sub(lag as usize)
                .map_or(0, |j| codes_at(codes, owners, j)),
        ),
        reference => {
            let (field, negate) = ((reference - LAGS - 1) / 2, reference % 2 == 0);
            let c = codes
                .get(field as usize)?
                .get(owners[i])
                .copied()
                .flatten()?;
            Some(if negate { c.wrapping_neg() } else { c })
        }
    }
}

fn codes_at(codes: &[Vec<Option<i64>>], owners: &[usize], i: usize) -> i64 {
    let field = codes.len() - 1;
    codes[field][owners[i]].unwrap_or(0)
}

/// Writes the last field of `codes` (owned by `owners`): mode, common value and
/// Exp-Golomb order (each an order-0 code), then per owner its code less the prediction and
/// the common value, the mode that costs fewest bits.
fn put_field(w: &mut BitWriter, codes: &[Vec<Option<i64>>], owners: &[usize]) {
    let field = codes.len() - 1;
    let own = |i: usize| codes[field][owners[i]].unwrap_or(0);
    let references = (0..field as u64).flat_map(|j| [LAGS + 1 + 2 * j, LAGS + 2 + 2 * j]);
    let best = (0..=LAGS)
        .chain(references)
        .filter_map(|mode| {
            let residuals = (0..owners.len())
                .map(|i| Some(own(i).wrapping_sub(predict(mode, codes, owners, i)?)))
                .collect::<Option<Vec<i64>>>()?;
            let mut sorted = residuals.clone();
            sorted.sort_unstable();
            let common = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
            let values: Vec<u64> = residuals
                .iter()
                .map(|&r| zigzag(r.wrapping_sub(common)))
                .collect();
            let (k, bits) = best_order(&values);
            let header = cost(mode, 0) + cost(zigzag(common), 0) + cost(k.into(), 0);
            Some((bits + header, mode, common, k, values))
        })
        .min_by_key(|c| (c.0, c.1));
    let (_, mode, common, k, values) = best.unwrap_or((0, 0, 0, 0, Vec::new()));
    w.put(mode, 0);
    w.put(zigzag(common), 0);
    w.put(k.into(), 0);
    values.iter().for_each(|&v| w.put(v, k));
}

/// Reads what [`put_field`] wrote into the last field of `codes`.
fn read_field(r: &mut BitReader, codes: &mut [Vec<Option<i64>>], owners: &[usize]) -> Option<()> {
    let field = codes.len() - 1;
    let mode = r
        .get(0)
        .filter(|&m| m <= LAGS || (m - LAGS - 1) / 2 < field as u64)?;
    let common = unzigzag(r.get(0)?);
    let k = u32::try_from(r.get(0)?).ok().filter(|&k| k <= 63)?;
    for i in 0..owners.len() {
        let prediction = predict(mode, codes, owners, i)?;
        let d = unzigzag(r.get(k)?);
        codes[field][owners[i]] = Some(prediction.wrapping_add(common).wrapping_add(d));
    }
    Some(())
}

/// The `RQTM` section of the ranks' clocks and totals within `p`.
pub fn encode(p: &Precision, ranks: &[(&RankClock, &RankTotals)]) -> Vec<u8> {
    let functions: Vec<Vec<FunctionTotals>> =
        ranks.iter().map(|(_, t)| merged_functions(t)).collect();
    let shapes: Vec<Shape> = ranks
        .iter()
        .zip(&functions)
        .map(|((c, _), f)| Shape::of(c, f))
        .collect();
    let mut out = Vec::new();
    put_u64(&mut out, p.ppm());
    put_u64(&mut out, p.floor_ns);
    put_column(&mut out, &shapes, |o, s| s.encode(o));
    let mut w = BitWriter::default();
    let mut codes: Vec<Vec<Option<i64>>> = Vec::new();
    for field in fields(&shapes) {
        let column: Vec<Option<i64>> = ranks
            .iter()
            .zip(&functions)
            .zip(&shapes)
            .map(|(((clock, totals), f), shape)| {
                shape
                    .has(field)
                    .then(|| code_of(p, field, clock, f, totals.recorder_ns, totals.compute_ns))
            })
            .collect();
        let owners: Vec<usize> = (0..ranks.len()).filter(|&i| column[i].is_some()).collect();
        codes.push(column);
        put_field(&mut w, &codes, &owners);
    }
    out.extend(w.finish());
    out
}

/// Reads an `RQTM` section for `ranks` ranks: the precision and each rank's clock and totals.
pub fn decode(bytes: &[u8], ranks: usize) -> Option<(Precision, Vec<(RankClock, RankTotals)>)> {
    let mut r = Reader::new(bytes);
    let ppm = r.u64().filter(|&v| (1..=100_000).contains(&v))?;
    let p = Precision {
        relative: ppm as f64 / 1e6,
        floor_ns: r.u64()?,
    };
    let shapes = read_column(&mut r, ranks, Shape::decode)?;
    let mut bits = BitReader::new(r.take(r.remaining())?);
    let mut codes: Vec<Vec<Option<i64>>> = Vec::new();
    let all = fields(&shapes);
    for &field in &all {
        let owners: Vec<usize> = (0..ranks).filter(|&i| shapes[i].has(field)).collect();
        codes.push(vec![None; ranks]);
        read_field(&mut bits, &mut codes, &owners)?;
    }
    if !bits.at_end() {
        return None;
    }
    let out = shapes
        .iter()
        .enumerate()
        .map(|(i, shape)| {
            let own: Vec<i64> = codes.iter().filter_map(|column| column[i]).collect();
            rank_of(&p, shape, &own)
        })
        .collect::<Option<Vec<_>>>()?;
    Some((p, out))
}

/// A rank's clock and totals from its codes, in section order.
fn rank_of(p: &Precision, shape: &Shape, codes: &[i64]) -> Option<(RankClock, RankTotals)> {
    let mut next = codes.iter().copied();
    let mut code = || next.next();
    let floor = p.floor_ns;
    let read_ps = p.value(code()?, READ_FLOOR_PS)?;
    let mut sample = |present: bool| -> Option<Option<ClockSample>> {
        if !present {
            return Some(None);
        }
        let local_ns = p.signed_value(code()?, floor)?;
        Some(Some(ClockSample {
            local_ns,
            offset_ns: p.linear_value(code()?)?,
        }))
    };
    let init = sample(shape.init)?;
    let finalize = sample(shape.finalize)?;
    let threads = (0..shape.threads)
        .map(|_| {
            Some(ThreadSpan {
                base_ns: p.signed_value(code()?, floor)?,
                end_ns: p.signed_value(code()?, floor)?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let recorder_ns = p.value(code()?, floor)?;
    let compute_ns = p.value(code()?, floor)?;
    let functions = shape
        .functions
        .iter()
        .map(|&function| {
            Some(FunctionTotals {
                function,
                mpi_ns: p.value(code()?, floor)?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let clock = RankClock {
        read_ps,
        init,
        finalize,
        threads,
    };
    let totals = RankTotals {
        recorder_ns,
        compute_ns,
        functions,
    };
    Some((clock, totals))
}

#[cfg(test)]
mod tests;
