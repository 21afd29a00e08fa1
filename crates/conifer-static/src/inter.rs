//! CYPRESS Algorithm 2, inter-procedural: every call of a function with a body is replaced by
//! that function's tree, bottom-up over the call graph (each function is expanded once, its
//! callees first), then pruned.
//!
//! Rules for calls the tree cannot follow (documented in docs/guide/structure-and-slicing.md):
//! - a call of the function to itself makes the function's tree a pseudo-loop (Figure 8,
//!   [`tree::recursion_to_loop`]);
//! - a call into another function of a recursive cycle, an indirect call, and a call whose
//!   callee's tree exceeds [`MAX_SPLICE`] vertices are *opaque*: they add no vertex, and the
//!   instrumentation tells the runtime that code under them is in an unknown context;
//! - a call into code without bitcode (a plain object or library) is assumed to make no MPI
//!   calls and adds nothing.

use crate::intra::{self, Analysis};
use crate::ir::Function;
use crate::tree::{self, Kind, Node};
use std::collections::HashMap;

/// Largest callee tree copied into a caller; beyond it the call is opaque.
pub const MAX_SPLICE: usize = 20_000;

/// One function's final tree and what its instrumentation needs.
pub struct Expanded {
    /// The pruned tree (callee trees inside `Splice` vertices).
    pub forest: Vec<Node>,
    /// Call indices of opaque calls.
    pub opaque: Vec<usize>,
    /// Functions whose trees were spliced in, by call index.
    pub spliced: Vec<(usize, String)>,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Open,
    Done,
}

/// Expands functions on demand, memoised.
pub struct Program<'a, 'ctx> {
    functions: &'a [Function<'ctx>],
    by_name: HashMap<String, usize>,
    /// Per function: its CFG analysis.
    pub analyses: Vec<Analysis>,
    state: Vec<Option<State>>,
    /// Per function: its expanded tree, once computed.
    pub expanded: Vec<Option<Expanded>>,
}

impl<'a, 'ctx> Program<'a, 'ctx> {
    /// Analyses every function's CFG.
    pub fn new(functions: &'a [Function<'ctx>]) -> Self {
        Program {
            functions,
            by_name: functions
                .iter()
                .enumerate()
                .map(|(i, f)| (f.name.clone(), i))
                .collect(),
            analyses: functions.iter().map(Analysis::new).collect(),
            state: vec![None; functions.len()],
            expanded: functions.iter().map(|_| None).collect(),
        }
    }

    /// Index of the function called `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Expands function `f` (and, first, everything it calls).
    pub fn expand(&mut self, f: usize) {
        if self.state[f].is_some() {
            return;
        }
        self.state[f] = Some(State::Open);
        let func = &self.functions[f];
        let raw = intra::build(func, &self.analyses[f]);
        let mut opaque = Vec::new();
        let mut spliced = Vec::new();
        let mut recursive = false;
        let resolved = self.resolve(f, raw, &mut opaque, &mut spliced, &mut recursive);
        let mut forest = tree::flatten_arms(tree::prune(resolved));
        if recursive {
            forest = vec![tree::recursion_to_loop(
                &func.name,
                func.loc.clone(),
                forest,
            )];
            forest = tree::prune(forest);
        }
        self.expanded[f] = Some(Expanded {
            forest,
            opaque,
            spliced,
        });
        self.state[f] = Some(State::Done);
    }

    fn resolve(
        &mut self,
        f: usize,
        nodes: Vec<Node>,
        opaque: &mut Vec<usize>,
        spliced: &mut Vec<(usize, String)>,
        recursive: &mut bool,
    ) -> Vec<Node> {
        let mut out = Vec::new();
        for mut n in nodes {
            match n.kind.clone() {
                Kind::Call(call, name) => {
                    let g = self.by_name[&name];
                    if g == f {
                        *recursive = true;
                        out.push(Node::leaf(Kind::Recurse(call), n.loc, None));
                        continue;
                    }
                    self.expand(g);
                    if self.state[g] == Some(State::Open) {
                        opaque.push(call);
                        continue;
                    }
                    let callee = self.expanded[g].as_ref().expect("expanded");
                    let size: usize = callee.forest.iter().map(Node::size).sum();
                    if size == 0 {
                        continue;
                    }
                    if size > MAX_SPLICE {
                        opaque.push(call);
                        continue;
                    }
                    let mut splice = Node::leaf(Kind::Splice(call), n.loc, None);
                    splice.children = callee.forest.iter().flat_map(Node::foreign).collect();
                    spliced.push((call, name));
                    out.push(splice);
                }
                Kind::Opaque(call) => opaque.push(call),
                _ => {
                    let children = std::mem::take(&mut n.children);
                    n.children = self.resolve(f, children, opaque, spliced, recursive);
                    out.push(n);
                }
            }
        }
        out
    }
}
