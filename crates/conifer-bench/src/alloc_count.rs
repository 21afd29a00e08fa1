//! A counting global allocator: per thread, the bytes live (allocated on it minus freed on
//! it) and their high-water mark since the last [`reset_peak`]. The scale suite reads it around
//! each pairwise merge, which runs on one thread, to get that merger's peak memory.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting.
pub struct Counting;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn add(delta: i64) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counters only read
// the layouts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as i64);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as i64));
        System.dealloc(ptr, layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as i64);
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as i64 - layout.size() as i64);
        System.realloc(ptr, layout, new_size)
    }
}

/// Bytes live on this thread.
pub fn live() -> i64 {
    LIVE.with(Cell::get)
}

/// Starts a new high-water mark at the bytes live now.
pub fn reset_peak() {
    let now = live();
    PEAK.with(|p| p.set(now));
}

/// The high-water mark since [`reset_peak`].
pub fn peak() -> i64 {
    PEAK.with(Cell::get)
}
