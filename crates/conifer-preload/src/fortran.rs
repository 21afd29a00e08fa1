//! Lazily resolved entry points of the MPI library's own Fortran profiling interface.

use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The real Fortran procedure a Fortran wrapper forwards to, found on first use.
pub struct ProfilingEntry {
    candidates: [&'static str; 4],
    resolved: AtomicPtr<c_void>,
}

impl ProfilingEntry {
    /// An entry to be looked up under the given NUL-terminated names, first found wins
    /// (`pmpi_send_`, `pmpi_send__`, `pmpi_send`, `PMPI_SEND`).
    pub const fn new(candidates: [&'static str; 4]) -> ProfilingEntry {
        ProfilingEntry {
            candidates,
            resolved: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The procedure's address. The MPI Fortran library is loaded whenever a Fortran program
    /// calls MPI, so a failed look-up means a broken installation: say so and stop.
    pub fn get(&self) -> *mut c_void {
        let cached = self.resolved.load(Ordering::Acquire);
        if !cached.is_null() {
            return cached;
        }
        for name in self.candidates {
            // SAFETY: `name` is a NUL-terminated literal produced by the generator.
            let found = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) };
            if !found.is_null() {
                self.resolved.store(found, Ordering::Release);
                return found;
            }
        }
        let name = self.candidates[0].trim_end_matches('\0');
        say!(
            "the MPI Fortran library does not define {name}; reinstall MPI or run without conifer"
        );
        std::process::abort()
    }
}

/// The addresses Fortran programs pass for `MPI_IN_PLACE` and `MPI_BOTTOM`: variables of
/// the MPI's Fortran support, found once. Open MPI exports them as `mpi_fortran_in_place_` and
/// `mpi_fortran_bottom_`; MPICH's mpif.h puts them in common block `MPIPRIV1`
/// (`MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE`, default INTEGERs).
struct FortranSentinels {
    in_place: usize,
    bottom: usize,
    /// MPICH's `mpi_f08` `MPI_IN_PLACE` and `MPI_BOTTOM` (0 elsewhere: Open MPI's F08 module
    /// passes the `mpif.h` ones).
    f08_in_place: usize,
    f08_bottom: usize,
    /// The `mpi_f08` `MPI_STATUS_IGNORE` and `MPI_STATUSES_IGNORE`, where the C binding
    /// declares them (`MPI_F08_STATUS_IGNORE`: MPICH).
    f08_status_ignore: usize,
    f08_statuses_ignore: usize,
}

fn symbol(name: &std::ffi::CStr) -> usize {
    // SAFETY: dlsym with a NUL-terminated name.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
}

/// The address a C pointer variable named `name` holds (0 when there is no such variable).
fn pointer_variable(name: &std::ffi::CStr) -> usize {
    match symbol(name) {
        0 => 0,
        // SAFETY: the symbol is a pointer variable of the MPI library.
        variable => unsafe { *(variable as *const usize) },
    }
}

fn sentinels() -> FortranSentinels {
    let (mut in_place, mut bottom) = (
        symbol(c"mpi_fortran_in_place_"),
        symbol(c"mpi_fortran_bottom_"),
    );
    if in_place == 0 {
        let block = symbol(c"mpipriv1_");
        if block != 0 {
            in_place = block + std::mem::size_of::<FortranInt>();
            bottom = block;
        }
    }
    FortranSentinels {
        in_place,
        bottom,
        f08_in_place: symbol(c"MPIR_F08_MPI_IN_PLACE"),
        f08_bottom: symbol(c"MPIR_F08_MPI_BOTTOM"),
        f08_status_ignore: pointer_variable(c"MPI_F08_STATUS_IGNORE"),
        f08_statuses_ignore: pointer_variable(c"MPI_F08_STATUSES_IGNORE"),
    }
}

/// Whether `address` is the `mpi_f08` `MPI_STATUS_IGNORE` (`array`: `MPI_STATUSES_IGNORE`).
pub fn is_f08_status_ignore(address: usize, array: bool) -> bool {
    let s = SENTINELS.get_or_init(sentinels);
    let ignore = if array {
        s.f08_statuses_ignore
    } else {
        s.f08_status_ignore
    };
    address != 0 && address == ignore
}

static SENTINELS: std::sync::OnceLock<FortranSentinels> = std::sync::OnceLock::new();

/// A Fortran buffer argument as the C binding would see it: the Fortran `MPI_IN_PLACE` and
/// `MPI_BOTTOM` become the C ones, any other address stays.
pub fn c_buffer(ptr: *mut c_void) -> *const c_void {
    let s = SENTINELS.get_or_init(sentinels);
    let address = ptr as usize;
    // SAFETY: constants from mpi.h.
    unsafe {
        if address != 0 && (address == s.in_place || address == s.f08_in_place) {
            crate::mpi::conifer_in_place()
        } else if address != 0 && (address == s.bottom || address == s.f08_bottom) {
            crate::mpi::conifer_bottom()
        } else {
            ptr
        }
    }
}

/// A Fortran default `INTEGER` (`MPI_Fint`: four bytes in both MPIs with gfortran).
pub type FortranInt = std::ffi::c_int;

/// Fortran `INTEGER` handles, seen by the recorder through the MPI's own f2c conversions so a
/// Fortran call is recorded exactly as the equivalent C call.
pub mod handles;

/// Writes `value` to a Fortran procedure's `ierror` (an absent optional one is a null
/// pointer).
///
/// # Safety
/// `ierror` is null or points to a writable Fortran `INTEGER`.
pub unsafe fn set_ierror(ierror: *mut c_void, value: std::ffi::c_int) {
    if !ierror.is_null() {
        *(ierror as *mut std::ffi::c_int) = value;
    }
}
