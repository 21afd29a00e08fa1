//! The rank's record as the merge and `--raw` take it: grammars, tables, timing and trees
//! from the recorder's state, and the uncompressed raw record.

use super::global::lock;
use super::state::{State, TimedCall};
use super::trees;
use conifer_compress::FrozenGrammar;
use conifer_format::call_time::RecorderTime;
use conifer_format::clock::{ClockSample, RankClock, ThreadSpan};
use conifer_format::rank_record::{Membership, RankRecord};
use conifer_format::rank_totals::{FunctionTotals, RankTotals};
use conifer_format::timeline::CallTime;
use conifer_format::timing_mode::TimingMode;
use conifer_format::value::{encode_handle, HandleKind};
use conifer_format::varint::put_u64;
use std::ffi::c_int;

/// The clock offsets of the rank to rank 0 measured at `MPI_Init` and at `MPI_Finalize`, when
/// measured (by the end-of-run code, `crate::clock_sync`, which hands them in).
pub type ClockOffsets = (Option<ClockSample>, Option<ClockSample>);

/// The rank's record, built from `state` and the rank's clock offsets.
pub fn record_of(state: &State, offsets: ClockOffsets) -> RankRecord {
    let grammars = state.grammars.iter().map(|g| g.freeze()).collect();
    let signatures = state.signatures.iter().map(|s| s.to_vec()).collect();
    record_with(state, grammars, signatures, offsets)
}

/// The rank's record at the end of the run, once recording has stopped: the live forms are
/// given up as the record is made — each thread's grammar (its nodes and digram index) freed
/// once frozen, then the signature index and table, the timing and the trace trees — so the
/// merge that follows
/// does not hold a live and a frozen copy of the rank's calls at once.
pub fn take_record(state: &mut State, offsets: ClockOffsets) -> RankRecord {
    let grammars = state
        .grammars
        .iter_mut()
        .map(|g| std::mem::take(g).into_frozen())
        .collect();
    state.table = Default::default();
    let signatures = state.signatures.iter().map(|s| s.to_vec()).collect();
    let record = record_with(state, grammars, signatures, offsets);
    state.signatures = Vec::new();
    state.timing = Vec::new();
    state.trees = Vec::new();
    state.timelines = None;
    state.histograms = None;
    record
}

/// [`record_of`] with the grammars already frozen and the signatures already copied out.
fn record_with(
    state: &State,
    grammars: Vec<FrozenGrammar>,
    signatures: Vec<Vec<u8>>,
    offsets: ClockOffsets,
) -> RankRecord {
    let trees: Vec<_> = state
        .trees
        .iter()
        .map(|b| b.as_ref().map(|b| b.record()))
        .collect();
    let comms: Vec<Membership> = state
        .comms
        .as_ref()
        .map(|c| {
            let groups = c.group_memberships().map(|(kind, handle, my_rank)| {
                let mut group = Vec::new();
                encode_handle(&mut group, kind, handle);
                Membership {
                    comm: group,
                    my_rank,
                    grid: None,
                    leader: None,
                }
            });
            c.memberships()
                .map(|(handle, my_rank, grid, leader)| {
                    let mut comm = Vec::new();
                    encode_handle(&mut comm, HandleKind::Comm, handle);
                    Membership {
                        comm,
                        my_rank,
                        grid,
                        leader,
                    }
                })
                .chain(groups)
                .collect()
        })
        .unwrap_or_default();
    RankRecord {
        signatures,
        timing: state
            .timing
            .iter()
            .map(|t| t.in_ns(state.ns_per_tick()))
            .collect(),
        grammars,
        comms,
        timelines: call_times(state)
            .iter()
            .map(|times| encode_times(times, state.timing_mode))
            .collect(),
        recorder_times: recorder_times(state)
            .iter()
            .map(|times| encode_times(times, state.timing_mode))
            .collect(),
        clock: rank_clock(state, offsets),
        totals: rank_totals(state),
        histograms: state.histograms.as_ref().map_or_else(Vec::new, |h| {
            h.in_ns(state.signatures.len(), state.ns_per_tick())
        }),
        structure: trees
            .iter()
            .any(Option::is_some)
            .then(trees::structure)
            .flatten()
            .cloned(),
        trees,
        streams: state.completions.snapshot(state.grammars.len()),
    }
}

