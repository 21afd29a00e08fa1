//! Building trace trees: a thread's tree into a rank's [`Forest`], and one rank range's forest
//! into another's. Equal vertex records are stored once per vertex and equal trees once
//! (CYPRESS §IV-B), so merging ranks is a vertex-by-vertex walk linear in the records.

use crate::intern::intern;
use conifer_compress::tree::TreeRecord;
use conifer_format::forest::{Forest, TreeRef};

/// Adds one thread's tree to `forest`, returning its index (an equal tree already there is
/// reused).
pub fn add_tree(forest: &mut Forest, tree: TreeRecord) -> u32 {
    let records = tree
        .vertices
        .into_iter()
        .zip(&mut forest.vertices)
        .map(|(record, known)| intern(known, [record])[0])
        .collect();
    intern(
        &mut forest.trees,
        [TreeRef {
            leading_foreign: tree.leading_foreign,
            records,
        }],
    )[0]
}

/// Joins `other`'s trees into `forest` (over the same structure), renaming terminals by `terminals`;
/// returns the index each of `other`'s trees has here. Vertex by vertex, each record is
/// looked up by hash: linear in the records.
pub fn absorb_forest(forest: &mut Forest, other: Forest, terminals: &[u32]) -> Vec<u32> {
    let maps: Vec<Vec<u32>> = other
        .vertices
        .into_iter()
        .zip(&mut forest.vertices)
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
    intern(&mut forest.trees, trees)
}
