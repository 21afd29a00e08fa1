//! No data lost when a run ends early. Once MPI is initialised, each rank is ready to write
//! what it has recorded into its own partial file, `<trace>.partial/rank<R>.cfp`, on:
//! - `MPI_Abort` (from the wrapper, before the PMPI call);
//! - a fatal signal: `SIGSEGV`, `SIGBUS`, `SIGFPE`, `SIGABRT`, `SIGTERM` (how launchers stop
//!   the other ranks), `SIGINT` — the handler switches the process to the emergency allocator
//!   (see [`crate::heap::emergency`]) so it never waits on an allocator lock the interrupted
//!   code holds, arms a 10-second `alarm` against any other hang, writes the file with plain
//!   system calls, then restores the previous disposition (Open MPI's backtrace handler, or
//!   the default) and lets the signal take its course;
//! - `exit` without `MPI_Finalize` (an `atexit` handler).
//!
//! Everything the file needs from MPI (rank, size, host, library version) is gathered at
//! `MPI_Init`, so writing it calls no MPI. `conifer merge DIR` turns the files into a trace.

use crate::record;
use crate::run_info;
use conifer_format::partial::PartialRecord;
use conifer_format::Metadata;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// What a partial file needs, gathered while MPI works.
struct RunFacts {
    rank: u32,
    host: String,
    meta: Metadata,
    /// Where the partial files go.
    dir: String,
    /// Where the raw record goes (with `--raw`).
    raw_dir: String,
}

static FACTS: OnceLock<RunFacts> = OnceLock::new();
/// Set once the partial file is written or `MPI_Finalize` began: at most one file per rank.
static DONE: AtomicBool = AtomicBool::new(false);
/// The dispositions replaced by [`arm`], restored before a signal takes its course.
static PREVIOUS: OnceLock<Vec<(c_int, libc::sigaction)>> = OnceLock::new();
/// The thread that initialised MPI: in a program that is not `MPI_THREAD_MULTIPLE`, the one
/// that calls MPI and so holds the recorder while it waits inside MPI.
static MPI_THREAD: OnceLock<libc::pthread_t> = OnceLock::new();

const FATAL_SIGNALS: [(c_int, &str); 6] = [
    (libc::SIGSEGV, "SIGSEGV"),
    (libc::SIGBUS, "SIGBUS"),
    (libc::SIGFPE, "SIGFPE"),
    (libc::SIGABRT, "SIGABRT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGINT, "SIGINT"),
];

/// Gathers the run's facts and installs the signal and `exit` handlers (after `MPI_Init`).
pub fn arm() {
    // SAFETY: MPI is initialised.
    let (rank, size) = unsafe {
        let (mut rank, mut size) = (0, 0);
        crate::mpi::PMPI_Comm_rank(crate::mpi::conifer_comm_world(), &mut rank);
        crate::mpi::PMPI_Comm_size(crate::mpi::conifer_comm_world(), &mut size);
        (rank, size)
    };
    let path = run_info::output_path(size);
    let facts = RunFacts {
        rank: rank as u32,
        // SAFETY: MPI is initialised.
        host: unsafe { run_info::host_name() },
        meta: unsafe { run_info::metadata(size as u32, true) },
        dir: format!("{path}.partial"),
        raw_dir: format!("{path}.raw"),
    };
    if FACTS.set(facts).is_err() {
        return; // armed already (MPI_Init_thread after MPI_Init cannot happen, but be safe)
    }
    let mut previous = Vec::new();
    for (signal, _) in FATAL_SIGNALS {
        // SAFETY: installing a handler with a zeroed, then filled, sigaction.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fatal_signal as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, &action, &mut old) == 0 {
                previous.push((signal, old));
            }
        }
    }
    let _ = PREVIOUS.set(previous);
    // SAFETY: pthread_self has no preconditions.
    let _ = MPI_THREAD.set(unsafe { libc::pthread_self() });
    // SAFETY: registering a plain extern "C" function.
    unsafe { libc::atexit(on_exit) };
}

