//! The allocator of a dying process. A fatal-signal handler that writes the partial trace
//! allocates, and the signal may have interrupted the program inside `malloc` holding glibc's
//! arena lock (or the tracker's): calling into glibc again would deadlock. Once [`enter`] is
//! called, allocations come from fresh anonymous mappings with a bump pointer and frees are
//! ignored; the process exits soon after, so nothing needs returning.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static ACTIVE: AtomicBool = AtomicBool::new(false);
static NEXT: AtomicUsize = AtomicUsize::new(0);
static END: AtomicUsize = AtomicUsize::new(0);

/// Marks blocks of this arena (just before each block, followed by its size).
const MAGIC: u64 = 0xC0F1_E3E5_A1A0_C0DE;
const HEADER: usize = 16;
const CHUNK: usize = 64 << 20;

extern "C" {
    fn malloc_usable_size(ptr: *mut c_void) -> usize;
}

/// From now on, this process allocates from the emergency arena.
pub fn enter() {
    ACTIVE.store(true, Ordering::SeqCst);
}

/// True once [`enter`] was called.
#[inline(always)]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

fn align_up(v: usize, align: usize) -> usize {
    (v + align - 1) & !(align - 1)
}

/// A block of `size` bytes aligned to `align` (a power of two), or null when out of memory.
pub fn alloc(size: usize, align: usize) -> *mut c_void {
    let align = align.max(HEADER);
    loop {
        let next = NEXT.load(Ordering::Acquire);
        let start = align_up(next + HEADER, align);
        let end = start.saturating_add(size);
        if next == 0 || end > END.load(Ordering::Acquire) {
            let len = CHUNK.max(size.saturating_add(align + HEADER));
            // SAFETY: an anonymous private mapping; mmap is async-signal-safe.
            let chunk = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if chunk == libc::MAP_FAILED {
                return std::ptr::null_mut();
            }
            END.store(chunk as usize + len, Ordering::Release);
            NEXT.store(chunk as usize, Ordering::Release);
            continue;
        }
        if NEXT
            .compare_exchange(next, end, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            let block = start as *mut u64;
            // SAFETY: the header lies inside the chunk, between `next` and `start`.
            unsafe {
                block.sub(2).write(MAGIC);
                block.sub(1).write(size as u64);
            }
            return block.cast();
        }
    }
}

/// `realloc` in the arena: a new block with the old contents.
///
/// # Safety
/// `ptr` is null or a live block of this arena or of glibc.
pub unsafe fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    let new = alloc(size, HEADER);
    if ptr.is_null() || new.is_null() {
        return new;
    }
    let header = ptr.cast::<u64>();
    let old = if header.sub(2).read() == MAGIC {
        header.sub(1).read() as usize
    } else {
        malloc_usable_size(ptr)
    };
    std::ptr::copy_nonoverlapping(ptr.cast::<u8>(), new.cast::<u8>(), old.min(size));
    new
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_disjoint_and_keep_their_contents() {
        let a = alloc(10, 16).cast::<u8>();
        let b = alloc(100, 64).cast::<u8>();
        assert_eq!(b as usize % 64, 0);
        assert!(b as usize >= a as usize + 10);
        // SAFETY: both blocks are live and at least as large as what is touched.
        unsafe {
            std::ptr::write_bytes(a, 7, 10);
            let c = realloc(a.cast(), 1000).cast::<u8>();
            assert_eq!(std::slice::from_raw_parts(c, 10), &[7; 10]);
        }
        assert!(!alloc(CHUNK * 2, 16).is_null());
    }
}
