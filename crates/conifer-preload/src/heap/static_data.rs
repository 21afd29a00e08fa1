//! Static data as segments: a buffer in a loaded object's writable data (`.data`, `.bss`,
//! Fortran `COMMON` blocks and `SAVE`d arrays) belongs to that object's whole writable
//! `PT_LOAD` segment, so it is recorded as (segment, offset) like a heap buffer. A program
//! that moves panels through one static work array (ScaLAPACK's testers keep the whole
//! matrix in one `MEM` array) then names one segment at many offsets, which value streams
//! compress, instead of a new one-byte segment per address.

use std::ffi::c_void;

/// What [`containing_segment`] looks for and finds.
struct Search {
    address: usize,
    found: Option<(usize, usize)>,
}

/// The (start, length) of the writable `PT_LOAD` segment of a loaded object that holds
/// `address`, if any. Walks the loader's list of objects, so call it without the heap lock
/// (the loader's lock is taken, and a thread loading an object may be allocating).
pub fn containing_segment(address: usize) -> Option<(usize, usize)> {
    let mut search = Search {
        address,
        found: None,
    };
    // SAFETY: the callback only reads the headers the loader hands it, for the duration of
    // the call, and `search` outlives the call.
    unsafe {
        libc::dl_iterate_phdr(
            Some(visit_object),
            (&mut search as *mut Search).cast::<c_void>(),
        );
    }
    search.found
}

/// `dl_iterate_phdr` callback: stops (returns 1) at the writable segment holding the address.
unsafe extern "C" fn visit_object(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> libc::c_int {
    // SAFETY: `data` is the `Search` passed by `containing_segment`; `info` and its program
    // headers are valid during the callback.
    let search = &mut *data.cast::<Search>();
    let info = &*info;
    if info.dlpi_phdr.is_null() {
        return 0;
    }
    let headers = std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum));
    for header in headers {
        if header.p_type != libc::PT_LOAD || header.p_flags & libc::PF_W == 0 {
            continue;
        }
        let start = (info.dlpi_addr as usize).wrapping_add(header.p_vaddr as usize);
        let len = header.p_memsz as usize;
        if search.address >= start && search.address - start < len {
            search.found = Some((start, len));
            return 1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    static mut WORK: [u64; 4096] = [0; 4096];

    #[test]
    fn a_static_array_is_one_segment() {
        // SAFETY: only addresses are taken.
        let (first, last) = unsafe {
            (
                std::ptr::addr_of!(WORK) as usize,
                std::ptr::addr_of!(WORK[4095]) as usize,
            )
        };
        let (start, len) = containing_segment(first).expect("static data is in a PT_LOAD");
        assert!(first >= start && last + 8 <= start + len);
        assert_eq!(containing_segment(last), Some((start, len)));
        let on_stack = 0u8;
        assert_eq!(containing_segment(&on_stack as *const u8 as usize), None);
        let on_heap = Box::new(0u64);
        assert_eq!(containing_segment(&*on_heap as *const u64 as usize), None);
    }
}
