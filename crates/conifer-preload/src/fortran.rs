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
        eprintln!("conifer: the MPI Fortran library does not define {name}; reinstall MPI or run without conifer");
        std::process::abort()
    }
}
