//! The received byte count of a status, as `MPI_Get_count(status, MPI_BYTE)` gives it, read
//! from the status's own fields. `PMPI_Get_count` validates its arguments on every call (49
//! instructions a status on MPICH, a tenth of a traced `MPI_Isend`'s own cost); the fields
//! give the same number for a handful. The field reading is trusted only after it agreed with
//! `PMPI_Get_count` on the process's first [`CHECKED`] statuses; one disagreement, or a count
//! outside what `MPI_Get_count` returns as a plain number, sends every later status to
//! `PMPI_Get_count`, so the recorded value never depends on the reading.

use crate::mpi::*;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Statuses compared with `PMPI_Get_count` before the field reading is trusted.
pub const CHECKED: u32 = 64;

/// Statuses compared so far (saturates at [`CHECKED`]).
static COMPARED: AtomicU32 = AtomicU32::new(0);
/// Set for good when the field reading and `PMPI_Get_count` ever differ.
static DISAGREED: AtomicBool = AtomicBool::new(false);

/// `MPI_Get_count(status, MPI_BYTE)`, or -1 when that call fails.
///
/// # Safety
/// `status` is a status MPI filled in.
pub unsafe fn received_bytes(status: &MPI_Status) -> i64 {
    let read = conifer_status_bytes(status);
    let plain = (0..=i64::from(c_int::MAX)).contains(&read);
    if plain && !DISAGREED.load(Ordering::Relaxed) && COMPARED.load(Ordering::Relaxed) >= CHECKED {
        return read;
    }
    let asked = get_count(status);
    if plain && !DISAGREED.load(Ordering::Relaxed) {
        if asked == read {
            let _ = COMPARED.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < CHECKED).then_some(n + 1)
            });
        } else {
            DISAGREED.store(true, Ordering::Relaxed);
        }
    }
    asked
}

/// `PMPI_Get_count(status, MPI_BYTE)`, or -1 when it fails.
unsafe fn get_count(status: &MPI_Status) -> i64 {
    let mut count: c_int = 0;
    if PMPI_Get_count(status, conifer_type_byte(), &mut count) == 0 {
        count.into()
    } else {
        -1
    }
}
