//! Fortran `INTEGER` handles, seen by the recorder through the MPI's own f2c conversions so a
//! Fortran call is recorded exactly as the equivalent C call.

use super::FortranInt;
use crate::mpi::*;
use crate::record::{CommHandle, GroupHandle, HandleBits, StatusSlot, WindowHandle};

macro_rules! fortran_handle {
    ($(#[$doc:meta] $name:ident => $f2c:ident),* $(,)?) => {$(
        #[$doc]
        #[repr(transparent)]
        #[derive(Clone, Copy)]
        pub struct $name(pub FortranInt);

        impl crate::msglog::ProgramValue for $name {
            fn to_bits(self) -> u64 {
                self.0 as u32 as u64
            }
            fn from_bits(bits: u64) -> Self {
                $name(bits as u32 as FortranInt)
            }
        }
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

impl crate::msglog::ProgramValue for FRequest {
    fn to_bits(self) -> u64 {
        self.0 as u32 as u64
    }
    fn from_bits(bits: u64) -> Self {
        FRequest(bits as u32 as FortranInt)
    }
}
impl crate::msglog::layout::CDatatype for FDatatype {
    fn datatype(self) -> MPI_Datatype {
        // SAFETY: f2c accepts any Fortran handle value.
        unsafe { conifer_f2c_type(self.0) }
    }
}
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
        if Self::is_ignore(ptr) {
            return None;
        }
        let mut status: MPI_Status = std::mem::zeroed();
        (PMPI_Status_f2c(ptr.cast(), &mut status) == 0).then_some(status)
    }
    unsafe fn is_ignore(ptr: *const Self) -> bool {
        ptr.is_null()
            || ptr.cast::<FortranInt>() == MPI_F_STATUS_IGNORE.cast_const()
            || super::is_f08_status_ignore(ptr as usize, false)
    }
    unsafe fn is_ignore_array(ptr: *const Self) -> bool {
        ptr.cast::<FortranInt>() == MPI_F_STATUSES_IGNORE.cast_const()
            || super::is_f08_status_ignore(ptr as usize, true)
    }
}
