//! The section that holds a record's trace trees, `TREE`, in three parts: the structure tree
//! (the binary's JSON in merge messages, the visited part in compact form in files), the
//! distinct records of each vertex and the distinct thread trees, and rank → tree of each
//! thread (a column, like `RMAP`); zstd-compressed when smaller. Present only when the program
//! carries a structure tree.

use crate::columns::{put_column, read_column};
use crate::container::{find_section, FormatError, Section};
use crate::forest::{Forest, Structure, TreeRef, NO_TREE};
use crate::packing::{pack_if_smaller, unpack};
use crate::stored::TraceRecord;
use crate::varint::{put_u64, Reader};
use conifer_compress::tree::VertexRecord;

/// Tag of the trace-tree section.
pub(crate) const TREES: [u8; 4] = *b"TREE";

fn malformed(what: &str) -> FormatError {
    FormatError::Malformed(format!("{what} section is inconsistent"))
}

/// Structure-tree part forms: the binary's JSON (merge messages), the compact visited part (files).
const STRUCTURE_JSON: u8 = 0;
const STRUCTURE_COMPACT: u8 = 1;

/// The sections of `forest`, with the tree of each thread of each of `ranks`; `compress`
/// zstd-compresses them (files), else they stay quick to write and read (merge messages).
pub fn encode(forest: &Forest, ranks: &[Vec<u32>], compress: bool) -> Vec<Section> {
    let json = forest.structure.json.first() == Some(&b'{');
    // Files keep the visited vertices only, in the compact form; messages the whole JSON.
    let kept: Vec<u32> = if compress {
        crate::structure_codec::visited(forest)
    } else {
        (0..forest.vertices.len() as u32).collect()
    };
    let mut structure = Vec::new();
    if compress || !json {
        structure.push(STRUCTURE_COMPACT);
        structure.extend(crate::structure_codec::encode(&forest.structure, &kept));
    } else {
        structure.push(STRUCTURE_JSON);
        structure.extend_from_slice(&forest.structure.json);
    }
    let mut trees = Vec::new();
    for &v in &kept {
        let records = &forest.vertices[v as usize];
        put_u64(&mut trees, records.len() as u64);
        records.iter().for_each(|r| r.encode(&mut trees));
    }
    put_u64(&mut trees, forest.trees.len() as u64);
    for t in &forest.trees {
        put_u64(&mut trees, t.leading_foreign);
    }
    // Vertex by vertex: trees mostly agree at a vertex, which compresses well.
    for &v in &kept {
        for t in &forest.trees {
            put_u64(&mut trees, t.records[v as usize].into());
        }
    }
    let mut map = Vec::new();
    put_column(&mut map, ranks, |o, threads| {
        put_u64(o, threads.len() as u64);
        // NO_TREE is stored as 0, tree i as i + 1.
        threads
            .iter()
            .for_each(|&t| put_u64(o, u64::from(t.wrapping_add(1))));
    });
    // One section: its parts share one compression frame and one section header.
    let mut payload = Vec::new();
    for part in [&structure, &trees] {
        put_u64(&mut payload, part.len() as u64);
        payload.extend_from_slice(part);
    }
    payload.extend_from_slice(&map);
    vec![Section {
        tag: TREES,
        payload: pack_if_smaller(payload, compress),
    }]
}

/// The parts of a `TREE` section: structure, trees, rank map.
fn split_parts(payload: &[u8]) -> Result<[&[u8]; 3], FormatError> {
    let mut r = Reader::new(payload);
    let structure_len = r.count().ok_or_else(|| malformed("TREE"))?;
    let structure = r.take(structure_len).ok_or_else(|| malformed("TREE"))?;
    let trees_len = r.count().ok_or_else(|| malformed("TREE"))?;
    let trees = r.take(trees_len).ok_or_else(|| malformed("TREE"))?;
    let map = r.take(r.remaining()).ok_or_else(|| malformed("TREE"))?;
    Ok([structure, trees, map])
}

