//! The structure tree: vertices, the rewriting steps of CYPRESS (pruning, one vertex per
//! branch arm, recursion as a pseudo-loop), pre-order numbering, and the embedded JSON form.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Where a vertex came from in the function being analysed; the instrumenter puts that
/// vertex's hook there. Vertices spliced in from callees carry no origin.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Origin {
    /// A natural loop, by header block.
    Loop(usize),
    /// A branch arm: the edge from the branching block to one successor.
    Arm { branch: usize, succ: usize },
    /// An arm after a loop with several exits: entering this exit block.
    ExitArm(usize),
    /// An MPI call, by call index.
    Site(usize),
    /// The pseudo-loop of a recursive function.
    Recursion,
    /// The code that runs after a recursive call (by call index) returns.
    Continuation(usize),
}

/// What a vertex is. `Call`, `Opaque`, `Recurse` and `Splice` exist only while the tree is
/// being built.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A loop (or, with `recursive` set, the pseudo-loop of a recursive function).
    Loop,
    /// One arm of a branch.
    Branch,
    /// An MPI call site; the function's C name.
    Mpi(String),
    /// A call (by call index) to a function with a body, not yet replaced by its tree.
    Call(usize, String),
    /// A call the tree cannot follow (indirect, or into another function of a recursive
    /// cycle); instrumented as an unknown context.
    Opaque(usize),
    /// A call of the function to itself.
    Recurse(usize),
    /// A callee's tree spliced in at a call (by call index); numbering looks through it.
    Splice(usize),
}

/// A source position from debug information.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Loc {
    /// File name as the compiler recorded it.
    pub file: String,
    /// Line, 1-based.
    pub line: u32,
}

/// A vertex under construction.
#[derive(Clone, Debug)]
pub struct Node {
    /// Its kind.
    pub kind: Kind,
    /// Source position, when debug information has one.
    pub loc: Option<Loc>,
    /// Where its hook goes, for vertices of the function being analysed.
    pub origin: Option<Origin>,
    /// For arms: the branch they belong to (arms of one branch share it).
    pub group: Option<usize>,
    /// For pseudo-loops: the recursive function.
    pub recursive: Option<String>,
    /// Children in program order.
    pub children: Vec<Node>,
}

impl Node {
    /// A vertex without children.
    pub fn leaf(kind: Kind, loc: Option<Loc>, origin: Option<Origin>) -> Node {
        Node {
            kind,
            loc,
            origin,
            group: None,
            recursive: None,
            children: Vec::new(),
        }
    }

    /// Number of vertices in this subtree that get ids (splices are transparent).
    pub fn size(&self) -> usize {
        let own = usize::from(!matches!(self.kind, Kind::Splice(_)));
        own + self.children.iter().map(Node::size).sum::<usize>()
    }

    /// Copy for splicing into a caller: the callee's origins mean nothing there, and the
    /// callee's own splices dissolve into their contents.
    pub fn foreign(&self) -> Vec<Node> {
        let children: Vec<Node> = self.children.iter().flat_map(Node::foreign).collect();
        if matches!(self.kind, Kind::Splice(_)) {
            return children;
        }
        vec![Node {
            kind: self.kind.clone(),
            loc: self.loc.clone(),
            origin: None,
            group: None,
            recursive: self.recursive.clone(),
            children,
        }]
    }
}

/// Removes leaves that are not MPI calls (or recursive calls, which [`recursion_to_loop`]
/// consumes) and containers left empty, bottom-up: CYPRESS's pruning.
pub fn prune(nodes: Vec<Node>) -> Vec<Node> {
    nodes
        .into_iter()
        .filter_map(|mut n| match n.kind {
            Kind::Mpi(_) | Kind::Recurse(_) => Some(n),
            Kind::Call(..) | Kind::Opaque(_) => None,
            _ => {
                n.children = prune(std::mem::take(&mut n.children));
                (!n.children.is_empty()).then_some(n)
            }
        })
        .collect()
}

