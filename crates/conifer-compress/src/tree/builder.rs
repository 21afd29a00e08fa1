//! Filling a trace tree while the program runs (CYPRESS §IV-A, "top-down" compression).
//!
//! The program's hooks and MPI calls arrive as *activations* of structure-tree vertices: a
//! loop iteration, a branch arm taken, a call at a call site. Each vertex keeps, per
//! activation of its parent, how many times it was activated (a [`Series`]): the iteration
//! counts of a loop per entry, the arms taken per iteration, the calls of a site. A call
//! site also keeps the terminal of each call and how many calls outside the tree followed it.
//!
//! Activations open lazily, when a call arrives under them: a hook only marks its vertex
//! as started again, so loop iterations and arms that made no call (a loop header's final
//! test, a branch whose calls sit in a deeper branch not taken) are not recorded at all.
//!
//! Decoding walks the tree: per activation of a vertex, its children in program order, each
//! as often as recorded. The builder keeps the decoder's position (the stack of open
//! activations) and only accepts an activation the walk reproduces in place: a vertex whose
//! parent's open activation has already gone past it starts a new activation of the parent
//! (and so on upwards); when even the root has gone past it, the call is refused and goes to
//! the grammar path, attached to the tree call before it. Every accepted call therefore
//! decodes exactly where it happened, whatever the hooks reported.

use super::record::{TreeRecord, VertexRecord};
use super::series::builder::SeriesBuilder;
use super::shape::{Shape, VertexKind};
use std::sync::Arc;

/// No child activated yet in an activation.
const NONE: u32 = u32::MAX;

/// A thread's trace tree under construction.
#[derive(Clone, Debug)]
pub struct TreeBuilder {
    shape: Arc<Shape>,
    /// Per vertex: what placing a call reads and writes, in one place.
    vertices: Vec<Vertex>,
    /// Per vertex: its activation counts per activation of its parent, closed ones.
    counts: Vec<SeriesBuilder>,
    /// Open activations, root first.
    stack: Vec<u32>,
    /// Lowest stack index whose vertex a hook has started again (a new loop iteration, an arm
    /// taken again) since it was opened; the next call below it opens it anew. `usize::MAX`:
    /// none. Activations open lazily, at the next call under them, so iterations without
    /// calls (a loop header's final test, arms whose calls were skipped) cost nothing.
    fresh_from: usize,
    /// Per call site: terminal of each call.
    terminals: Vec<SeriesBuilder>,
    /// Per call site: calls outside the tree right after each call.
    foreign: Vec<SeriesBuilder>,
    /// The last accepted call (site, terminal) and the refused calls after it.
    pending: Option<(u32, u32, u64)>,
    /// Refused calls before the first accepted one.
    leading_foreign: u64,
    /// Scratch: vertices to activate, deepest first.
    path: Vec<u32>,
}

/// A vertex's place in the shape (copied from it) and its activation bookkeeping.
#[derive(Clone, Copy, Debug)]
struct Vertex {
    /// Parent (the root's is 0).
    parent: u32,
    /// Position among the parent's children.
    index: u32,
    /// Index in the stack of open activations, or `NONE`.
    position: u32,
    /// While on the stack: program-order index of the child activated last (`NONE`: none).
    last_child: u32,
    /// Activations so far (the root has its one).
    activations: u64,
    /// The parent activation the open count belongs to (`u64::MAX`: none yet).
    counted_for: u64,
    /// Activations during parent activation `counted_for`.
    open_count: u64,
}

impl TreeBuilder {
    /// An empty tree of `shape`; series fold cycles of up to `window` runs.
    pub fn new(shape: Arc<Shape>, window: usize) -> TreeBuilder {
        let n = shape.len();
        let mut vertices: Vec<Vertex> = (0..n as u32)
            .map(|v| Vertex {
                parent: shape.parent(v),
                index: shape.index(v),
                position: NONE,
                last_child: NONE,
                activations: 0,
                counted_for: u64::MAX,
                open_count: 0,
            })
            .collect();
        vertices[0].position = 0;
        vertices[0].activations = 1;
        TreeBuilder {
            vertices,
            counts: vec![SeriesBuilder::new(true, window); n],
            stack: vec![0],
            fresh_from: usize::MAX,
            terminals: vec![SeriesBuilder::new(false, window); n],
            foreign: vec![SeriesBuilder::new(true, window); n],
            pending: None,
            leading_foreign: 0,
            path: Vec::new(),
            shape,
        }
    }

    /// One more activation of `u`, in its parent's open activation.
    fn open(&mut self, u: u32) {
        let i = u as usize;
        let Vertex { parent, index, .. } = self.vertices[i];
        let parent = &mut self.vertices[parent as usize];
        let k = parent.activations - 1;
        parent.last_child = index;
        let v = &mut self.vertices[i];
        if v.counted_for == k {
            v.open_count += 1;
        } else {
            let counts = &mut self.counts[i];
            if v.counted_for == u64::MAX {
                counts.push_n(0, k);
            } else {
                counts.push(v.open_count);
                counts.push_n(0, k - v.counted_for - 1);
            }
            v.counted_for = k;
            v.open_count = 1;
        }
        v.activations += 1;
        v.last_child = NONE;
    }