/// The forest of `sections` (none when they hold no `TREE`) and each of `ranks` ranks'
/// thread trees.
pub fn decode(
    sections: &[Section],
    ranks: usize,
) -> Result<(Option<Forest>, Vec<Vec<u32>>), FormatError> {
    let Ok(packed) = find_section(sections, TREES) else {
        return Ok((None, vec![Vec::new(); ranks]));
    };
    let payload = unpack(packed, "TREE")?;
    let [content, unpacked, map_bytes] = split_parts(&payload)?;
    let structure = match content.split_first() {
        Some((&STRUCTURE_JSON, json)) => Structure::from_json(json),
        Some((&STRUCTURE_COMPACT, compact)) => crate::structure_codec::decode(compact),
        _ => Err("unknown form".to_string()),
    }
    .map_err(|e| FormatError::Malformed(format!("TREE section's structure tree: {e}")))?;
    let n = structure.shape.len();
    let mut bytes: &[u8] = unpacked;
    let bad = |_| malformed("TREE");
    let mut vertices = Vec::with_capacity(n);
    for _ in 0..n {
        let mut r = Reader::new(bytes);
        let count = r.count().ok_or_else(|| malformed("TREE"))?;
        bytes = &bytes[bytes.len() - r.remaining()..];
        let records = (0..count)
            .map(|_| VertexRecord::decode(&mut bytes))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        vertices.push(records);
    }
    let mut r = Reader::new(bytes);
    let count = r.count().ok_or_else(|| malformed("TREE"))?;
    if count.saturating_mul(n) > r.remaining() {
        return Err(malformed("TREE"));
    }
    let mut trees = (0..count)
        .map(|_| {
            Some(TreeRef {
                leading_foreign: r.u64()?,
                records: Vec::with_capacity(n),
            })
        })
        .collect::<Option<Vec<TreeRef>>>()
        .ok_or_else(|| malformed("TREE"))?;
    for records in &vertices {
        for tree in &mut trees {
            let record = r
                .u32()
                .filter(|&i| (i as usize) < records.len())
                .ok_or_else(|| malformed("TREE"))?;
            tree.records.push(record);
        }
    }
    if r.remaining() != 0 {
        return Err(malformed("TREE"));
    }
    let mut map = Reader::new(map_bytes);
    let per_rank = read_column(&mut map, ranks, |r| {
        let n = r.count()?;
        (0..n)
            .map(|_| Some(r.u32()?.wrapping_sub(1)))
            .collect::<Option<Vec<u32>>>()
    })
    .ok_or_else(|| malformed("TREE"))?;
    if map.remaining() != 0 {
        return Err(malformed("TREE"));
    }
    let forest = Forest {
        structure,
        vertices,
        trees,
    };
    Ok((Some(forest), per_rank))
}

/// Rejects trees that refer to trees, grammars or terminals that do not exist, or whose
/// records do not form a walkable tree with their thread's grammar.
pub fn check(m: &TraceRecord) -> Result<(), FormatError> {
    let Some(forest) = &m.forest else {
        return match m.ranks.iter().all(|r| r.trees.is_empty()) {
            true => Ok(()),
            false => Err(malformed("TREE")),
        };
    };
    let summaries = forest.summaries();
    let mut checked = std::collections::HashSet::new();
    for rank in &m.ranks {
        if rank.trees.len() != rank.threads.len() {
            return Err(malformed("TREE"));
        }
        for (&tree, &grammar) in rank.trees.iter().zip(&rank.threads) {
            if tree == NO_TREE || !checked.insert((tree, grammar)) {
                continue;
            }
            forest
                .check(
                    &summaries,
                    tree,
                    &m.grammars[grammar as usize],
                    m.signatures.len() as u64,
                )
                .map_err(|e| FormatError::Malformed(format!("TREE section: {e}")))?;
        }
    }
    Ok(())
}
