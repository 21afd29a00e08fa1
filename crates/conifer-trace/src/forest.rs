//! The trace trees of a run whose binary carries a structure tree (built by `conifer cc`,
//! `cxx` or `fc`): the structure tree itself, and per vertex the distinct records the ranks'
//! threads left there. A thread's tree is one record index per vertex, so merging ranks is a
//! vertex-by-vertex walk that stores equal vertex records once (CYPRESS §IV-B), and the
//! calls its tree did not hold stay in the thread's grammar, decoded in their place.

use crate::intern::intern;
use conifer_compress::fast_hash::FastMap;
use conifer_compress::tree::{
    validate, Expand, RecordSummary, Shape, TreeRecord, VertexKind, VertexRecord, MAX_VERTICES,
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

    /// Adds one thread's tree, returning its index (an equal tree already there is reused).
    pub fn add(&mut self, tree: TreeRecord) -> u32 {
        let records = tree
            .vertices
            .into_iter()
            .zip(&mut self.vertices)
            .map(|(record, known)| intern(known, [record])[0])
            .collect();
        intern(
            &mut self.trees,
            [TreeRef {
                leading_foreign: tree.leading_foreign,
                records,
            }],
        )[0]
    }

    /// Joins `other`'s trees (over the same structure), renaming terminals by `terminals`;
    /// returns the index each of `other`'s trees has here. Vertex by vertex, each record is
    /// looked up by hash: linear in the records.
    pub fn absorb(&mut self, other: Forest, terminals: &[u32]) -> Vec<u32> {
        let maps: Vec<Vec<u32>> = other
            .vertices
            .into_iter()
            .zip(&mut self.vertices)
            .map(|(records, known)| {
                let renamed = records
                    .into_iter()
                    .map(|r| r.map_terminals(|t| terminals[t as usize]));
                intern(known, renamed)
            })
            .collect();
        let trees = other.trees.into_iter().map(|t| TreeRef {
            leading_foreign: t.leading_foreign,
            records: t
                .records
                .iter()
                .zip(&maps)
                .map(|(&r, map)| map[r as usize])
                .collect(),
        });
        intern(&mut self.trees, trees)
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

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_compress::tree::TreeBuilder;
    use conifer_compress::Grammar;

    /// root { Init(1), loop(2) { Send(3) }, Finalize(4) } as `conifer tree --json` prints it.
    const JSON: &str = r#"{"id":0,"kind":"root","children":[
        {"id":1,"kind":"mpi","name":"MPI_Init"},
        {"id":2,"kind":"loop","children":[{"id":3,"kind":"mpi","name":"MPI_Send"}]},
        {"id":4,"kind":"mpi","name":"MPI_Finalize"}]}"#;

    fn run(structure: &Structure, sends: u32, send: u32) -> TreeRecord {
        let mut b = TreeBuilder::new(Arc::clone(&structure.shape), 4);
        b.call(Some(1), 0);
        for _ in 0..sends {
            b.activate(2);
            b.call(Some(3), send);
        }
        b.call(Some(4), 2);
        b.record()
    }

    /// Rank `i`'s record: local terminals numbered in a rank-dependent order, a tree whose
    /// loop runs a rank-dependent number of times, one call outside the tree.
    fn rank_record(structure: &Structure, i: u32) -> crate::rank_record::RankRecord {
        let names = ["init", "send", "fin", "probe"];
        let order: Vec<usize> = (0..4).map(|k| (k + i as usize) % 4).collect();
        let local = |name: &str| order.iter().position(|&k| names[k] == name).unwrap() as u32;
        let mut b = TreeBuilder::new(Arc::clone(&structure.shape), 4);
        let mut foreign = Grammar::new();
        b.call(Some(1), local("init"));
        for _ in 0..(3 + i % 3) {
            b.activate(2);
            b.call(Some(3), local("send"));
        }
        if !b.call(None, local("probe")) {
            foreign.push(local("probe"));
        }
        b.call(Some(4), local("fin"));
        crate::rank_record::RankRecord {
            signatures: order
                .iter()
                .map(|&k| names[k].as_bytes().to_vec())
                .collect(),
            timing: vec![Default::default(); 4],
            grammars: vec![foreign.freeze()],
            structure: Some(structure.clone()),
            trees: vec![Some(b.record())],
            ..Default::default()
        }
    }

    #[test]
    fn pairwise_tree_merges_give_the_sequential_result() {
        let s = Structure::from_json(JSON.as_bytes()).unwrap();
        let input = |i: u32| (rank_record(&s, i), vec![(0, 1)], "h".to_string());
        let sequential = crate::merge::merge((0..7).map(input).collect());
        let left = crate::merge::merge_seven_in_tree_order(input);
        assert_eq!(left.signatures, sequential.signatures);
        assert_eq!(left.ranks, sequential.ranks);
        assert_eq!(left.forest, sequential.forest);
        // Three loop lengths, so three distinct trees; every rank decodes its own calls.
        assert_eq!(left.forest.as_ref().unwrap().trees.len(), 3);
        for (i, entry) in left.ranks.iter().enumerate() {
            let calls: Vec<&[u8]> = left
                .thread_terminals(entry, 0)
                .map(|t| left.signatures[t as usize].as_slice())
                .collect();
            let mut expected: Vec<&[u8]> = vec![b"init"];
            expected.extend(std::iter::repeat_n(b"send".as_slice(), 3 + i % 3));
            expected.extend([b"probe".as_slice(), b"fin"]);
            assert_eq!(calls, expected, "rank {i}");
        }
    }

    #[test]
    fn structure_json_gives_the_shape() {
        let s = Structure::from_json(JSON.as_bytes()).unwrap();
        assert_eq!(s.shape.len(), 5);
        assert_eq!(s.shape.children(2), &[3]);
        assert_eq!(s.shape.kind(4), VertexKind::Site);
        let bad = JSON.replace(r#""id":2"#, r#""id":7"#);
        assert!(Structure::from_json(bad.as_bytes()).is_err());
        assert!(Structure::from_json(b"{").is_err());
    }

    #[test]
    fn equal_vertex_records_are_stored_once_across_threads_and_merges() {
        let s = Structure::from_json(JSON.as_bytes()).unwrap();
        let mut left = Forest::new(s.clone());
        let a = left.add(run(&s, 10, 1));
        let b = left.add(run(&s, 10, 1));
        assert_eq!(a, b);
        let mut right = Forest::new(s.clone());
        // Same shape of run, 12 iterations; its local terminal 1 is the global 1.
        right.add(run(&s, 12, 1));
        let map = left.absorb(right, &[0, 1, 2]);
        assert_eq!(map, vec![1]);
        // Init, Finalize and the Send's terminals are shared; the loop counts and the
        // Send's call counts differ.
        let distinct: Vec<usize> = left.vertices.iter().map(Vec::len).collect();
        assert_eq!(distinct, vec![1, 1, 2, 2, 1]);
        let empty = Grammar::new().freeze();
        assert_eq!(left.check(&left.summaries(), 1, &empty, 3), Ok(14));
        let calls: Vec<u32> = left.expand(1, &empty).collect();
        let mut expected = vec![0];
        expected.extend([1; 12]);
        expected.push(2);
        assert_eq!(calls, expected);
        assert_eq!(left.terminal_counts(1)[&1], 12);
    }

    #[test]
    fn files_keep_only_the_visited_vertices_with_their_ids_and_positions() {
        // Vertices 4 and 5 (a branch arm and its Recv) are never reached. The last vertex's
        // file index is larger than the bytes left after it (read as a value, not a count).
        let json = r#"{"id":0,"kind":"root","children":[
            {"id":1,"kind":"mpi","loc":{"file":"a.c","line":3}},
            {"id":2,"kind":"loop","loc":{"file":"a.c","line":6},
             "children":[{"id":3,"kind":"mpi","loc":{"file":"b.c","line":7}}]},
            {"id":4,"kind":"branch","children":[{"id":5,"kind":"mpi","loc":{"file":"a.c","line":9}}]},
            {"id":6,"kind":"mpi","loc":{"file":"b.c","line":12}}]}"#;
        let s = Structure::from_json(json.as_bytes()).unwrap();
        let mut b = TreeBuilder::new(Arc::clone(&s.shape), 4);
        b.call(Some(1), 0);
        for _ in 0..5 {
            b.activate(2);
            b.call(Some(3), 1);
        }
        b.call(Some(6), 2);
        let record = crate::rank_record::RankRecord {
            signatures: vec![b"init".to_vec(), b"send".to_vec(), b"fin".to_vec()],
            timing: vec![Default::default(); 3],
            grammars: vec![Grammar::new().freeze()],
            structure: Some(s.clone()),
            trees: vec![Some(b.record())],
            ..Default::default()
        };
        let merged = crate::merge::merge(vec![(record, vec![(0, 7)], "h".into())]);
        let sections = crate::record_codec::encode_record(&merged, true);
        let back = crate::record_codec::decode_record(&sections, 0).unwrap();
        let forest = back.forest.as_ref().unwrap();
        assert_eq!(forest.structure.ids.as_slice(), &[0, 1, 2, 3, 6]);
        let locs: Vec<Option<&str>> = forest.structure.locs.iter().map(|l| l.as_deref()).collect();
        assert_eq!(
            locs,
            [
                None,
                Some("a.c:3"),
                Some("a.c:6"),
                Some("b.c:7"),
                Some("b.c:12")
            ]
        );
        let calls = |m: &crate::stored::TraceRecord| -> Vec<(u32, Option<u32>)> {
            let mut t = m.thread_terminals(&m.ranks[0], 0);
            std::iter::from_fn(|| {
                let terminal = t.next()?;
                let site = t
                    .site()
                    .map(|v| m.forest.as_ref().unwrap().structure.ids[v as usize]);
                Some((terminal, site))
            })
            .collect()
        };
        let mut expected = vec![(0, Some(1))];
        expected.extend([(1, Some(3)); 5]);
        expected.push((2, Some(6)));
        assert_eq!(calls(&back), expected);
        assert_eq!(calls(&merged), expected);
    }

    #[test]
    fn value_streams_follow_a_trace_trees_call_order() {
        // Init, then 12 Sends whose count changes every time (a streamed family), one call
        // outside the tree after the sixth, Finalize.
        let s = Structure::from_json(JSON.as_bytes()).unwrap();
        let send = |count: i64| {
            conifer_format::signature::encode_signature(&conifer_format::signature::Signature {
                function: 1,
                thread: 0,
                caller: None,
                values: vec![conifer_format::value::Value::Int(count)],
                ret: 0,
            })
        };
        let mut signatures = vec![b"init".to_vec(), b"fin".to_vec(), b"probe".to_vec()];
        signatures.extend((0..12).map(|i| send(100 + 7 * i)));
        let mut b = TreeBuilder::new(Arc::clone(&s.shape), 4);
        let mut foreign = Grammar::new();
        let mut calls = vec![0u32];
        b.call(Some(1), 0);
        for i in 0..12 {
            b.activate(2);
            b.call(Some(3), 3 + i);
            calls.push(3 + i);
            if i == 5 {
                assert!(!b.call(None, 2));
                foreign.push(2);
                calls.push(2);
            }
        }
        b.call(Some(4), 1);
        calls.push(1);
        let record = crate::rank_record::RankRecord {
            timing: vec![Default::default(); signatures.len()],
            signatures: signatures.clone(),
            grammars: vec![foreign.freeze()],
            structure: Some(s.clone()),
            trees: vec![Some(b.record())],
            ..Default::default()
        };
        let m = crate::merge::merge(vec![(record, vec![(0, 15)], "h".into())]);
        assert_eq!(
            m.signatures.len(),
            4,
            "the twelve sends became one skeleton"
        );
        assert_eq!(m.streams.len(), 1);
        let trace = crate::Trace {
            meta: crate::Metadata {
                conifer_version: "0.1.0".into(),
                mpi: "openmpi".into(),
                mpi_library_version: String::new(),
                command_line: Vec::new(),
                ranks: 1,
                start_unix_seconds: 0.0,
                partial: false,
                missing_ranks: Vec::new(),
                options: Vec::new(),
                partial_reasons: Vec::new(),
                modules: Vec::new(),
            },
            catalog: Vec::new(),
            record: m,
        };
        let back = crate::Trace::from_bytes(&trace.to_bytes()).unwrap();
        let decoded: Vec<Vec<u8>> = back
            .thread_sequences(0)
            .remove(0)
            .map(|c| c.into_owned())
            .collect();
        let expected: Vec<Vec<u8>> = calls
            .iter()
            .map(|&t| signatures[t as usize].clone())
            .collect();
        assert_eq!(decoded, expected);
    }
}
