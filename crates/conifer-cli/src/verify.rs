//! `conifer verify`: the trace against the raw record written with `--raw`, call by call.

use crate::output::outln;
use conifer_trace::decode::Signature;
use conifer_trace::open as load;
use conifer_trace::varint::Reader;
use conifer_trace::ReadCalls;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The raw record of one rank: per thread, its signatures in call order.
fn read_raw(path: &Path) -> Result<Vec<Vec<Vec<u8>>>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut r = Reader::new(&bytes);
    let mut threads: Vec<Vec<Vec<u8>>> = Vec::new();
    while r.remaining() > 0 {
        let bad = || format!("{} is not a Conifer raw record", path.display());
        let thread = r.u32().ok_or_else(bad)? as usize;
        let len = r.count().ok_or_else(bad)?;
        let sig = r.take(len).ok_or_else(bad)?.to_vec();
        if threads.len() <= thread {
            threads.resize(thread + 1, Vec::new());
        }
        threads[thread].push(sig);
    }
    Ok(threads)
}

fn describe(sig: &[u8]) -> String {
    match Signature::parse(sig) {
        Some(s) => format!(
            "function {} with {} values {:?}, returning {}",
            s.function,
            s.values.len(),
            s.values,
            s.ret
        ),
        None => format!("malformed signature {sig:?}"),
    }
}

fn is_free_event(trace: &conifer_trace::Trace, sig: &[u8]) -> bool {
    let id = Reader::new(sig).u64();
    trace
        .catalog
        .iter()
        .any(|f| f.name == "free" && Some(u64::from(f.id)) == id)
}

/// Compares the trace at `path` with the raw record in `raw` (default: `<path>.raw`).
pub fn run(path: &Path, raw: Option<&Path>) -> Result<ExitCode, String> {
    let mut out = String::new();
    let result = run_into(&mut out, path, raw);
    crate::output::emit(&out)?;
    result
}

/// Writes what [`run`] prints into `out`.
fn run_into(out: &mut String, path: &Path, raw: Option<&Path>) -> Result<ExitCode, String> {
    let trace = load(path)?;
    let dir: PathBuf = raw
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(format!("{}.raw", path.display())));
    if !dir.is_dir() {
        return Err(format!(
            "no raw record at {}: record the run with --raw (or CONIFER_RAW=1)",
            dir.display()
        ));
    }
    let mut calls = 0u64;
    // Ranks of a partial trace that left no record have no raw record either.
    let present: Vec<u32> = (0..trace.meta.ranks)
        .filter(|r| !trace.meta.missing_ranks.contains(r))
        .collect();
    for &rank in &present {
        let raw = read_raw(&dir.join(format!("rank{rank}.raw")))?;
        let traced = trace.thread_sequences(rank);
        if traced.len() != raw.len() {
            outln!(
                out,
                "rank {rank}: the trace has {} threads, the raw record {}",
                traced.len(),
                raw.len()
            );
            return Ok(ExitCode::FAILURE);
        }
        for (thread, (seq, expected)) in traced.into_iter().zip(&raw).enumerate() {
            let mut n = 0usize;
            for got in seq {
                match expected.get(n) {
                    Some(want) if want.as_slice() == &*got => {}
                    Some(want) => {
                        outln!(out,
                            "first difference: rank {rank} thread {thread} call {n}:\n  raw:   {}\n  trace: {}",
                            describe(want),
                            describe(&got)
                        );
                        return Ok(ExitCode::FAILURE);
                    }
                    None => {
                        outln!(out, "rank {rank} thread {thread}: the trace has more calls than the raw record ({n})");
                        return Ok(ExitCode::FAILURE);
                    }
                }
                n += 1;
            }
            if n != expected.len() {
                outln!(
                    out,
                    "rank {rank} thread {thread}: the trace has {n} calls, the raw record {}",
                    expected.len()
                );
                return Ok(ExitCode::FAILURE);
            }
            // `free` events are checked like calls but not counted as MPI calls.
            calls += expected
                .iter()
                .filter(|sig| !is_free_event(&trace, sig))
                .count() as u64;
        }
    }
    if present.len() == trace.meta.ranks as usize {
        outln!(
            out,
            "identical: {calls} calls on {} ranks",
            trace.meta.ranks
        );
    } else {
        outln!(
            out,
            "identical: {calls} calls on {} ranks ({} of {} left no record)",
            present.len(),
            trace.meta.missing_ranks.len(),
            trace.meta.ranks
        );
    }
    Ok(ExitCode::SUCCESS)
}
