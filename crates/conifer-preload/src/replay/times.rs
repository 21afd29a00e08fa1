//! The computation the replayed rank does between its MPI calls, timed call by call and
//! written at its `MPI_Finalize` (`CONIFER_REPLAY_TIMES`): a header line, then one
//! little-endian `u64` of nanoseconds per call, the computation before it.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Computation before each call so far, in nanoseconds.
static TIMES: Mutex<Vec<u64>> = Mutex::new(Vec::new());
/// Nanoseconds since [`origin`] at which the last call returned to the program.
static LAST_EXIT: AtomicU64 = AtomicU64::new(0);

fn origin() -> &'static Instant {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    ORIGIN.get_or_init(Instant::now)
}

fn now_ns() -> u64 {
    origin().elapsed().as_nanos() as u64
}

/// Called as the program enters an MPI call: ends the computation before it.
pub fn enter() -> u64 {
    let now = now_ns();
    let before = now.saturating_sub(LAST_EXIT.load(Ordering::Relaxed));
    TIMES.lock().unwrap_or_else(|e| e.into_inner()).push(before);
    now
}

/// The number of MPI calls the program has made so far (the one being answered included),
/// counted as `conifer decode` numbers them from 0 plus one.
pub fn calls_so_far() -> usize {
    TIMES.lock().unwrap_or_else(|e| e.into_inner()).len()
}

/// Called as the call returns to the program (`entered`: what [`enter`] returned).
pub fn leave(_entered: u64) {
    LAST_EXIT.store(now_ns(), Ordering::Relaxed);
}

/// Writes the times (at the program's `MPI_Finalize`, itself the last call timed) and checks
/// the log is used up.
pub fn at_finalize() {
    super::answer::check_finished();
    let Ok(path) = std::env::var("CONIFER_REPLAY_TIMES") else {
        return;
    };
    let mut times = TIMES.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // The computation before MPI_Finalize itself: its call is timed once it returns here.
    times.push(now_ns().saturating_sub(LAST_EXIT.load(Ordering::Relaxed)));
    let mut out = Vec::with_capacity(64 + times.len() * 8);
    let _ = writeln!(out, "{{\"calls\": {}}}", times.len());
    for t in &times {
        out.extend_from_slice(&t.to_le_bytes());
    }
    if let Err(e) = std::fs::write(&path, out) {
        say!("replay: cannot write {path}: {e}");
    }
}
