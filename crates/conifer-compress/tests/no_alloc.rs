//! Pushing repetitive input does not allocate once the grammar has reached
//! its steady state: nodes, rules and index slots are recycled.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use conifer_compress::Grammar;

struct Counting;

thread_local! {
    // Per thread: the test harness's own threads allocate whenever they like.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    ALLOCATIONS.with(|a| a.set(a.get() + 1));
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `iterations` more runs of `body` after a warm-up.
fn allocations_in_steady_state(body: &[u32], iterations: usize) -> usize {
    let mut grammar = Grammar::new();
    for _ in 0..100 {
        body.iter().for_each(|&t| grammar.push(t));
    }
    let before = allocations();
    for _ in 0..iterations {
        body.iter().for_each(|&t| grammar.push(t));
    }
    allocations() - before
}

#[test]
fn repetitive_input_does_not_allocate() {
    // A plain loop, and a nested loop whose iterations alternate.
    assert_eq!(allocations_in_steady_state(&[1, 2, 3, 4, 5], 100_000), 0);
    let alternating = [[0, 1, 2, 1, 2, 3].as_slice(), &[0, 1, 2, 1, 2, 4]].concat();
    assert_eq!(allocations_in_steady_state(&alternating, 100_000), 0);
}