    /// The shape being filled.
    pub fn shape(&self) -> &Arc<Shape> {
        &self.shape
    }

    /// A new activation of `v` (loop iteration, arm taken, recursion entered), opened at the
    /// next call under it; false when `v` is unknown or a call site (those are activated by
    /// [`TreeBuilder::call`]).
    pub fn activate(&mut self, v: u32) -> bool {
        let known = v != 0 && (v as usize) < self.shape.len();
        if !known || self.shape.kind(v) == VertexKind::Site {
            return false;
        }
        let at = self.vertices[v as usize].position;
        if at != NONE {
            self.fresh_from = self.fresh_from.min(at as usize);
        }
        true
    }

    /// Opens an activation of `v` where the walk reproduces it, if it can.
    fn place(&mut self, v: u32) -> bool {
        let vertices = &self.vertices;
        self.path.clear();
        self.path.push(v);
        let mut at = vertices[v as usize].parent;
        while vertices[at as usize].position == NONE {
            self.path.push(at);
            at = vertices[at as usize].parent;
        }
        if self.fresh_from <= vertices[at as usize].position as usize {
            let fresh = self.stack[self.fresh_from];
            while at != fresh {
                self.path.push(at);
                at = vertices[at as usize].parent;
            }
            self.path.push(at);
            at = vertices[at as usize].parent;
            self.fresh_from = usize::MAX;
        }
        loop {
            let next = *self.path.last().expect("path holds v");
            let last = vertices[at as usize].last_child;
            if last == NONE || vertices[next as usize].index >= last {
                break;
            }
            if at == 0 {
                return false;
            }
            self.path.push(at);
            at = vertices[at as usize].parent;
        }
        self.close_above(at);
        while let Some(u) = self.path.pop() {
            self.open(u);
            self.vertices[u as usize].position = self.stack.len() as u32;
            self.stack.push(u);
        }
        true
    }

    /// Vertex `v` (a loop, a recursive function) was left: its open activation ends.
    pub fn leave(&mut self, v: u32) {
        if (v as usize) < self.shape.len() && v != 0 && self.vertices[v as usize].position != NONE {
            self.close_above(self.vertices[v as usize].parent);
        }
    }

    /// Ends the open activations above `at`, which is on the stack (the stack is a path from
    /// the root, so a vertex's parent sits right below it).
    fn close_above(&mut self, at: u32) {
        while let Some(&top) = self.stack.last() {
            if top == at {
                break;
            }
            self.vertices[top as usize].position = NONE;
            self.stack.pop();
        }
        if self.fresh_from >= self.stack.len() {
            self.fresh_from = usize::MAX;
        }
    }

    /// An MPI call with `terminal`, at call site `site` when known. True when the tree holds
    /// it; false when the caller must record it on the grammar path (its place is kept: it
    /// decodes right after the tree call before it).
    pub fn call(&mut self, site: Option<u32>, terminal: u32) -> bool {
        let placed = match site {
            Some(s)
                if (s as usize) < self.shape.len() && self.shape.kind(s) == VertexKind::Site =>
            {
                self.place(s)
            }
            _ => false,
        };
        if placed {
            if let Some((s, t, f)) = self.pending.take() {
                self.terminals[s as usize].push(t.into());
                self.foreign[s as usize].push(f);
            }
            self.pending = Some((site.expect("placed calls have a site"), terminal, 0));
        } else {
            match &mut self.pending {
                Some((_, _, f)) => *f += 1,
                None => self.leading_foreign += 1,
            }
        }
        placed
    }

    /// The tree so far (the builder goes on: partial traces take it mid-run).
    pub fn record(&self) -> TreeRecord {
        let n = self.shape.len();
        let vertices = (0..n)
            .map(|i| {
                if i == 0 {
                    return VertexRecord::default();
                }
                let v = &self.vertices[i];
                let parent_total = self.vertices[v.parent as usize].activations;
                let counts = if v.counted_for == u64::MAX {
                    self.counts[i].snapshot_with(&[(0, parent_total)])
                } else {
                    let zeros = parent_total - v.counted_for - 1;
                    self.counts[i].snapshot_with(&[(v.open_count, 1), (0, zeros)])
                };
                let (terminals, foreign) = match self.pending {
                    Some((s, t, f)) if s as usize == i => (
                        self.terminals[i].snapshot_with(&[(t.into(), 1)]),
                        self.foreign[i].snapshot_with(&[(f, 1)]),
                    ),
                    _ => (self.terminals[i].snapshot(), self.foreign[i].snapshot()),
                };
                VertexRecord {
                    counts,
                    terminals,
                    foreign,
                }
            })
            .collect();
        TreeRecord {
            leading_foreign: self.leading_foreign,
            vertices,
        }
    }
}
