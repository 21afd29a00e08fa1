//! The shape of a structure tree as the runtime and the decoder need it: kind, parent and
//! children of each vertex, by pre-order id.

/// What a vertex of the structure tree is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum VertexKind {
    /// The program (vertex 0).
    Root,
    /// A loop, or a recursive function's pseudo-loop: an activation is one iteration.
    Loop,
    /// One arm of a branch: an activation is one time the arm was taken.
    Branch,
    /// An MPI call site: an activation is one call.
    Site,
}

/// Kinds, parents and children of a structure tree's vertices.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Shape {
    kinds: Vec<VertexKind>,
    parents: Vec<u32>,
    /// Position of each vertex among its parent's children.
    index: Vec<u32>,
    children: Vec<Vec<u32>>,
}

/// The most vertices a shape may have (a bound for corrupt input).
pub const MAX_VERTICES: usize = 1 << 22;

impl Shape {
    /// The shape of `vertices[i] = (kind, parent)`, vertex 0 being the root (its parent is
    /// ignored) and every other vertex's parent a smaller id that is not a call site.
    pub fn new(vertices: &[(VertexKind, u32)]) -> Result<Shape, String> {
        if vertices.is_empty() || vertices[0].0 != VertexKind::Root {
            return Err("the structure tree does not start with its root".into());
        }
        if vertices.len() > MAX_VERTICES {
            return Err(format!(
                "the structure tree has {} vertices",
                vertices.len()
            ));
        }
        let n = vertices.len();
        let mut shape = Shape {
            kinds: vertices.iter().map(|v| v.0).collect(),
            parents: vec![0; n],
            index: vec![0; n],
            children: vec![Vec::new(); n],
        };
        for (v, &(kind, parent)) in vertices.iter().enumerate().skip(1) {
            let p = parent as usize;
            if kind == VertexKind::Root || p >= v || shape.kinds[p] == VertexKind::Site {
                return Err(format!("vertex {v} of the structure tree has a bad parent"));
            }
            shape.parents[v] = parent;
            shape.index[v] = shape.children[p].len() as u32;
            shape.children[p].push(v as u32);
        }
        Ok(shape)
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Always false: a shape has its root.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Kind of `v`.
    pub fn kind(&self, v: u32) -> VertexKind {
        self.kinds[v as usize]
    }

    /// Parent of `v` (the root's is 0).
    pub fn parent(&self, v: u32) -> u32 {
        self.parents[v as usize]
    }

    /// Position of `v` among its parent's children.
    pub fn index(&self, v: u32) -> u32 {
        self.index[v as usize]
    }

    /// Children of `v`, in program order.
    pub fn children(&self, v: u32) -> &[u32] {
        &self.children[v as usize]
    }
}
