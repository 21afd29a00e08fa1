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

/// Per exported wrapper symbol: where, relative to its [`marker`], the program's stack
/// pointer at the call and the call's return address are.
pub struct Anchor {
    /// Distance from the marker to the program's stack pointer.
    caller_sp: AtomicIsize,
    /// Distance from the marker to the stack slot holding the return address into the
    /// program (with `--callsites`).
    return_slot: AtomicIsize,
}

impl Anchor {
    /// An anchor not measured yet.
    pub const fn new() -> Anchor {
        Anchor {
            caller_sp: AtomicIsize::new(UNKNOWN),
            return_slot: AtomicIsize::new(UNKNOWN),
        }
    }

    /// The distance `field` holds, measuring both distances by unwinding the first time.
    #[inline(always)]
    fn distance(&self, field: &AtomicIsize, marker: usize) -> Option<usize> {
        let mut distance = field.load(Ordering::Relaxed);
        if distance == UNKNOWN {
            self.measure(marker);
            distance = field.load(Ordering::Relaxed);
        }
        (distance != FAILED).then_some(distance as usize)
    }

    #[cold]
    fn measure(&self, marker: usize) {
        let distance = |at: Option<usize>| at.map_or(FAILED, |a| a.wrapping_sub(marker) as isize);
        let frame = caller_frame();
        self.caller_sp
            .store(distance(frame.map(|f| f.sp)), Ordering::Relaxed);
        self.return_slot.store(
            distance(frame.and_then(|f| f.return_slot)),
            Ordering::Relaxed,
        );
    }

    /// The stack pointer the program had when it called the wrapper whose frame holds
    /// `marker`; `None` when it cannot be told.
    pub fn caller_sp(&self, marker: usize) -> Option<usize> {
        self.distance(&self.caller_sp, marker)
            .map(|d| marker.wrapping_add(d))
    }

    /// The return address of the program's call into the wrapper whose frame holds
    /// `marker`; `None` when it cannot be told.
    pub fn return_address(&self, marker: usize) -> Option<usize> {
        let slot = marker.wrapping_add(self.distance(&self.return_slot, marker)?);
        // SAFETY: the slot was found (and checked to hold the return address) in this
        // wrapper's call chain, which has the same layout on every call: it lies between
        // the marker and the program's frame, on the live stack.
        Some(unsafe { (slot as *const usize).read() })
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

/// The program's frame that called into this library, as unwinding finds it.
#[derive(Clone, Copy)]
struct CallerFrame {
    /// Its stack pointer at its call into this library.
    sp: usize,
    /// The stack slot holding the return address of that call, when found.
    return_slot: Option<usize>,
}

/// The frames walked so far: this library's load address, and the program's frame once
/// found.
struct Walk {
    ours: usize,
    found: Option<CallerFrame>,
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
    // stack pointer at its call into this library. The call pushed its return address just
    // below it (x86-64); the slot is kept only if it does hold the frame's instruction
    // pointer.
    // SAFETY: a context `_Unwind_Backtrace` handed over.
    let sp = unsafe { _Unwind_GetCFA(context) };
    let slot = sp.wrapping_sub(std::mem::size_of::<usize>());
    // SAFETY: the slot lies in the live frame of this library's outermost function.
    let return_slot = (unsafe { (slot as *const usize).read() } == ip).then_some(slot);
    walk.found = Some(CallerFrame { sp, return_slot });
    1
}

/// The nearest frame outside this library, by unwinding: slow, so done once per wrapper
/// symbol.
#[inline(never)]
fn caller_frame() -> Option<CallerFrame> {
    let mut walk = Walk {
        ours: object_of(caller_frame as fn() -> Option<CallerFrame> as usize)?,
        found: None,
    };
    // SAFETY: `step` only reads the contexts it is given and writes `walk`.
    unsafe { _Unwind_Backtrace(step, (&mut walk as *mut Walk).cast()) };
    walk.found
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
