//! Structure-tree hooks, called by programs built with `conifer cc|cxx|fc` (see
//! `conifer-static/src/instrument.rs`): where the running thread is in the program's
//! structure tree.
//!
//! Every hook gets a vertex id local to the function that calls it. Calls whose callee's tree
//! was spliced into the caller's push a base (`conifer_call_enter(p)`: new base = base + p),
//! so the global id of local id `i` is `base + i`; the entry function's base is 1 (the root
//! is 0). A base of [`UNKNOWN`] (pushed around indirect calls) makes every id under it
//! unknown. The state is per thread, in fixed-size cells: no locks, no allocation. Loop
//! iterations, arms and recursion also feed the thread's trace tree (see
//! [`super::trees`]).

use super::trees;
use std::cell::Cell;

/// An id the tree does not know.
pub const UNKNOWN: u32 = u32::MAX;

/// Deepest call nesting tracked exactly; deeper frames only count.
const MAX_DEPTH: usize = 256;

struct State {
    /// Base of each pushed frame.
    bases: [Cell<u32>; MAX_DEPTH],
    /// For frames pushed by a recursive function's entry: that pseudo-loop's global id.
    recursion: [Cell<u32>; MAX_DEPTH],
    /// Frames pushed (may exceed `MAX_DEPTH`).
    depth: Cell<usize>,
    /// Global id of the vertex last entered.
    vertex: Cell<u32>,
    /// Global id of the MPI call site announced and not yet taken.
    site: Cell<u32>,
    /// Hook calls seen.
    events: Cell<u64>,
    /// Activations and exits not yet applied to the thread's trace tree.
    tree_events: trees::Events,
}

thread_local! {
    static STATE: State = const {
        State {
            bases: [const { Cell::new(0) }; MAX_DEPTH],
            recursion: [const { Cell::new(UNKNOWN) }; MAX_DEPTH],
            depth: Cell::new(0),
            vertex: Cell::new(0),
            site: Cell::new(UNKNOWN),
            events: Cell::new(0),
            tree_events: trees::Events::new(),
        }
    };
}

impl State {
    fn base(&self) -> u32 {
        match self.depth.get() {
            0 => 1,
            d if d <= MAX_DEPTH => self.bases[d - 1].get(),
            _ => UNKNOWN,
        }
    }

    fn global(&self, local: u32) -> u32 {
        match self.base() {
            UNKNOWN => UNKNOWN,
            _ if local == UNKNOWN => UNKNOWN,
            base => base.saturating_add(local),
        }
    }

    fn push(&self, base: u32, recursion: u32) {
        let d = self.depth.get();
        if d < MAX_DEPTH {
            self.bases[d].set(base);
            self.recursion[d].set(recursion);
        }
        self.depth.set(d + 1);
    }

    fn pop(&self) {
        self.depth.set(self.depth.get().saturating_sub(1));
    }

    #[cfg(test)]
    fn top_recursion(&self) -> u32 {
        match self.depth.get() {
            d if d > 0 && d <= MAX_DEPTH => self.recursion[d - 1].get(),
            _ => UNKNOWN,
        }
    }

    /// Enters local vertex `local`; returns its global id.
    fn enter(&self, local: u32) -> u32 {
        let global = self.global(local);
        self.vertex.set(global);
        self.events.set(self.events.get() + 1);
        global
    }
}

/// A loop vertex is about to run its first iteration.
#[no_mangle]
pub extern "C" fn conifer_loop_enter(id: u32) {
    STATE.with(|s| {
        s.enter(id);
    });
}

/// A loop vertex starts an iteration.
#[no_mangle]
pub extern "C" fn conifer_loop_iter(id: u32) {
    STATE.with(|s| s.tree_events.activate(s.enter(id)));
}

/// A loop vertex was left.
#[no_mangle]
pub extern "C" fn conifer_loop_exit(id: u32) {
    STATE.with(|s| s.tree_events.leave(s.enter(id)));
}

/// A branch-arm vertex was taken.
#[no_mangle]
pub extern "C" fn conifer_branch(id: u32) {
    STATE.with(|s| s.tree_events.activate(s.enter(id)));
}

