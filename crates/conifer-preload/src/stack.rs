//! Stack buffers: an address on the calling thread's stack is recorded as its offset from the
//! stack pointer the program had when it made the MPI call, so a variable of the calling
//! routine gets the same value however deep the routine was called and whatever the
//! routines above it keep on the stack (flang puts automatic arrays there, gfortran on the
//! heap: the same program must record the same buffers either way).
//!
//! Every wrapper notes a *marker*, an address in its own stack frame; the distance from the
//! marker to the program's stack pointer is set by the layout of the wrapper's frame, so it
//! is the same on every call of one exported symbol. Each symbol keeps that distance in an
//! [`Anchor`], measured on the symbol's first recorded call by unwinding to the first frame
//! outside this library.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicIsize, Ordering};

/// An address in the calling function's stack frame, at the same place on every call.
#[inline(always)]
pub fn marker() -> usize {
    let probe = 0u8;
    std::hint::black_box(&probe) as *const u8 as usize
}

/// Not measured yet.
const UNKNOWN: isize = isize::MIN;
/// The measurement failed (no unwind information): stack buffers are named as static data.
const FAILED: isize = isize::MAX;

/// Per exported wrapper symbol: the distance from its [`marker`] to the program's stack
/// pointer at the call.
pub struct Anchor(AtomicIsize);

impl Anchor {
    /// An anchor not measured yet.
    pub const fn new() -> Anchor {
        Anchor(AtomicIsize::new(UNKNOWN))
    }

    /// The stack pointer the program had when it called the wrapper whose frame holds
    /// `marker`; `None` when it cannot be told.
    pub fn caller_sp(&self, marker: usize) -> Option<usize> {
        let mut distance = self.0.load(Ordering::Relaxed);
        if distance == UNKNOWN {
            distance = caller_sp_unwound().map_or(FAILED, |sp| sp.wrapping_sub(marker) as isize);
            self.0.store(distance, Ordering::Relaxed);
        }
        (distance != FAILED).then(|| marker.wrapping_add(distance as usize))
    }
}

type Trace = extern "C" fn(context: *mut c_void, walk: *mut c_void) -> c_int;

extern "C" {
    fn _Unwind_Backtrace(trace: Trace, walk: *mut c_void) -> c_int;
    fn _Unwind_GetIP(context: *mut c_void) -> usize;
    fn _Unwind_GetCFA(context: *mut c_void) -> usize;
}

/// The load address of the object (executable or shared library) holding `address`.
fn object_of(address: usize) -> Option<usize> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads its argument and fills `info`.
    let found = unsafe { libc::dladdr(address as *const c_void, &mut info) } != 0;
    (found && !info.dli_fbase.is_null()).then_some(info.dli_fbase as usize)
}

/// The frames walked so far: this library's load address, and the stack pointer of the
/// first frame outside it at its call into this library, once found.
struct Walk {
    ours: usize,
    caller_sp: Option<usize>,
}

extern "C" fn step(context: *mut c_void, walk: *mut c_void) -> c_int {
    // SAFETY: `walk` is the `Walk` passed to `_Unwind_Backtrace`, `context` its frame.
    let (walk, ip) = unsafe { (&mut *walk.cast::<Walk>(), _Unwind_GetIP(context)) };
    if ip == 0 {
        return 1;
    }
    if object_of(ip) == Some(walk.ours) {
        return 0;
    }
    // The frame's instruction pointer is in the program; the context's CFA is the frame's
    // stack pointer at its call into this library.
    // SAFETY: a context `_Unwind_Backtrace` handed over.
    walk.caller_sp = Some(unsafe { _Unwind_GetCFA(context) });
    1
}

/// The stack pointer of the nearest frame outside this library, by unwinding: slow, so used
/// once per wrapper symbol.
#[inline(never)]
fn caller_sp_unwound() -> Option<usize> {
    let mut walk = Walk {
        ours: object_of(caller_sp_unwound as fn() -> Option<usize> as usize)?,
        caller_sp: None,
    };
    // SAFETY: `step` only reads the contexts it is given and writes `walk`.
    unsafe { _Unwind_Backtrace(step, (&mut walk as *mut Walk).cast()) };
    walk.caller_sp
}

/// The top (highest address, exclusive) of the calling thread's stack, or 0 when unknown.
pub fn thread_stack_top() -> usize {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: pthread_getattr_np initialises `attr` when it succeeds; it is destroyed after.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return 0;
        }
        let (mut low, mut size) = (std::ptr::null_mut(), 0);
        let ok = libc::pthread_attr_getstack(attr.as_ptr(), &mut low, &mut size) == 0;
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        if ok {
            low as usize + size
        } else {
            0
        }
    }
}
