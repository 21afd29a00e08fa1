//! The compact form a file stores the structure tree in: only the vertices the run visited (a
//! real program's tree has thousands of vertices, most never reached), in binary, each with its
//! id in the binary's tree and its source position. Vertices never activated hold no calls, so
//! leaving them (and their all-zero records) out changes nothing a reader decodes.

use crate::forest::{Forest, Structure};
use crate::varint::{put_i64, put_u64, Reader};
use conifer_compress::tree::{Shape, VertexKind};
use std::collections::HashMap;
use std::sync::Arc;

/// The vertices of `forest` some thread activated, with their ancestors, in pre-order.
pub fn visited(forest: &Forest) -> Vec<u32> {
    let shape = &forest.structure.shape;
    let mut keep = vec![false; shape.len()];
    keep[0] = true;
    for (v, records) in forest.vertices.iter().enumerate().skip(1) {
        if records.iter().any(|r| r.counts.summary().sum > 0) {
            let mut u = v as u32;
            while !keep[u as usize] {
                keep[u as usize] = true;
                u = shape.parent(u);
            }
        }
    }
    (0..shape.len() as u32)
        .filter(|&v| keep[v as usize])
        .collect()
}

fn kind_code(kind: VertexKind) -> u64 {
    match kind {
        VertexKind::Root => 0,
        VertexKind::Loop => 1,
        VertexKind::Branch => 2,
        VertexKind::Site => 3,
    }
}

/// The compact form of `structure` restricted to `kept` (pre-order, starting with the root):
/// the vertex count, the distinct source files, then per vertex the gap from the previous
/// kept id, `kind | (distance to its parent) << 2`, and its position (0, or 1 + file index
/// and the zigzag difference from the previous line given).
pub fn encode(structure: &Structure, kept: &[u32]) -> Vec<u8> {
    let shape = &structure.shape;
    let ids = &structure.ids;
    let position: HashMap<u32, usize> = kept.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    let mut files: Vec<&str> = Vec::new();
    let split = |loc: &'_ Option<String>| -> Option<(String, i64)> {
        let (file, line) = loc.as_deref()?.rsplit_once(':')?;
        Some((file.to_string(), line.parse().ok()?))
    };
    let locs: Vec<Option<(String, i64)>> = kept
        .iter()
        .map(|&v| split(&structure.locs[v as usize]))
        .collect();
    for (file, _) in locs.iter().flatten() {
        if !files.contains(&file.as_str()) {
            files.push(file);
        }
    }
    let mut out = Vec::new();
    put_u64(&mut out, kept.len() as u64);
    put_u64(&mut out, files.len() as u64);
    for f in &files {
        put_u64(&mut out, f.len() as u64);
        out.extend_from_slice(f.as_bytes());
    }
    let (mut previous_id, mut previous_line) = (0u32, 0i64);
    for (i, (&v, loc)) in kept.iter().zip(&locs).enumerate() {
        let id = ids[v as usize];
        put_u64(&mut out, u64::from(id - previous_id));
        previous_id = id;
        let parent_distance = if i == 0 {
            0
        } else {
            (i - position[&shape.parent(v)]) as u64
        };
        put_u64(&mut out, kind_code(shape.kind(v)) | parent_distance << 2);
        match loc {
            None => put_u64(&mut out, 0),
            Some((file, line)) => {
                let index = files.iter().position(|f| f == file).expect("listed");
                put_u64(&mut out, index as u64 + 1);
                put_i64(&mut out, line - previous_line);
                previous_line = *line;
            }
        }
    }
    out
}

/// Reads what [`encode`] wrote.
pub fn decode(bytes: &[u8]) -> Result<Structure, String> {
    let bad = || "corrupt compact structure tree".to_string();
    let mut r = Reader::new(bytes);
    let n = r.count().ok_or_else(bad)?;
    let file_count = r.count().ok_or_else(bad)?;
    let files = (0..file_count)
        .map(|_| {
            let len = r.count()?;
            Some(String::from_utf8_lossy(r.take(len)?).into_owned())
        })
        .collect::<Option<Vec<String>>>()
        .ok_or_else(bad)?;
    // Each vertex takes at least three bytes: bounds the allocation on corrupt input.
    if n.saturating_mul(3) > r.remaining() {
        return Err(bad());
    }
    let (mut vertices, mut ids, mut locs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut id, mut line) = (0u32, 0i64);
    for i in 0..n {
        id = id
            .checked_add(r.u32().ok_or_else(bad)?)
            .filter(|&next| i == 0 || next > *ids.last().expect("one before"))
            .ok_or_else(bad)?;
        let code = r.u64().ok_or_else(bad)?;
        let kind = match code & 3 {
            0 => VertexKind::Root,
            1 => VertexKind::Loop,
            2 => VertexKind::Branch,
            _ => VertexKind::Site,
        };
        let distance = usize::try_from(code >> 2).map_err(|_| bad())?;
        let parent = i.checked_sub(distance).filter(|_| i == 0 || distance > 0);
        vertices.push((kind, parent.ok_or_else(bad)? as u32));
        ids.push(id);
        let loc = match r.u64().ok_or_else(bad)? {
            0 => None,
            f => {
                line += r.i64().ok_or_else(bad)?;
                let file = usize::try_from(f - 1).ok().and_then(|f| files.get(f));
                Some(format!("{}:{line}", file.ok_or_else(bad)?))
            }
        };
        locs.push(loc);
    }
    if r.remaining() != 0 {
        return Err(bad());
    }
    Ok(Structure {
        json: bytes.to_vec(),
        shape: Arc::new(Shape::new(&vertices)?),
        locs: Arc::new(locs),
        ids: Arc::new(ids),
    })
}
