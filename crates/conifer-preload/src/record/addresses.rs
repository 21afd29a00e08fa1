//! Address outputs (`MPI_Get_address`, `MPI_Address`): recorded as the buffer they point into
//! (segment and offset), not as the raw address, which differs from rank to rank and from run
//! to run and so would give every rank its own signatures.

use super::{AsI64, Call};
use std::ffi::c_void;

impl Call<'_> {
    /// An address output, recorded as a buffer argument pointing there would be.
    ///
    /// # Safety
    /// `ptr` is null or points to a readable `MPI_Aint`.
    pub unsafe fn address_out<T: AsI64>(&mut self, ptr: *const T) {
        if ptr.is_null() || Self::is_sentinel(ptr.cast()) {
            return self.ignored();
        }
        self.buffer((*ptr).as_i64() as usize as *const c_void);
    }
}
