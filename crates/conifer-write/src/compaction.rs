//! Drops from a record the grammars no thread uses and, without trace trees, the signatures
//! no thread uses, renumbering what stays; timing statistics of a dropped signature go to
//! the signature that replaced it.

use crate::merge::pool_timing;
use crate::rank_codes::terminals_by_rank;
use conifer_compress::fast_hash::FastMap;
use conifer_format::stored::TraceRecord;

/// Renumbers `m` without its unused grammars and signatures; `image[t]` is the terminal
/// that stands for a dropped terminal `t` (its timing statistics are pooled there).
pub(crate) fn drop_unused(m: &mut TraceRecord, image: &FastMap<u32, u32>) {
    let mut grammar_ids: FastMap<u32, u32> = FastMap::default();
    let mut grammars = Vec::new();
    for entry in &mut m.ranks {
        for g in &mut entry.threads {
            *g = *grammar_ids.entry(*g).or_insert_with(|| {
                grammars.push(m.grammars[*g as usize].clone());
                grammars.len() as u32 - 1
            });
        }
    }
    m.grammars = grammars;
    if m.forest.is_some() {
        return;
    }
    let mut used = vec![false; m.signatures.len()];
    terminals_by_rank(m)
        .iter()
        .flatten()
        .for_each(|&t| used[t as usize] = true);
    for set in &m.streams {
        set.entries
            .iter()
            .for_each(|(t, _)| used[*t as usize] = true);
    }
    let mut map: Vec<Option<u32>> = vec![None; m.signatures.len()];
    let mut signatures = Vec::new();
    for (t, bytes) in std::mem::take(&mut m.signatures).into_iter().enumerate() {
        if used[t] {
            map[t] = Some(signatures.len() as u32);
            signatures.push(bytes);
        }
    }
    let renumber = |t: u32| map[t as usize].expect("a used terminal");
    m.grammars = m
        .grammars
        .iter()
        .map(|g| g.map_terminals(renumber))
        .collect();
    m.streams = m
        .streams
        .iter()
        .map(|s| s.map_terminals(renumber))
        .collect();
    m.signatures = signatures;
    let timing = std::mem::take(&mut m.timing)
        .into_iter()
        .filter_map(|mut family| {
            let t = family.terminal;
            family.terminal = map[t as usize].or_else(|| map[*image.get(&t)? as usize])?;
            Some(family)
        });
    let mut pooled = Vec::new();
    pool_timing(&mut pooled, &m.signatures, timing);
    m.timing = pooled;
}
