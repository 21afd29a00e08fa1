//! How the generated wrappers read argument values: handles as the integers the maps are
//! keyed by, integers and lengths behind pointers, return values, and the handle and status
//! kinds C and Fortran calls pass.

use crate::mpi::*;
use std::ffi::{c_int, c_void};

/// A handle (pointer in Open MPI, integer in MPICH) as the integer the maps are keyed by,
/// equal to C's `(intptr_t)handle`.
pub trait HandleBits: Copy {
    /// The handle's bits.
    fn bits(self) -> u64;
}
impl<T> HandleBits for *mut T {
    fn bits(self) -> u64 {
        self as usize as u64
    }
}
impl<T> HandleBits for *const T {
    fn bits(self) -> u64 {
        self as usize as u64
    }
}
impl HandleBits for c_int {
    fn bits(self) -> u64 {
        self as i64 as u64
    }
}

/// The bits of a handle.
pub fn bits<H: HandleBits>(handle: H) -> u64 {
    handle.bits()
}

/// Integer types MPI passes, widened for recording.
pub trait AsI64: Copy {
    /// The value as `i64`.
    fn as_i64(self) -> i64;
}
macro_rules! as_i64 {
    ($($t:ty),*) => {$(impl AsI64 for $t { fn as_i64(self) -> i64 { self as i64 } })*};
}
as_i64!(i32, u32, i64, u64, isize, usize, i16, u16);

/// A length read from an output count (`*outcount`), zero when absent or negative.
///
/// # Safety
/// `ptr` is null or points to a readable integer.
pub unsafe fn read_len<T: AsI64>(ptr: *const T) -> usize {
    if ptr.is_null() {
        0
    } else {
        (*ptr).as_i64().max(0) as usize
    }
}

/// Sum of the first `n` integers at `ptr` as a length (0 for a null pointer or `n` ≤ 0).
///
/// # Safety
/// `ptr` is null or points to at least `n` readable integers.
pub unsafe fn sum_len<T: AsI64>(ptr: *const T, n: impl AsI64) -> usize {
    let n = n.as_i64();
    if ptr.is_null() || n <= 0 {
        return 0;
    }
    (0..n as usize)
        .map(|i| (*ptr.add(i)).as_i64().max(0) as usize)
        .sum()
}

/// The integer `ptr[n - 1]` as a length (0 for a null pointer or `n` ≤ 0): the total of a
/// cumulative array such as a graph's `index`.
///
/// # Safety
/// `ptr` is null or points to at least `n` readable integers.
pub unsafe fn last_len<T: AsI64>(ptr: *const T, n: impl AsI64) -> usize {
    let n = n.as_i64();
    if ptr.is_null() || n <= 0 {
        0
    } else {
        (*ptr.add(n as usize - 1)).as_i64().max(0) as usize
    }
}

/// True when a `flag` output says the operation completed.
///
/// # Safety
/// `flag` is null or points to a readable int.
pub unsafe fn flag_set(flag: *const c_int) -> bool {
    !flag.is_null() && *flag != 0
}

/// True when a `flag` output says nothing completed (a null `flag` says nothing either way).
///
/// # Safety
/// `flag` is null or points to a readable int.
pub unsafe fn flag_clear(flag: *const c_int) -> bool {
    !flag.is_null() && *flag == 0
}

/// Values an MPI function returns, as recorded: error codes by value, anything else (times,
/// converted handles) as 0, since it is not part of what the call did.
pub trait ReturnValue {
    /// The recorded value.
    fn recorded(&self) -> i64;
}
impl ReturnValue for c_int {
    fn recorded(&self) -> i64 {
        i64::from(*self)
    }
}
impl ReturnValue for f64 {
    fn recorded(&self) -> i64 {
        0
    }
}
impl<T> ReturnValue for *mut T {
    fn recorded(&self) -> i64 {
        0
    }
}
impl ReturnValue for i64 {
    fn recorded(&self) -> i64 {
        0
    }
}
impl ReturnValue for () {
    fn recorded(&self) -> i64 {
        0
    }
}

/// A communicator handle as the application holds it (C `MPI_Comm`, or a Fortran integer).
pub trait CommHandle: HandleBits {
    /// The C communicator.
    fn comm(self) -> MPI_Comm;
}

impl CommHandle for MPI_Comm {
    fn comm(self) -> MPI_Comm {
        self
    }
}

/// A group handle of either binding, as the C group.
pub trait GroupHandle: HandleBits {
    /// The C group.
    fn group(self) -> MPI_Group;
}

impl GroupHandle for MPI_Group {
    fn group(self) -> MPI_Group {
        self
    }
}

/// A window handle MPI wrote (C `MPI_Win`, or a Fortran `INTEGER`).
pub trait WindowHandle: HandleBits {
    /// The C window.
    fn window(self) -> MPI_Win;
}

impl WindowHandle for MPI_Win {
    fn window(self) -> MPI_Win {
        self
    }
}

/// Where MPI writes a status (C `MPI_Status`, or a Fortran `INTEGER` array).
pub trait StatusSlot: Sized {
    /// The status, or `None` for null and the status-ignore sentinel.
    ///
    /// # Safety
    /// `ptr` is null, a sentinel, or a status MPI filled in.
    unsafe fn read(ptr: *const Self) -> Option<MPI_Status>;
    /// True for null and the status-ignore sentinel.
    ///
    /// # Safety
    /// None: compares addresses only.
    unsafe fn is_ignore(ptr: *const Self) -> bool;
    /// True for the statuses-ignore sentinel.
    ///
    /// # Safety
    /// None: compares addresses only.
    unsafe fn is_ignore_array(ptr: *const Self) -> bool;
}

impl StatusSlot for MPI_Status {
    unsafe fn read(ptr: *const Self) -> Option<MPI_Status> {
        (!Self::is_ignore(ptr)).then(|| *ptr)
    }
    unsafe fn is_ignore(ptr: *const Self) -> bool {
        ptr.is_null() || ptr.cast() == conifer_status_ignore()
    }
    unsafe fn is_ignore_array(ptr: *const Self) -> bool {
        ptr.cast() == conifer_statuses_ignore()
    }
}

/// The `ierror` a Fortran procedure set (its last argument), as the recorded result.
///
/// # Safety
/// `ierror` is null or points to a Fortran `INTEGER` the procedure wrote.
pub unsafe fn read_ierror(ierror: *mut c_void) -> c_int {
    if ierror.is_null() {
        0
    } else {
        *(ierror as *const c_int)
    }
}
