//! The computation the replayed rank does between its MPI calls, timed interval by interval
//! and written at its `MPI_Finalize` (`CONIFER_REPLAY_TIMES`): a one-line JSON header, then
//! per call three little-endian `u64`s of nanoseconds for the interval before it — the
//! computation, the wall time, the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`).
//!
//! Each interval runs from the return of one call's wrapper to the entry of the next and is
//! measured on its own. A replay shares its machine with whatever else runs there: the
//! computation of an interval is its wall time less the time the thread waited on a run
//! queue for a CPU in it (the kernel's schedstat), so a neighbour process's share is taken
//! out of the interval it hit while the program's own sleeps, I/O and page faults stay in.
//! Where the kernel keeps no schedstat, the computation is the thread's CPU time. The header
//! states which (`clock`). Intervals before `MPI_Init` (or `MPI_Init_thread`) returns count
//! 0: a call before it (`MPI_Initialized`) and the singleton start-up are not the program's
//! computation; nothing after `MPI_Finalize` is measured.

use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::{Mutex, OnceLock};

/// One reading of the thread's clocks.
#[derive(Clone, Copy)]
struct Mark {
    ticks: u64,
    cpu_ns: u64,
    queued_ns: Option<u64>,
}

/// One interval before a call: wall ticks, CPU ns, run-queue ns (when known).
#[derive(Clone, Copy, Default)]
struct Interval {
    ticks: u64,
    cpu_ns: u64,
    queued_ns: Option<u64>,
}

struct State {
    intervals: Vec<Interval>,
    /// The clocks as the last call returned, once `MPI_Init` has.
    last: Option<Mark>,
    started: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    intervals: Vec::new(),
    last: None,
    started: false,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the calling thread's CPU clock to a local.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The replayed thread's schedstat (opened by the thread that makes the MPI calls).
static SCHEDSTAT: OnceLock<Option<std::fs::File>> = OnceLock::new();

/// Nanoseconds the calling thread has waited on a run queue, from its schedstat (`None`
/// where the kernel keeps none).
fn queued_ns() -> Option<u64> {
    let file = SCHEDSTAT
        .get_or_init(|| std::fs::File::open("/proc/thread-self/schedstat").ok())
        .as_ref()?;
    let mut buf = [0u8; 96];
    let n = file.read_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// Called as the program enters an MPI call: ends the interval before it.
pub fn enter() {
    let ticks = crate::clock::ticks();
    let cpu_ns = thread_cpu_ns();
    let queued = queued_ns();
    let mut s = state();
    let interval = match (s.started, s.last) {
        (true, Some(last)) => Interval {
            ticks: ticks
                .saturating_sub(last.ticks)
                .saturating_sub(crate::clock::read_cost()),
            cpu_ns: cpu_ns.saturating_sub(last.cpu_ns),
            queued_ns: queued
                .zip(last.queued_ns)
                .map(|(now, then)| now.saturating_sub(then)),
        },
        // Before `MPI_Init` returns: nothing counted.
        _ => Interval {
            queued_ns: Some(0),
            ..Interval::default()
        },
    };
    s.intervals.push(interval);
}

/// Called as the call returns to the program: the next interval starts.
pub fn leave() {
    let mut s = state();
    if !s.started {
        return;
    }
    crate::clock::start();
    let queued_ns = queued_ns();
    let cpu_ns = thread_cpu_ns();
    s.last = Some(Mark {
        ticks: crate::clock::ticks(),
        cpu_ns,
        queued_ns,
    });
}

/// Called as `MPI_Init` or `MPI_Init_thread` returns: intervals count from here.
pub fn initialized() {
    state().started = true;
    leave();
}

/// The number of MPI calls the program has made so far (the one being answered included).
pub fn calls_so_far() -> usize {
    state().intervals.len()
}

/// How the computation of an interval is measured, as the header states it.
const WALL_LESS_QUEUE: &str = "wall less run-queue wait";
const THREAD_CPU: &str = "thread CPU time";

/// Writes the times (at the program's `MPI_Finalize`, whose interval before it is the last).
pub fn write() {
    let Ok(path) = std::env::var("CONIFER_REPLAY_TIMES") else {
        return;
    };
    enter();
    let intervals = state().intervals.clone();
    let ns_per_tick = crate::clock::ns_per_tick();
    let queue_known = intervals.iter().all(|i| i.queued_ns.is_some()) && queued_ns().is_some();
    let clock = if queue_known {
        WALL_LESS_QUEUE
    } else {
        THREAD_CPU
    };
    let mut body = Vec::with_capacity(intervals.len() * 24);
    let (mut total, mut wall_total, mut cpu_total) = (0u64, 0u64, 0u64);
    for i in &intervals {
        let wall = (i.ticks as f64 * ns_per_tick).round() as u64;
        let computation = if queue_known {
            wall.saturating_sub(i.queued_ns.unwrap_or(0))
                .max(i.cpu_ns.min(wall))
        } else {
            i.cpu_ns
        };
        total += computation;
        wall_total += wall;
        cpu_total += i.cpu_ns;
        for v in [computation, wall, i.cpu_ns] {
            body.extend_from_slice(&v.to_le_bytes());
        }
    }
    let mut out = Vec::with_capacity(160 + body.len());
    let _ = writeln!(
        out,
        "{{\"calls\": {}, \"clock\": \"{clock}\", \"fields\": [\"computation_ns\", \"wall_ns\", \"cpu_ns\"], \"computation_ns\": {total}, \"wall_ns\": {wall_total}, \"cpu_ns\": {cpu_total}}}",
        intervals.len()
    );
    out.extend_from_slice(&body);
    if let Err(e) = std::fs::write(&path, out) {
        say!("replay: cannot write {path}: {e}");
    }
}
