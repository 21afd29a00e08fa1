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
pub mod handles {
    use super::FortranInt;
    use crate::mpi::*;
    use crate::record::{CommHandle, GroupHandle, HandleBits, StatusSlot, WindowHandle};

    macro_rules! fortran_handle {
        ($(#[$doc:meta] $name:ident => $f2c:ident),* $(,)?) => {$(
            #[$doc]
            #[repr(transparent)]
            #[derive(Clone, Copy)]
            pub struct $name(pub FortranInt);

            impl HandleBits for $name {
                fn bits(self) -> u64 {
                    // SAFETY: f2c accepts any Fortran handle value.
                    unsafe { $f2c(self.0) }.bits()
                }
            }
        )*};
    }

    fortran_handle! {
        /// A Fortran communicator.
        FComm => conifer_f2c_comm,
        /// A Fortran datatype.
        FDatatype => conifer_f2c_type,
        /// A Fortran reduction operation.
        FOp => conifer_f2c_op,
        /// A Fortran group.
        FGroup => conifer_f2c_group,
        /// A Fortran info object.
        FInfo => conifer_f2c_info,
        /// A Fortran error handler.
        FErrhandler => conifer_f2c_errhandler,
        /// A Fortran window.
        FWin => conifer_f2c_win,
        /// A Fortran file.
        FFile => conifer_f2c_file,
        /// A Fortran matched-probe message.
        FMessage => conifer_f2c_message,
    }

    /// A Fortran request: as the MPI converts it, or (in a sliced run) the C fake request a
    /// Fortran fake stands for ([`crate::slice::fortran`]).
    #[repr(transparent)]
    #[derive(Clone, Copy)]
    pub struct FRequest(pub FortranInt);

    impl HandleBits for FRequest {
        fn bits(self) -> u64 {
            crate::slice::fortran::request_bits(self.0).bits()
        }
    }

    impl CommHandle for FComm {
        fn comm(self) -> MPI_Comm {
            // SAFETY: as above.
            unsafe { conifer_f2c_comm(self.0) }
        }
    }

    impl WindowHandle for FWin {
        fn window(self) -> MPI_Win {
            // SAFETY: as above.
            unsafe { conifer_f2c_win(self.0) }
        }
    }

    impl GroupHandle for FGroup {
        fn group(self) -> MPI_Group {
            // SAFETY: as above.
            unsafe { conifer_f2c_group(self.0) }
        }
    }

    /// A Fortran status: `MPI_STATUS_SIZE` integers, the size of a C status.
    #[repr(transparent)]
    pub struct FStatus(pub [u8; std::mem::size_of::<MPI_Status>()]);

    impl StatusSlot for FStatus {
        unsafe fn read(ptr: *const Self) -> Option<MPI_Status> {
            if ptr.is_null()
                || ptr.cast::<FortranInt>() == MPI_F_STATUS_IGNORE.cast_const()
                || super::is_f08_status_ignore(ptr as usize, false)
            {
                return None;
            }
            let mut status: MPI_Status = std::mem::zeroed();
            (PMPI_Status_f2c(ptr.cast(), &mut status) == 0).then_some(status)
        }
        unsafe fn is_ignore_array(ptr: *const Self) -> bool {
            ptr.cast::<FortranInt>() == MPI_F_STATUSES_IGNORE.cast_const()
                || super::is_f08_status_ignore(ptr as usize, true)
        }
    }
}
