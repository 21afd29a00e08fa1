//! The recorder's state, behind its lock: the one static every part of the recorder reaches
//! it through. Below the recording code ([`super::Call`]) and the trace tree hooks, above
//! [`super::state::State`].

use super::recorder_lock::{Locked, RecorderLock};
use super::state::State;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::LazyLock;

/// The recorder's state.
pub(super) static STATE: LazyLock<RecorderLock<State>> = LazyLock::new(|| {
    super::control::read_environment();
    RecorderLock::new(State::new())
});
/// True when MPI was initialised with `MPI_THREAD_MULTIPLE`: only then can two threads be in
/// MPI at once, so only then is the state lock released during the PMPI call.
pub(super) static MULTITHREADED: AtomicBool = AtomicBool::new(false);

/// Locks the recorder's state.
pub(super) fn lock() -> Locked<'static, State> {
    STATE.lock()
}

/// True when MPI runs with `MPI_THREAD_MULTIPLE` (several threads may be inside MPI).
pub fn multithreaded() -> bool {
    MULTITHREADED.load(Ordering::Relaxed)
}

/// Applies `f` to thread `thread`'s trace tree builder, if it has one and the recorder is free
/// (a hook may run inside an MPI call's callback, with the recorder held by its own thread).
pub fn with_tree(thread: u32, f: impl FnOnce(&mut conifer_compress::tree::TreeBuilder)) {
    if let Some(mut state) = STATE.try_lock() {
        if let Some(Some(builder)) = state.trees.get_mut(thread as usize) {
            f(builder);
        }
    }
}

/// Runs `f` on the recorder's state at a fatal moment (a signal handler, `exit`, `MPI_Abort`):
/// with the lock when it is free; without it when this very thread holds it — in a
/// single-threaded program the lock is held across the PMPI call, where a `SIGTERM` from the
/// launcher usually finds the rank, and that thread is stopped here, so nothing else touches
/// the state. With other threads in MPI it waits up to two seconds for the lock, else gives up.
///
/// # Safety
/// Only for code that ends the process afterwards: the state may be read while a wrapper of
/// this thread, interrupted, holds it.
pub unsafe fn salvage<R>(f: impl Fn(&State) -> R) -> Option<R> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        if let Some(state) = STATE.try_lock() {
            return Some(f(&state));
        }
        if crate::thread::inside_wrapper() && !MULTITHREADED.load(Ordering::Relaxed) {
            return Some(f(STATE.get_unlocked()));
        }
        if std::time::Instant::now() > deadline {
            return None;
        }
        std::thread::yield_now();
    }
}
