//! Tree mode: when the program was built by `conifer cc|cxx|fc`, its binary carries a
//! structure tree (ELF section `.conifer_tree`) and each thread fills a trace tree from the
//! structure hooks and its MPI calls (CYPRESS's top-down compression); the calls the tree
//! cannot hold go to the thread's grammar, in their place. `CONIFER_TREE=0` turns it off
//! (grammar path only); `CONIFER_TREE_WINDOW=n` sets how many runs a new one is compared with.
//!
//! Each thread's builder is part of the recorder's state (so calls update it under the lock
//! they already hold); hooks only buffer their events per thread, lock-free, and the thread's
//! next call applies them.

use conifer_compress::tree::TreeBuilder;
use conifer_format::forest::Structure;
use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, LazyLock};

/// Section the static pass embeds the tree in (also read by [`super::callers`]).
const SECTION: &[u8] = b".conifer_tree";
/// Runs a new run is compared with, by default.
const DEFAULT_WINDOW: usize = 64;

/// The structure tree the binary carries, if any.
static EMBEDDED: LazyLock<Option<Structure>> = LazyLock::new(|| {
    let json = embedded_tree("/proc/self/exe").ok().flatten()?;
    match Structure::from_json(&json) {
        Ok(s) => Some(s),
        Err(e) => {
            say!("ignoring the program's structure tree ({e}); recording without it");
            None
        }
    }
});

/// The program's structure tree, when tree mode is on and the binary has one.
static STRUCTURE: LazyLock<Option<&'static Structure>> = LazyLock::new(|| {
    let off = std::env::var("CONIFER_TREE").as_deref() == Ok("0");
    EMBEDDED.as_ref().filter(|_| !off)
});

/// [`EMBEDDED`]`.is_some()`, cached where a call reads it without touching the lazy value:
/// 0 not known yet, 1 no tree, 2 a tree.
static HAS_TREE: AtomicU8 = AtomicU8::new(0);

/// True when the binary carries a structure tree (built by `conifer cc|cxx|fc`): only then do
/// calls read their call site (whichever recorder is on, so both number requests alike).
#[inline]
pub fn binary_has_tree() -> bool {
    match HAS_TREE.load(Ordering::Relaxed) {
        0 => {
            let known = EMBEDDED.is_some();
            HAS_TREE.store(1 + u8::from(known), Ordering::Relaxed);
            known
        }
        state => state == 2,
    }
}

/// How many runs back a series compares a new run with: `CONIFER_TREE_WINDOW`, else
/// [`DEFAULT_WINDOW`].
static WINDOW: LazyLock<usize> = LazyLock::new(|| {
    std::env::var("CONIFER_TREE_WINDOW")
        .ok()
        .and_then(|w| w.parse().ok())
        .filter(|&w| w >= 1)
        .unwrap_or(DEFAULT_WINDOW)
});

/// The structure tree recorded with the trace, if any.
pub fn structure() -> Option<&'static Structure> {
    *STRUCTURE
}

/// A builder for a thread's trace tree, in tree mode.
pub fn new_builder() -> Option<TreeBuilder> {
    let s = (*STRUCTURE)?;
    Some(TreeBuilder::new(Arc::clone(&s.shape), *WINDOW))
}

/// Structure events the hooks buffer before the builder sees them.
const BUFFERED_EVENTS: usize = 256;
/// Marks a "left vertex" event (vertex ids stay below 2^22).
const LEAVE: u32 = 1 << 31;

/// A thread's structure events not yet applied to its builder: hooks only append here (no
/// lock, no allocation); the thread's next MPI call, or a full buffer, applies them in order.
/// Events still buffered when the record is taken only lack calls, so they change nothing a
/// decode shows. Kept in the hooks' own thread state ([`super::structure`]), so a hook
/// looks up one thread-local.
pub struct Events {
    ids: [Cell<u32>; BUFFERED_EVENTS],
    len: Cell<usize>,
}

impl Events {
    /// No events.
    pub const fn new() -> Events {
        Events {
            ids: [const { Cell::new(0) }; BUFFERED_EVENTS],
            len: Cell::new(0),
        }
    }

    /// Hook: a new activation (loop iteration, arm, recursion) of vertex `v`.
    #[inline]
    pub fn activate(&self, v: u32) {
        if v < LEAVE {
            self.note(v);
        }
    }

    /// Hook: vertex `v` (a loop, a recursive function) was left.
    #[inline]
    pub fn leave(&self, v: u32) {
        if v < LEAVE {
            self.note(v | LEAVE);
        }
    }

    #[inline]
    fn note(&self, event: u32) {
        let n = self.len.get();
        self.ids[n].set(event);
        self.len.set(n + 1);
        if n + 1 == BUFFERED_EVENTS {
            self.hand_over();
        }
    }

    /// The buffer is full: hands the events over now, or drops them when this thread has no
    /// builder yet (no call yet) or the recorder is busy. Events only shape the tree; the
    /// builder places every later call where decoding finds it either way.
    #[cold]
    fn hand_over(&self) {
        if let Some(thread) = crate::thread::ordinal() {
            super::global::with_tree(thread, |builder| self.apply(builder));
        }
        self.len.set(0);
    }

    /// Applies the buffered events to `builder`, in order, and empties the buffer.
    pub fn apply(&self, builder: &mut TreeBuilder) {
        for event in &self.ids[..self.len.get()] {
            let id = event.get();
            if id & LEAVE != 0 {
                builder.leave(id & !LEAVE);
            } else {
                builder.activate(id);
            }
        }
        self.len.set(0);
    }
}

/// The contents of ELF section [`SECTION`] of the file at `path`, up to its first NUL: read
/// from the section headers alone, so large binaries cost a few small reads.
fn embedded_tree(path: &str) -> std::io::Result<Option<Vec<u8>>> {
    let mut file = std::fs::File::open(path)?;
    let Some(sections) = super::elf_sections::sections(&mut file)? else {
        return Ok(None);
    };
    let Some(section) = sections.iter().find(|s| s.name == SECTION) else {
        return Ok(None);
    };
    let mut data = super::elf_sections::read(&mut file, section.offset, section.size)?;
    let nul = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    data.truncate(nul);
    Ok(Some(data))
}