/// The next MPI call is the call-site vertex `id`.
#[no_mangle]
pub extern "C" fn conifer_mpi_site(id: u32) {
    STATE.with(|s| {
        s.enter(id);
        s.site.set(s.vertex.get());
    });
}

/// A call whose callee's tree starts at local id `first` (or [`UNKNOWN`]) begins.
#[no_mangle]
pub extern "C" fn conifer_call_enter(first: u32) {
    STATE.with(|s| {
        let base = if first == UNKNOWN {
            UNKNOWN
        } else {
            s.global(first)
        };
        s.push(base, UNKNOWN);
        s.events.set(s.events.get() + 1);
    });
}

/// The call begun by [`conifer_call_enter`] returned.
#[no_mangle]
pub extern "C" fn conifer_call_exit(_first: u32) {
    STATE.with(|s| {
        s.pop();
        s.events.set(s.events.get() + 1);
    });
}

/// A recursive function (its pseudo-loop vertex `id`) was entered: a new iteration when it
/// called itself, else the pseudo-loop's first.
#[no_mangle]
pub extern "C" fn conifer_recursion_enter(id: u32) {
    STATE.with(|s| {
        let global = s.global(id);
        let base = s.base();
        s.push(base, global);
        s.tree_events.activate(s.enter(id));
    });
}

/// A recursive function returns.
#[no_mangle]
pub extern "C" fn conifer_recursion_exit(id: u32) {
    STATE.with(|s| {
        s.pop();
        s.tree_events.leave(s.enter(id));
    });
}

/// The MPI call-site vertex announced for the call now being made, if any (cleared, so a call
/// from code without hooks reads `None`).
pub fn take_site() -> Option<u32> {
    STATE.with(|s| Some(s.site.replace(UNKNOWN)).filter(|&v| v != UNKNOWN))
}

/// The vertex the thread last entered, if known.
#[cfg(test)]
pub fn current_vertex() -> Option<u32> {
    STATE.with(|s| Some(s.vertex.get()).filter(|&v| v != UNKNOWN))
}

/// How many activations deep the innermost recursion pseudo-loop is (0 outside one).
#[cfg(test)]
pub fn recursion_depth() -> usize {
    STATE.with(|s| {
        let id = s.top_recursion();
        if id == UNKNOWN {
            return 0;
        }
        let d = s.depth.get().min(MAX_DEPTH);
        (0..d)
            .rev()
            .take_while(|&i| s.recursion[i].get() == id)
            .count()
    })
}

/// Applies this thread's buffered structure events to its `builder` (called on this thread,
/// under the recorder's lock, before it places a call).
pub fn catch_up(builder: &mut conifer_compress::tree::TreeBuilder) {
    STATE.with(|s| s.tree_events.apply(builder));
}

/// Hook calls this thread has made.
#[cfg(test)]
pub fn events() -> u64 {
    STATE.with(|s| s.events.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spliced_callee_ids_are_offset_by_the_call_base() {
        // main: loop (local 0) { site (local 1); call g spliced at local 2 }; g: site (local 0)
        conifer_loop_enter(0);
        assert_eq!(current_vertex(), Some(1));
        conifer_mpi_site(1);
        assert_eq!(take_site(), Some(2));
        assert_eq!(take_site(), None);
        conifer_call_enter(2);
        conifer_mpi_site(0);
        assert_eq!(take_site(), Some(3));
        conifer_call_exit(2);
        conifer_call_enter(UNKNOWN);
        conifer_mpi_site(0);
        assert_eq!(take_site(), None);
        conifer_call_exit(UNKNOWN);
        conifer_mpi_site(1);
        assert_eq!(take_site(), Some(2));
        assert!(events() >= 9);
    }

    #[test]
    fn recursion_counts_activations() {
        conifer_recursion_enter(0);
        conifer_recursion_enter(0);
        conifer_recursion_enter(0);
        assert_eq!(recursion_depth(), 3);
        assert_eq!(current_vertex(), Some(1));
        conifer_recursion_exit(0);
        conifer_recursion_exit(0);
        conifer_recursion_exit(0);
        assert_eq!(recursion_depth(), 0);
    }
}