/// A thread's per-call times in the trace's form for `mode` (lossless or lossy).
fn encode_times(times: &[CallTime], mode: TimingMode) -> Vec<u8> {
    match mode {
        TimingMode::Lossy(rel) => conifer_format::lossy_timeline::encode(times, rel),
        _ => conifer_format::timeline::encode(times),
    }
}

/// Ticks `ticks` in whole nanoseconds at `ns_per_tick`.
fn ns_of(ticks: u128, ns_per_tick: f64) -> u64 {
    (ticks as f64 * ns_per_tick).round() as u64
}

/// Real tick `tick` on the rank's clock: nanoseconds from the recorder's origin.
fn local_ns(tick: u64, ns_per_tick: f64) -> i64 {
    ((tick as i128 - crate::clock::origin_ticks() as i128) as f64 * ns_per_tick).round() as i64
}

/// The rank's clock: what a clock read costs, the offsets to rank 0, and where each thread
/// lies (its first call's start, which hid nothing yet, and its last call's end on the real
/// clock: the recorder-free end plus everything hidden since).
fn rank_clock(state: &State, (init, finalize): ClockOffsets) -> RankClock {
    let npt = state.ns_per_tick();
    RankClock {
        read_ps: (crate::clock::read_cost() as f64 * npt * 1e3).round() as u64,
        init,
        finalize,
        threads: (0..state.grammars.len())
            .map(|t| ThreadSpan {
                base_ns: local_ns(state.first_start[t], npt),
                end_ns: local_ns(state.last_end[t] + state.hidden[t], npt),
            })
            .collect(),
    }
}

/// The rank's exact totals: per function and of the computation, from the per-terminal
/// tick sums; the recorder's time, from every thread's hidden ticks.
fn rank_totals(state: &State) -> RankTotals {
    let npt = state.ns_per_tick();
    let mut per_function: std::collections::BTreeMap<u16, u128> = Default::default();
    let mut compute = 0u128;
    for (sig, timing) in state.signatures.iter().zip(&state.timing) {
        let (calls, interval, duration) = timing.sums();
        if calls == 0 {
            continue;
        }
        compute += interval;
        let Some(function) = conifer_format::varint::Reader::new(sig)
            .u64()
            .and_then(|f| u16::try_from(f).ok())
        else {
            continue;
        };
        *per_function.entry(function).or_default() += duration;
    }
    RankTotals {
        recorder_ns: ns_of(state.hidden.iter().map(|&h| u128::from(h)).sum(), npt),
        compute_ns: ns_of(compute, npt),
        functions: per_function
            .into_iter()
            .map(|(function, duration)| FunctionTotals {
                function,
                mpi_ns: ns_of(duration, npt),
            })
            .collect(),
    }
}

/// Per thread, the recorder's time around each call in ns (none unless every call's times
/// are kept), stored as call times (see [`RecorderTime::as_call_time`]).
fn recorder_times(state: &State) -> Vec<Vec<CallTime>> {
    per_thread_timelines(state)
        .into_iter()
        .map(|calls| calls.into_iter().map(|(_, r)| r.as_call_time()).collect())
        .collect()
}

/// Per thread, its calls' intervals and durations in ns (none unless every call's times are
/// kept).
fn call_times(state: &State) -> Vec<Vec<CallTime>> {
    per_thread_timelines(state)
        .into_iter()
        .map(|calls| calls.into_iter().map(|(t, _)| t).collect())
        .collect()
}