/// An arm whose whole content is the arms of one nested branch is replaced by those arms, so
/// `if/else if/else` chains and short-circuit conditions give one vertex per path.
pub fn flatten_arms(nodes: Vec<Node>) -> Vec<Node> {
    let mut out = Vec::new();
    for mut n in nodes {
        n.children = flatten_arms(std::mem::take(&mut n.children));
        let nested = n.kind == Kind::Branch
            && n.children.iter().all(|c| c.kind == Kind::Branch)
            && n.children.windows(2).all(|w| w[0].group == w[1].group)
            && n.children.first().is_some_and(|c| c.group != n.group);
        if nested {
            out.append(&mut n.children);
        } else {
            out.push(n);
        }
    }
    out
}

/// Figure 8 of the CYPRESS paper: the tree of a self-recursive function becomes a pseudo-loop
/// (one iteration per activation); each recursive call ends the sequence it is in, and what
/// followed it becomes a branch arm (taken when the call returns) placed after the top-level
/// vertex holding the call.
pub fn recursion_to_loop(function: &str, loc: Option<Loc>, nodes: Vec<Node>) -> Node {
    let (children, conts) = cut(nodes, true);
    debug_assert!(conts.is_empty());
    Node {
        kind: Kind::Loop,
        loc,
        origin: Some(Origin::Recursion),
        group: None,
        recursive: Some(function.to_string()),
        children: prune(children),
    }
}

/// Splits a sequence at recursive calls. Returns the vertices that stay in place and the
/// continuation arms that move up to the pseudo-loop's level; at that level (`top`) each
/// vertex's continuations are placed right after it.
fn cut(nodes: Vec<Node>, top: bool) -> (Vec<Node>, Vec<Node>) {
    let mut kept = Vec::new();
    let mut conts = Vec::new();
    let mut iter = nodes.into_iter();
    while let Some(mut n) = iter.next() {
        let mut moved = Vec::new();
        if let Kind::Recurse(call) = n.kind {
            let (rest, rest_conts) = cut(iter.by_ref().collect(), false);
            let mut arm = Node::leaf(
                Kind::Branch,
                n.loc.clone(),
                Some(Origin::Continuation(call)),
            );
            arm.children = rest;
            moved.push(arm);
            moved.extend(rest_conts);
        } else {
            let (inner, inner_conts) = cut(std::mem::take(&mut n.children), false);
            n.children = inner;
            kept.push(n);
            moved = inner_conts;
        }
        if top {
            kept.append(&mut moved);
        } else {
            conts.append(&mut moved);
        }
    }
    (kept, conts)
}

/// Pre-order numbering from `first`: the id of every own-origin vertex, and for every splice
/// (by call index) the id its first vertex gets.
#[derive(Default)]
pub struct Numbering {
    /// Origin -> id.
    pub vertices: HashMap<Origin, u32>,
    /// Call index -> id of the first vertex of the callee's tree.
    pub splices: HashMap<usize, u32>,
}

/// Numbers `nodes` in pre-order starting at `first`.
pub fn number(nodes: &[Node], first: u32) -> Numbering {
    let mut out = Numbering::default();
    let mut next = first;
    visit(nodes, &mut next, &mut out);
    out
}

fn visit(nodes: &[Node], next: &mut u32, out: &mut Numbering) {
    for n in nodes {
        if let Kind::Splice(call) = n.kind {
            out.splices.insert(call, *next);
        } else {
            if let Some(origin) = n.origin {
                out.vertices.insert(origin, *next);
            }
            *next += 1;
        }
        visit(&n.children, next, out);
    }
}

/// A numbered vertex as embedded in the binary and printed by `conifer tree`.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct Vertex {
    /// Pre-order id (root = 0).
    pub id: u32,
    /// `root`, `loop`, `branch` or `mpi`.
    pub kind: String,
    /// MPI function for call sites; the function for recursion pseudo-loops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Source position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loc: Option<Loc>,
    /// Children in program order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Vertex>,
}

