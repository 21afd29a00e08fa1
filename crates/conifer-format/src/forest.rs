//! The trace trees of a run whose binary carries a structure tree (built by `conifer cc`,
//! `cxx` or `fc`): the structure tree itself, and per vertex the distinct records the ranks'
//! threads left there. A thread's tree is one record index per vertex, so merging ranks is a
//! vertex-by-vertex walk that stores equal vertex records once (CYPRESS §IV-B), and the
//! calls its tree did not hold stay in the thread's grammar, decoded in their place.

use conifer_compress::fast_hash::FastMap;
use conifer_compress::tree::{
    validate, Expand, RecordSummary, Shape, VertexKind, VertexRecord, MAX_VERTICES,
};
use conifer_compress::FrozenGrammar;
use std::sync::{Arc, Mutex};

/// A thread without a trace tree.
pub const NO_TREE: u32 = u32::MAX;

/// The structure tree as the binary embeds it (the JSON `conifer tree --json` prints), with
/// its shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Structure {
    /// The embedded JSON, verbatim; or, for a structure read from a file, the compact form
    /// the file stored (see [`crate::structure_codec`]).
    pub json: Vec<u8>,
    /// Kinds and parents of its vertices.
    pub shape: Arc<Shape>,
    /// Source position (`file:line`) of each vertex, when known.
    pub locs: Arc<Vec<Option<String>>>,
    /// Each vertex's pre-order id in the binary's structure tree (a file keeps only the
    /// vertices the run visited, so these may skip).
    pub ids: Arc<Vec<u32>>,
}

impl Structure {
    /// Parses the embedded JSON; vertex ids must be the pre-order numbering from 0. The last
    /// structure parsed is kept: every message of a run's merge carries the same one.
    pub fn from_json(json: &[u8]) -> Result<Structure, String> {
        static LAST: Mutex<Option<Structure>> = Mutex::new(None);
        let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = last.as_ref().filter(|s| s.json == json) {
            return Ok(known.clone());
        }
        let parsed = Structure::parse(json)?;
        *last = Some(parsed.clone());
        Ok(parsed)
    }

    fn parse(json: &[u8]) -> Result<Structure, String> {
        let root: serde_json::Value =
            serde_json::from_slice(json).map_err(|e| format!("corrupt structure tree: {e}"))?;
        let (mut vertices, mut locs) = (Vec::new(), Vec::new());
        collect(&root, 0, &mut vertices, &mut locs)?;
        Ok(Structure {
            json: json.to_vec(),
            shape: Arc::new(Shape::new(&vertices)?),
            ids: Arc::new((0..vertices.len() as u32).collect()),
            locs: Arc::new(locs),
        })
    }
}

/// Appends `v` and its subtree in pre-order as (kind, parent), and their source positions.
fn collect(
    v: &serde_json::Value,
    parent: u32,
    out: &mut Vec<(VertexKind, u32)>,
    locs: &mut Vec<Option<String>>,
) -> Result<(), String> {
    let id = out.len() as u32;
    if out.len() >= MAX_VERTICES || v.get("id").and_then(|i| i.as_u64()) != Some(id.into()) {
        return Err(format!(
            "structure tree vertex {id} is missing or out of order"
        ));
    }
    let kind = match v.get("kind").and_then(|k| k.as_str()) {
        Some("root") => VertexKind::Root,
        Some("loop") => VertexKind::Loop,
        Some("branch") => VertexKind::Branch,
        Some("mpi") => VertexKind::Site,
        other => return Err(format!("structure tree vertex {id} has kind {other:?}")),
    };
    out.push((kind, parent));
    let loc = v.get("loc").and_then(|l| {
        let file = l.get("file")?.as_str()?;
        Some(format!("{file}:{}", l.get("line")?.as_u64()?))
    });
    locs.push(loc);
    if let Some(children) = v.get("children").and_then(|c| c.as_array()) {
        for c in children {
            collect(c, id, out, locs)?;
        }
    }
    Ok(())
}

/// One thread's tree: where its first tree call falls among its grammar's calls, and its
/// record at each vertex (an index into [`Forest::vertices`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TreeRef {
    /// Grammar-path calls before the tree's first call.
    pub leading_foreign: u64,
    /// Record index per vertex.
    pub records: Vec<u32>,
}

/// Trace trees of many threads over one structure tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Forest {
    /// The structure tree.
    pub structure: Structure,
    /// Per vertex (pre-order), its distinct records, over global terminals.
    pub vertices: Vec<Vec<VertexRecord>>,
    /// Distinct thread trees.
    pub trees: Vec<TreeRef>,
}

impl Forest {
    /// No trees yet.
    pub fn new(structure: Structure) -> Forest {
        let n = structure.shape.len();
        Forest {
            structure,
            vertices: vec![Vec::new(); n],
            trees: Vec::new(),
        }
    }

    /// The records of tree `tree`, by vertex.
    pub fn records(&self, tree: u32) -> Vec<&VertexRecord> {
        self.trees[tree as usize]
            .records
            .iter()
            .zip(&self.vertices)
            .map(|(&r, records)| &records[r as usize])
            .collect()
    }

    /// The terminals of a thread with tree `tree` and grammar `grammar` (its calls outside
    /// the tree), in call order.
    pub fn expand<'a>(
        &'a self,
        tree: u32,
        grammar: &'a FrozenGrammar,
    ) -> Expand<'a, conifer_compress::Expand<'a>> {
        let records = self.records(tree);
        Expand::new(
            &self.structure.shape,
            &records,
            self.trees[tree as usize].leading_foreign,
            grammar.expand(),
        )
    }

    /// Summaries of every record, by vertex: what [`Forest::check`] needs, computed once.
    pub fn summaries(&self) -> Vec<Vec<RecordSummary>> {
        self.vertices
            .iter()
            .map(|records| records.iter().map(VertexRecord::summary).collect())
            .collect()
    }

    /// Checks tree `tree` against its thread's grammar and a table of `terminals`, given the
    /// records' [`Forest::summaries`]; returns the calls the tree holds.
    pub fn check(
        &self,
        summaries: &[Vec<RecordSummary>],
        tree: u32,
        grammar: &FrozenGrammar,
        terminals: u64,
    ) -> Result<u64, String> {
        let t = self
            .trees
            .get(tree as usize)
            .ok_or_else(|| format!("a rank refers to trace tree {tree}, which does not exist"))?;
        let records: Vec<&RecordSummary> = t
            .records
            .iter()
            .zip(summaries)
            .map(|(&r, per_vertex)| &per_vertex[r as usize])
            .collect();
        validate(
            &self.structure.shape,
            &records,
            t.leading_foreign,
            grammar.len(),
            terminals,
        )
    }

    /// How often each terminal occurs in tree `tree`'s calls (not its grammar's).
    pub fn terminal_counts(&self, tree: u32) -> FastMap<u32, u64> {
        let mut counts = FastMap::default();
        for r in self.records(tree) {
            for (t, n) in r.terminals.value_counts() {
                *counts.entry(t as u32).or_insert(0) += n;
            }
        }
        counts
    }

    /// Calls tree `tree` holds.
    pub fn calls(&self, tree: u32) -> u64 {
        self.records(tree).iter().map(|r| r.terminals.len()).sum()
    }
}
