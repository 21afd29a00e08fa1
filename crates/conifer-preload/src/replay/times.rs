//! The computation the replayed rank does between its MPI calls, timed call by call and
//! written at its `MPI_Finalize` (`CONIFER_REPLAY_TIMES`): a one-line JSON header, then one
//! little-endian `u64` of nanoseconds per call, the computation before it.
//!
//! Intervals are read with the recorder's cheap clock ([`crate::clock`]), from the return of
//! one call's wrapper to the entry of the next, less one clock read (as the recorder hides
//! its own). A replay shares its machine with whatever else runs there: the time the rank was
//! not on a CPU is taken out by scaling every interval by the share of the replay the thread
//! ran (its CPU time over its wall time, at most 1), which the header states.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Ticks of computation before each call so far.
static TICKS: Mutex<Vec<u64>> = Mutex::new(Vec::new());
/// Tick at which the last call returned to the program (0: before the first call).
static LAST_EXIT: AtomicU64 = AtomicU64::new(0);
/// The thread's CPU time (ns) at its first call.
static CPU_AT_START: AtomicU64 = AtomicU64::new(0);

fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the calling thread's CPU clock to a local.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Called as the program enters an MPI call: ends the computation before it.
pub fn enter() {
    let now = crate::clock::ticks();
    let last = LAST_EXIT.load(Ordering::Relaxed);
    let before = if last == 0 {
        0
    } else {
        now.saturating_sub(last)
            .saturating_sub(crate::clock::read_cost())
    };
    TICKS.lock().unwrap_or_else(|e| e.into_inner()).push(before);
}

/// Called as the call returns to the program. The replay's clocks start as its first call
/// (`MPI_Init`, which starts a singleton MPI and mostly waits) returns.
pub fn leave() {
    if LAST_EXIT.load(Ordering::Relaxed) == 0 {
        crate::clock::start();
        CPU_AT_START.store(thread_cpu_ns(), Ordering::Relaxed);
    }
    LAST_EXIT.store(crate::clock::ticks(), Ordering::Relaxed);
}

/// The number of MPI calls the program has made so far (the one being answered included).
pub fn calls_so_far() -> usize {
    TICKS.lock().unwrap_or_else(|e| e.into_inner()).len()
}

/// Writes the times (at the program's `MPI_Finalize`, whose computation before it is the last
/// interval).
pub fn write() {
    let Ok(path) = std::env::var("CONIFER_REPLAY_TIMES") else {
        return;
    };
    let now = crate::clock::ticks();
    let mut ticks = TICKS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    ticks.push(now.saturating_sub(LAST_EXIT.load(Ordering::Relaxed)));
    let ns_per_tick = crate::clock::ns_per_tick();
    let wall_ns = crate::clock::origin_ticks().abs_diff(now) as f64 * ns_per_tick;
    let cpu_ns = thread_cpu_ns().saturating_sub(CPU_AT_START.load(Ordering::Relaxed)) as f64;
    let on_cpu = if wall_ns > 0.0 {
        (cpu_ns / wall_ns).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let mut out = Vec::with_capacity(64 + ticks.len() * 8);
    let _ = writeln!(
        out,
        "{{\"calls\": {}, \"on_cpu\": {on_cpu:.4}, \"wall_ns\": {wall_ns:.0}}}",
        ticks.len()
    );
    for t in &ticks {
        let ns = (*t as f64 * ns_per_tick * on_cpu).round() as u64;
        out.extend_from_slice(&ns.to_le_bytes());
    }
    if let Err(e) = std::fs::write(&path, out) {
        say!("replay: cannot write {path}: {e}");
    }
}
