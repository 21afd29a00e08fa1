//! CYPRESS Algorithm 1, intra-procedural: one function's structure tree from its CFG.
//!
//! The CFG is walked in program order from the entry. A natural loop becomes a loop vertex
//! whose children come from its body (back edges and exits end the walk inside it); after a
//! loop with one exit the walk goes on at that exit, after a loop with several exits each
//! exit starts an arm and the walk goes on where they meet. A block with several successors
//! starts a branch: one arm vertex per successor other than the block's immediate
//! post-dominator, where the arms meet. Every block belongs to at most one vertex: a walk
//! stops at a block already placed, so code reachable from two arms (short-circuit
//! conditions, `goto`) is placed under the first. Calls become leaves: MPI calls, calls of
//! functions with a body (replaced by their trees in [`crate::inter`]) and indirect calls.

use crate::cfg::Loop;
use crate::ir::{Callee, Function};
use crate::tree::{Kind, Node, Origin};

/// Loops and dominance facts of one function, computed once.
pub struct Analysis {
    /// Natural loops, outermost first.
    pub loops: Vec<Loop>,
    /// Immediate post-dominators.
    pub ipdom: Vec<Option<usize>>,
}

impl Analysis {
    /// Analyses `f`'s CFG.
    pub fn new(f: &Function) -> Analysis {
        let idom = f.cfg.idoms();
        Analysis {
            loops: f.cfg.loops(&idom),
            ipdom: f.cfg.ipdoms(),
        }
    }

    /// The loop `b` is the header of.
    pub fn loop_at(&self, b: usize) -> Option<usize> {
        self.loops.iter().position(|l| l.header == b)
    }
}

/// The function's tree before calls are resolved.
pub fn build(f: &Function, analysis: &Analysis) -> Vec<Node> {
    let mut walker = Walker {
        f,
        a: analysis,
        placed: vec![false; f.blocks.len()],
    };
    walker.seq(0, None, None)
}

struct Walker<'a, 'ctx> {
    f: &'a Function<'ctx>,
    a: &'a Analysis,
    placed: Vec<bool>,
}

impl Walker<'_, '_> {
    fn inside(&self, b: usize, ctx: Option<usize>) -> bool {
        ctx.is_none_or(|l| self.a.loops[l].contains[b])
    }

    /// The vertices of the blocks from `start` up to `stop`, inside loop `ctx`.
    fn seq(&mut self, start: usize, stop: Option<usize>, ctx: Option<usize>) -> Vec<Node> {
        let mut out = Vec::new();
        let mut b = start;
        loop {
            if Some(b) == stop || self.placed[b] || !self.inside(b, ctx) {
                break;
            }
            if let Some(l) = self.a.loop_at(b).filter(|&l| Some(l) != ctx) {
                let body = self.seq(b, None, Some(l));
                out.push(Node {
                    children: body,
                    ..Node::leaf(
                        Kind::Loop,
                        self.f.blocks[b].first_loc.clone(),
                        Some(Origin::Loop(b)),
                    )
                });
                let exits = self.a.loops[l].exits.clone();
                match exits[..] {
                    [] => break,
                    [e] => b = e,
                    _ => {
                        let join = self.a.ipdom[b];
                        for e in exits.into_iter().filter(|&e| Some(e) != join) {
                            let children = self.seq(e, join, ctx);
                            out.push(Node {
                                group: Some(usize::MAX - b),
                                children,
                                ..Node::leaf(
                                    Kind::Branch,
                                    self.f.blocks[e].first_loc.clone(),
                                    Some(Origin::ExitArm(e)),
                                )
                            });
                        }
                        match join {
                            Some(j) => b = j,
                            None => break,
                        }
                    }
                }
                continue;
            }
            self.placed[b] = true;
            for &c in &self.f.blocks[b].calls {
                let call = &self.f.calls[c];
                let kind = match &call.callee {
                    Callee::Mpi(name) => Kind::Mpi(name.clone()),
                    Callee::User(name) => Kind::Call(c, name.clone()),
                    Callee::Indirect => Kind::Opaque(c),
                };
                let origin = matches!(call.callee, Callee::Mpi(_)).then_some(Origin::Site(c));
                out.push(Node::leaf(kind, call.loc.clone(), origin));
            }
            let header = ctx.map(|l| self.a.loops[l].header);
            let mut succs: Vec<usize> = Vec::new();
            for &s in &self.f.cfg.succs[b] {
                if self.inside(s, ctx) && Some(s) != header && !succs.contains(&s) {
                    succs.push(s);
                }
            }
            match succs[..] {
                [] => break,
                [s] => b = s,
                _ => {
                    let join = self.a.ipdom[b];
                    let loc = self.f.blocks[b].term_loc.clone();
                    for s in succs.into_iter().filter(|&s| Some(s) != join) {
                        let children = self.seq(s, join, ctx);
                        out.push(Node {
                            group: Some(b),
                            children,
                            ..Node::leaf(
                                Kind::Branch,
                                loc.clone(),
                                Some(Origin::Arm { branch: b, succ: s }),
                            )
                        });
                    }
                    match join {
                        Some(j) => b = j,
                        None => break,
                    }
                }
            }
        }
        out
    }
}