/// The whole-program tree with ids: a root over the entry function's tree.
pub fn finish(forest: &[Node]) -> Vertex {
    let mut next = 1;
    Vertex {
        id: 0,
        kind: "root".into(),
        name: None,
        loc: None,
        children: vertices(forest, &mut next),
    }
}

fn vertices(nodes: &[Node], next: &mut u32) -> Vec<Vertex> {
    let mut out = Vec::new();
    for n in nodes {
        let (kind, name) = match &n.kind {
            Kind::Splice(_) => {
                out.extend(vertices(&n.children, next));
                continue;
            }
            Kind::Loop => ("loop", n.recursive.clone()),
            Kind::Branch => ("branch", None),
            Kind::Mpi(name) => ("mpi", Some(name.clone())),
            other => unreachable!("{other:?} left in a finished tree"),
        };
        let id = *next;
        *next += 1;
        out.push(Vertex {
            id,
            kind: kind.into(),
            name,
            loc: n.loc.clone(),
            children: vertices(&n.children, next),
        });
    }
    out
}

impl Vertex {
    /// The indented text form: `id kind [name] [file:line]`, two spaces per level.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(0, &mut out);
        out
    }

    fn render_into(&self, depth: usize, out: &mut String) {
        out.push_str(&"  ".repeat(depth));
        out.push_str(&format!("{} {}", self.id, self.kind));
        if let Some(name) = &self.name {
            out.push_str(&format!(" {name}"));
        }
        if let Some(loc) = &self.loc {
            out.push_str(&format!(" {}:{}", loc.file, loc.line));
        }
        out.push('\n');
        for c in &self.children {
            c.render_into(depth + 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mpi(name: &str, call: usize) -> Node {
        Node::leaf(Kind::Mpi(name.into()), None, Some(Origin::Site(call)))
    }

    fn arm(group: usize, succ: usize, children: Vec<Node>) -> Node {
        let mut n = Node::leaf(
            Kind::Branch,
            None,
            Some(Origin::Arm {
                branch: group,
                succ,
            }),
        );
        n.group = Some(group);
        n.children = children;
        n
    }

    fn shape(v: &Vertex) -> String {
        let inner: Vec<String> = v.children.iter().map(shape).collect();
        let head = v.name.clone().unwrap_or(v.kind.clone());
        if inner.is_empty() {
            head
        } else {
            format!("{head}{{{}}}", inner.join(","))
        }
    }

    #[test]
    fn figure_8_recursion_becomes_loop_with_arms() {
        // if (n == 0) return; else if (a && b) {Bcast; Reduce; f()} else {Bcast; f(); Reduce}
        let then = arm(
            2,
            5,
            vec![
                mpi("B", 0),
                mpi("R", 1),
                Node::leaf(Kind::Recurse(2), None, None),
            ],
        );
        let els = arm(
            2,
            6,
            vec![
                mpi("B", 3),
                Node::leaf(Kind::Recurse(4), None, None),
                mpi("R", 5),
            ],
        );
        let inner = arm(1, 2, vec![then, els]);
        let outer = arm(0, 1, vec![inner, arm(1, 6, vec![])]);
        let body = flatten_arms(prune(vec![arm(0, 7, vec![]), outer]));
        let tree = finish(&[recursion_to_loop("f", None, body)]);
        assert_eq!(shape(&tree), "root{f{branch{B,R},branch{B},branch{R}}}");
    }

    #[test]
    fn pruning_and_numbering_skip_splices() {
        let mut splice = Node::leaf(Kind::Splice(9), None, None);
        splice.children = mpi("C", 0).foreign();
        let nodes = prune(vec![
            mpi("A", 1),
            Node::leaf(Kind::Call(2, "g".into()), None, None),
            arm(3, 4, vec![]),
            splice,
            mpi("D", 5),
        ]);
        let n = number(&nodes, 0);
        assert_eq!(n.vertices[&Origin::Site(1)], 0);
        assert_eq!(n.splices[&9], 1);
        assert_eq!(n.vertices[&Origin::Site(5)], 2);
        assert_eq!(shape(&finish(&nodes)), "root{A,C,D}");
    }
}
