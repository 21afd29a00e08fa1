//! The per-thread state every wrapper touches: a nesting depth, so that only the outermost MPI
//! call of a thread is recorded (MPICH's Fortran library calls the C `MPI_*` functions; MPI
//! libraries may call their own public functions), the [`CallGuard`] a wrapper holds, and the
//! buffers of the call a thread records. Below the recorder, heap tracking and slicing, which
//! all read it; it names only the clock and [`crate::stack`].

use std::cell::{Cell, UnsafeCell};

/// The reusable buffers of the call a thread is recording (only its outermost wrapper
/// records, so one call at a time uses them).
pub struct CallBuffers {
    /// The call's signature.
    pub sig: Vec<u8>,
    /// In-out handles saved before the PMPI call.
    pub saved: Vec<u64>,
}

/// What the runtime keeps per thread, in one thread-local so a call looks it up once.
pub struct ThreadState {
    /// Symbolic thread id, in order of each thread's first recorded call (`u32::MAX`: none yet).
    pub ordinal: Cell<u32>,
    /// Reusable buffers of the call being recorded.
    pub buffers: UnsafeCell<CallBuffers>,
    /// The top of this thread's stack (`usize::MAX`: not looked up yet, 0: unknown).
    stack_top: Cell<usize>,
    /// Real tick the call being recorded entered its wrapper.
    pub entered: Cell<u64>,
    /// Real tick the PMPI call of this thread's last recorded call ended.
    pub pmpi_end: Cell<u64>,
    /// Real tick the wrapper of this thread's last recorded call returned to the program
    /// (0 once the next call has hidden the recorder's time between the two).
    pub exited: Cell<u64>,
    /// True from a recorded call's end until its wrapper returns (and stamps `exited`).
    awaiting_exit: Cell<bool>,
}

impl ThreadState {
    /// Notes that a recorded call's PMPI call ended at real tick `end`: its wrapper's
    /// return will be stamped, so the next call hides the recorder's time in between.
    #[inline(always)]
    pub fn ended(&self, end: u64) {
        self.pmpi_end.set(end);
        self.awaiting_exit.set(true);
    }

    /// The top (highest address, exclusive) of this thread's stack; 0 when unknown.
    pub fn stack_top(&self) -> usize {
        if self.stack_top.get() == usize::MAX {
            self.stack_top.set(crate::stack::thread_stack_top());
        }
        self.stack_top.get()
    }
}

thread_local! {
    static THREAD: ThreadState = const {
        ThreadState {
            ordinal: Cell::new(u32::MAX),
            buffers: UnsafeCell::new(CallBuffers {
                sig: Vec::new(),
                saved: Vec::new(),
            }),
            stack_top: Cell::new(usize::MAX),
            entered: Cell::new(0),
            pmpi_end: Cell::new(0),
            exited: Cell::new(0),
            awaiting_exit: Cell::new(false),
        }
    };
    /// How many MPI wrappers this thread is inside, plus [`SKIP_BIT`]. Kept apart from
    /// [`ThreadState`]: a type without a destructor needs no registration on first use, so
    /// the allocator hooks may read it (registering a thread-local destructor allocates).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// In `DEPTH`: the program asked that its next MPI call be skipped (sliced programs, see
/// [`crate::slice`]); sharing the depth's thread-local keeps the check free for the others.
const SKIP_BIT: u32 = 1 << 31;

/// The thread's next wrapped MPI call is to be skipped if it can be.
pub fn skip_next_call() {
    DEPTH.with(|d| d.set(d.get() | SKIP_BIT));
}

/// Held by a wrapper for the duration of one MPI call.
pub struct CallGuard {
    /// Real tick the wrapper was entered (the recorder's work starts here).
    pub entered: u64,
    outermost: bool,
    /// The program asked to skip this call ([`crate::slice`]).
    skip: bool,
    thread: *const ThreadState,
    /// A [`crate::stack::marker`] in the wrapper's frame.
    marker: usize,
}

impl CallGuard {
    /// Enters an MPI call; the wrapper records it if it is the thread's outermost one.
    #[inline(always)]
    pub fn enter() -> CallGuard {
        let entered = crate::clock::ticks();
        let thread = THREAD.with(|t| t as *const ThreadState);
        let (outermost, skip) = DEPTH.with(|d| {
            let raw = d.get();
            let depth = raw & !SKIP_BIT;
            d.set(depth + 1);
            (depth == 0, raw & SKIP_BIT != 0)
        });
        CallGuard {
            entered,
            outermost,
            skip,
            thread,
            marker: crate::stack::marker(),
        }
    }

    /// The stack pointer the program had when it called the wrapper, given the wrapper
    /// symbol's anchor; `None` when it cannot be told.
    #[inline(always)]
    pub fn caller_sp(&self, anchor: &crate::stack::Anchor) -> Option<usize> {
        anchor.caller_sp(self.marker)
    }

    /// The return address of the program's call into the wrapper, given the wrapper
    /// symbol's anchor; `None` when it cannot be told.
    #[inline(always)]
    pub fn return_address(&self, anchor: &crate::stack::Anchor) -> Option<usize> {
        anchor.return_address(self.marker)
    }

    /// This thread's runtime state.
    #[inline(always)]
    pub fn thread(&self) -> &ThreadState {
        // SAFETY: as in `enter`.
        unsafe { &*self.thread }
    }

    /// True when the program asked that this call be skipped (it consumed the request).
    #[inline(always)]
    pub fn skip(&self) -> bool {
        self.skip
    }

    /// True when no other wrapper of this thread is active: the call came from the application.
    #[inline(always)]
    pub fn is_outermost(&self) -> bool {
        self.outermost
    }
}

impl Drop for CallGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.outermost {
            let thread = self.thread();
            if thread.awaiting_exit.get() {
                thread.awaiting_exit.set(false);
                thread.exited.set(crate::clock::ticks());
            }
        }
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// This thread's symbolic id, once it has made a recorded call.
pub fn ordinal() -> Option<u32> {
    THREAD
        .try_with(|t| t.ordinal.get())
        .ok()
        .filter(|&o| o != u32::MAX)
}

/// True while this thread is inside an MPI wrapper.
pub fn inside_wrapper() -> bool {
    DEPTH.with(|d| d.get() & !SKIP_BIT > 0)
}