/// Per thread, each call's times and the recorder's around it, in ns (none unless every
/// call's times are kept).
fn per_thread_timelines(state: &State) -> Vec<Vec<(CallTime, RecorderTime)>> {
    let npt = state.ns_per_tick();
    let read_ticks = crate::clock::read_cost();
    let read_ns = (read_ticks as f64 * npt * 1e3).round() / 1e3;
    state.timelines.as_ref().map_or_else(Vec::new, |threads| {
        threads
            .iter()
            .enumerate()
            .map(|(t, calls)| {
                let base = local_ns(state.first_start[t], npt) as f64;
                thread_timeline(calls, |tick| local(tick, npt) - base, read_ticks, read_ns)
            })
            .collect()
    })
}

/// Real tick `tick` on the rank's clock, unrounded ns.
fn local(tick: u64, ns_per_tick: f64) -> f64 {
    (tick as i128 - crate::clock::origin_ticks() as i128) as f64 * ns_per_tick
}

/// A thread's calls as the trace stores them: intervals and durations (recorder-free) and
/// the recorder's time before and after each MPI part, in whole ns, chosen so that a reader
/// summing them as `as_run` does (with `read_ns` per clock read) lands within half a
/// nanosecond of every call's true entry, MPI start, MPI end and return (`at` maps a real
/// tick to ns from the thread's base): each value makes up for the rounding of the ones
/// before it, so rounding never accumulates over a long run.
fn thread_timeline(
    calls: &[TimedCall],
    at: impl Fn(u64) -> f64,
    read_ticks: u64,
    read_ns: f64,
) -> Vec<(CallTime, RecorderTime)> {
    let mut position = 0.0f64;
    let mut step = |target: f64, extra: f64| -> u64 {
        let v = (target - position - extra).round().max(0.0);
        position += v + extra;
        v as u64
    };
    calls
        .iter()
        .map(|c| {
            let end = c.end + c.hidden;
            let start = (c.start + c.hidden).saturating_sub(read_ticks);
            let enter = start.saturating_sub(c.pre);
            let exit = end + c.post;
            let interval_ns = step(at(enter), read_ns);
            let pre_ns = step(at(start), 0.0);
            let duration_ns = step(at(end), read_ns);
            let post_ns = step(at(exit), 0.0);
            (
                CallTime {
                    interval_ns,
                    duration_ns,
                },
                RecorderTime { pre_ns, post_ns },
            )
        })
        .collect()
}

/// With `CONIFER_RAW` set, writes this rank's uncompressed record to `dir/rank<R>.raw`: per
/// call, its thread, then its signature (both length-prefixed varints), in call order; and
/// when every call's times are kept, the exact times to `dir/rank<R>.times`: per call, in
/// call order thread by thread, a line `thread interval_ns duration_ns`.
pub fn write_raw(dir: &str, rank: c_int) -> Result<(), String> {
    write_raw_of(&lock(), dir, rank)
}

/// [`write_raw`] from `state`.
pub fn write_raw_of(state: &State, dir: &str, rank: c_int) -> Result<(), String> {
    let Some(raw) = &state.raw else { return Ok(()) };
    let mut out = Vec::new();
    for (thread, sig) in raw {
        put_u64(&mut out, (*thread).into());
        put_u64(&mut out, sig.len() as u64);
        out.extend_from_slice(sig);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {dir}: {e}"))?;
    let path = format!("{dir}/rank{rank}.raw");
    std::fs::write(&path, out).map_err(|e| format!("cannot write {path}: {e}"))?;
    if state.timelines.is_some() {
        let mut text = String::new();
        for (thread, times) in call_times(state).iter().enumerate() {
            for t in times {
                text.push_str(&format!("{thread} {} {}\n", t.interval_ns, t.duration_ns));
            }
        }
        let path = format!("{dir}/rank{rank}.times");
        std::fs::write(&path, text).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}
