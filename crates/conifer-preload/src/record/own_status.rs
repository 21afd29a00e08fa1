//! Statuses the recorder asks MPI for when the program passed `MPI_STATUS_IGNORE` or
//! `MPI_STATUSES_IGNORE` but only a status tells which message matched: receives and probes
//! posted with `MPI_ANY_SOURCE` or `MPI_ANY_TAG`, and the calls completing such a receive
//! request. MPI writes the status into the recorder's own room, the
//! record keeps its source, tag and size, and the program's ignore sentinel is passed on
//! nowhere and written nowhere: it sees exactly what it asked for.

use super::arguments::{HandleBits, StatusSlot};
use super::wildcards::wildcard_requests_live;
use super::Call;
use crate::mpi::*;
use std::ffi::c_int;

/// True when a receive from `source` with `tag` matches by wildcard.
pub fn is_wildcard(source: c_int, tag: c_int) -> bool {
    // SAFETY: the shim returns constants.
    unsafe { source == conifer_any_source() || tag == conifer_any_tag() }
}

impl Call<'_> {
    /// True when one of the `len` requests at `ptr` is a live receive posted with a wildcard:
    /// a completion call then records the statuses the program ignores (only then, so the
    /// completions of sends and of receives from known peers record nothing more).
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable request handles.
    pub unsafe fn completes_wildcard<H: HandleBits>(&mut self, ptr: *const H, len: c_int) -> bool {
        if ptr.is_null() || !wildcard_requests_live() {
            return false;
        }
        let requests = &self.st().requests;
        (0..len.max(0) as usize).any(|i| {
            requests
                .lookup((*ptr.add(i)).bits())
                .is_some_and(|live| live.wildcard)
        })
    }
}

/// The recorder's room for statuses the program ignores, on the wrapper's stack.
pub struct OwnStatuses {
    one: MPI_Status,
    many: Vec<MPI_Status>,
}

impl Default for OwnStatuses {
    fn default() -> Self {
        OwnStatuses {
            // SAFETY: MPI_Status is plain integers.
            one: unsafe { std::mem::zeroed() },
            many: Vec::new(),
        }
    }
}

impl OwnStatuses {
    /// The status pointer to pass to MPI: the program's, or the recorder's room when the
    /// program passed the ignore sentinel (or null) and `wanted`.
    ///
    /// # Safety
    /// `program` is what the program passed as a status.
    pub unsafe fn one(&mut self, program: *mut MPI_Status, wanted: bool) -> *mut MPI_Status {
        if wanted && MPI_Status::is_ignore(program) {
            &mut self.one
        } else {
            program
        }
    }

    /// The status array to pass to MPI for `len` requests: the program's, or the recorder's
    /// room when the program passed `MPI_STATUSES_IGNORE` and `wanted`.
    ///
    /// # Safety
    /// `program` is what the program passed as an array of statuses.
    pub unsafe fn many(
        &mut self,
        program: *mut MPI_Status,
        len: c_int,
        wanted: bool,
    ) -> *mut MPI_Status {
        if wanted && len > 0 && MPI_Status::is_ignore_array(program) {
            // SAFETY: as above.
            self.many.resize(len as usize, std::mem::zeroed());
            self.many.as_mut_ptr()
        } else {
            program
        }
    }
}