/// `MPI_Finalize` began: the full trace will be written, no partial file.
pub fn disarm() {
    DONE.store(true, Ordering::SeqCst);
}

/// Writes this rank's partial file, once, saying why the run ended (`reason`).
pub fn write(reason: &str) {
    if DONE.swap(true, Ordering::SeqCst) {
        return;
    }
    let Some(facts) = FACTS.get() else { return };
    record::stop();
    // SAFETY: the process ends after this (signal, abort or exit).
    let salvaged = unsafe {
        record::salvage(|state| {
            let raw = record::write_raw_of(state, &facts.raw_dir, facts.rank as c_int);
            let offsets = crate::clock_sync::offsets();
            (record::record_of(state, offsets), state.calls.clone(), raw)
        })
    };
    let (record, counts, note) = match salvaged {
        Some((record, counts, Ok(()))) => (record, counts, String::new()),
        Some((record, counts, Err(why))) => (record, counts, format!(" ({why})")),
        None => (
            Default::default(),
            Vec::new(),
            " (the recorder was busy in another thread: calls not saved)".to_string(),
        ),
    };
    let counts = run_info::sparse_counts(&counts);
    let mut merged = conifer_write::merge::of_rank(facts.rank, record, counts, facts.host.clone());
    run_info::set_cores(&mut merged);
    let part = PartialRecord {
        meta: facts.meta.clone(),
        catalog: run_info::catalog(&merged),
        record: merged,
        reason: reason.to_string(),
    };
    let file = format!("{}/rank{}.cfp", facts.dir, facts.rank);
    // Written aside and renamed: a rank killed while writing leaves no half file behind.
    let unfinished = format!("{file}.part");
    let message = match std::fs::create_dir_all(&facts.dir)
        .and_then(|()| std::fs::write(&unfinished, part.to_bytes()))
        .and_then(|()| std::fs::rename(&unfinished, &file))
    {
        Ok(()) => format!(
            "conifer: rank {} stopped by {reason}; partial trace written to {file}{note} \
             (combine the ranks' files with: conifer merge {} -o TRACE.cft)\n",
            facts.rank, facts.dir
        ),
        Err(e) => format!(
            "conifer: rank {} stopped by {reason}; cannot write {file}: {e}\n",
            facts.rank
        ),
    };
    // SAFETY: write(2) of a live buffer; async-signal-safe, unlike the locked stderr.
    unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
}

extern "C" fn on_fatal_signal(signal: c_int, info: *mut libc::siginfo_t, _context: *mut c_void) {
    // A signal sent to the process may land on one of MPI's helper threads while the MPI
    // thread waits inside MPI holding the recorder; handing it to the MPI thread lets that
    // thread write the file from a state nothing is changing.
    let fault = matches!(signal, libc::SIGSEGV | libc::SIGBUS | libc::SIGFPE);
    if let Some(&mpi_thread) = MPI_THREAD.get() {
        // SAFETY: pthread_self, pthread_equal and pthread_kill are async-signal-safe.
        unsafe {
            if !fault
                && !record::multithreaded()
                && libc::pthread_equal(libc::pthread_self(), mpi_thread) == 0
                && libc::pthread_kill(mpi_thread, signal) == 0
            {
                return;
            }
        }
    }
    crate::heap::emergency::enter();
    // SAFETY: alarm and sigaction are async-signal-safe; `info` is the kernel's.
    unsafe {
        libc::alarm(10);
        let name = FATAL_SIGNALS
            .iter()
            .find(|(s, _)| *s == signal)
            .map_or("a fatal signal", |(_, n)| n);
        write(name);
        if let Some((_, old)) = PREVIOUS
            .get()
            .and_then(|p| p.iter().find(|(s, _)| *s == signal))
        {
            libc::sigaction(signal, old, std::ptr::null_mut());
        }
        // A fault re-executes the faulting instruction on return and meets the restored
        // disposition; a signal that was sent must be sent again.
        let sent = info.is_null() || (*info).si_code <= 0;
        if sent || !fault {
            libc::raise(signal);
        }
    }
}

extern "C" fn on_exit() {
    write("exit without MPI_Finalize");
}
