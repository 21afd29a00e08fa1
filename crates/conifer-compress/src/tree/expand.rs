//! Decompression (CYPRESS §V): walking a thread's trace tree in pre-order — per activation of
//! a vertex, its children in program order, each as often as recorded — and emitting each
//! call site's terminals, with the calls recorded outside the tree spliced in after the tree
//! call they followed.

use super::record::VertexRecord;
use super::series::SeriesIter;
use super::shape::{Shape, VertexKind};

/// An open activation during the walk.
struct Frame {
    vertex: u32,
    /// Next child (program-order position) to visit.
    next_child: usize,
    /// The child being visited and its activations left in this activation.
    child: u32,
    left: u64,
}

/// The terminals of one thread's trace tree, in call order, with the grammar path's calls
/// (`foreign`) merged in. Ends early on an inconsistent record (see [`super::validate`]).
pub struct Expand<'a, F: Iterator<Item = u32>> {
    shape: &'a Shape,
    counts: Vec<SeriesIter<'a>>,
    terminals: Vec<SeriesIter<'a>>,
    foreign_after: Vec<SeriesIter<'a>>,
    foreign: F,
    foreign_left: u64,
    frames: Vec<Frame>,
    /// Call site of the call returned last (`None` for a grammar call).
    site: Option<u32>,
}

impl<'a, F: Iterator<Item = u32>> Expand<'a, F> {
    /// Walks `records` (one per vertex of `shape`); `foreign` yields the grammar path's calls.
    pub fn new(
        shape: &'a Shape,
        records: &[&'a VertexRecord],
        leading_foreign: u64,
        foreign: F,
    ) -> Expand<'a, F> {
        Expand {
            shape,
            counts: records.iter().map(|r| r.counts.iter()).collect(),
            terminals: records.iter().map(|r| r.terminals.iter()).collect(),
            foreign_after: records.iter().map(|r| r.foreign.iter()).collect(),
            foreign,
            foreign_left: leading_foreign,
            site: None,
            frames: vec![Frame {
                vertex: 0,
                next_child: 0,
                child: 0,
                left: 0,
            }],
        }
    }
}

impl<F: Iterator<Item = u32>> Expand<'_, F> {
    /// The call site of the call [`Iterator::next`] returned last; `None` for a call the
    /// tree did not hold.
    pub fn site(&self) -> Option<u32> {
        self.site
    }
}

impl<F: Iterator<Item = u32>> Iterator for Expand<'_, F> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        loop {
            if self.foreign_left > 0 {
                self.foreign_left -= 1;
                self.site = None;
                return self.foreign.next();
            }
            let frame = self.frames.last_mut()?;
            if frame.left > 0 {
                frame.left -= 1;
                let c = frame.child;
                if self.shape.kind(c) == VertexKind::Site {
                    let terminal = self.terminals.get_mut(c as usize)?.next()?;
                    self.foreign_left = self.foreign_after[c as usize].next()?;
                    self.site = Some(c);
                    return u32::try_from(terminal).ok();
                }
                self.frames.push(Frame {
                    vertex: c,
                    next_child: 0,
                    child: 0,
                    left: 0,
                });
                continue;
            }
            let children = self.shape.children(frame.vertex);
            match children.get(frame.next_child) {
                Some(&c) => {
                    frame.next_child += 1;
                    frame.child = c;
                    frame.left = self.counts.get_mut(c as usize)?.next()?;
                }
                None => {
                    self.frames.pop();
                }
            }
        }
    }
}
