//! How each rank field is stored, chosen once all ranks are merged so that the most ranks
//! agree. The recorder writes peers relative to the caller; here, per *signature family*
//! (signatures equal but for their relative rank fields and the integers that follow the rank:
//! see `rank_families`) and per field, every candidate code
//! — relative, a fixed rank, modular displacement, xor, transpose on a q × q grid, displacement
//! on a torus inferred from the communicator's size, a step along one periodic dimension of a
//! grid inferred from the field's offsets — is tried on every (caller, peer) pair the
//! ranks recorded, and the one with the fewest distinct values wins (ties keep the recorded
//! code). A pair a code cannot name exactly keeps its relative value, so nothing is lost, and
//! every code names its peer from the caller's rank alone ([`Rank::peer_of`]), so decoding is
//! exact. Signatures, grammars and trace trees are then renamed rank by rank, and ranks whose
//! calls now agree share them.

use crate::intern::intern;
use crate::rank_families::{for_each_field, rankful_signatures, Field, Rankful};
use conifer_compress::fast_hash::{FastMap, FastSet};
use conifer_format::forest::{Forest, TreeRef, NO_TREE};
use conifer_format::signature::{encode_signature, Signature};
use conifer_format::stored::{TraceRecord, NO_STREAMS};
use conifer_format::value::Rank;
use std::collections::BTreeMap;

/// The codes tried, in order of preference on ties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Candidate {
    Relative,
    Fixed,
    Modular,
    Xor,
    Transpose,
    Torus,
    /// One periodic dimension of a grid, inferred from the field's offsets ([`ring_of`]).
    Ring {
        stride: i64,
        size: i64,
    },
}

const CANDIDATES: [Candidate; 6] = [
    Candidate::Relative,
    Candidate::Fixed,
    Candidate::Modular,
    Candidate::Xor,
    Candidate::Transpose,
    Candidate::Torus,
];

/// The code `candidate` gives the peer `peer` of caller `me` in a communicator of `n` ranks,
/// when it names that peer exactly.
fn code(candidate: Candidate, me: i64, peer: i64, n: i64) -> Option<Rank> {
    let rank = match candidate {
        Candidate::Relative => Rank::Relative(peer - me),
        Candidate::Fixed => Rank::Fixed(peer),
        Candidate::Modular => Rank::Modular {
            n,
            d: (peer - me).rem_euclid(n.max(1)),
        },
        Candidate::Xor => Rank::Xor(me ^ peer),
        Candidate::Transpose => Rank::Transpose(exact_sqrt(n)?),
        Candidate::Ring { stride, size } => {
            let x = me.div_euclid(stride).rem_euclid(size);
            let y = peer.div_euclid(stride).rem_euclid(size);
            Rank::Ring {
                stride,
                size,
                step: (y - x).rem_euclid(size),
            }
        }
        Candidate::Torus => {
            let (rows, cols) = torus_dims(n)?;
            Rank::Torus {
                rows,
                cols,
                dy: (peer.div_euclid(cols) - me.div_euclid(cols)).rem_euclid(rows),
                dx: (peer.rem_euclid(cols) - me.rem_euclid(cols)).rem_euclid(cols),
            }
        }
    };
    let in_range = (0..n).contains(&me) && (0..n).contains(&peer);
    let exact = rank.peer_of(me) == Some(peer);
    (exact && (in_range || candidate == Candidate::Relative)).then_some(rank)
}

/// The periodic dimension a field's distinct offsets `offsets` (sorted) suggest: one step
/// `s` one way on most ranks, and the wrap-around (size − 1)·`s` the other way on the edge
/// (`{+1, −3}`: a dimension of 4 places, stride 1; `{−12, +4}`: 4 places, stride 4).
fn ring_of(offsets: &[i64]) -> Option<Candidate> {
    let [low, high] = offsets else {
        return None;
    };
    if *low >= 0 || *high <= 0 {
        return None;
    }
    let stride = (-low).min(*high);
    let span = high - low;
    (span % stride == 0 && span / stride >= 2).then_some(Candidate::Ring {
        stride,
        size: span / stride,
    })
}

fn exact_sqrt(n: i64) -> Option<i64> {
    let q = (n as f64).sqrt().round() as i64;
    (q > 1 && q * q == n).then_some(q)
}

/// The two-dimensional grid `MPI_Dims_create(n, 2)` gives: rows ≥ columns, as square as `n`
/// allows; `None` when `n` has no such grid with more than one column.
fn torus_dims(n: i64) -> Option<(i64, i64)> {
    let cols = (2..=(n as f64).sqrt() as i64).rev().find(|c| n % c == 0)?;
    Some((n / cols, cols))
}

/// Every rank's position in each communicator and group it belongs to, and each context's
/// size (the ranks that belong to it).
struct Contexts<'a> {
    my_rank: Vec<FastMap<&'a [u8], i64>>,
    size: FastMap<&'a [u8], i64>,
}

impl<'a> Contexts<'a> {
    fn of(m: &'a TraceRecord) -> Contexts<'a> {
        let my_rank: Vec<FastMap<&[u8], i64>> = m
            .ranks
            .iter()
            .map(|r| {
                r.comms
                    .iter()
                    .map(|c| (c.comm.as_slice(), c.my_rank))
                    .collect()
            })
            .collect();
        let mut size: FastMap<&[u8], i64> = FastMap::default();
        for ranks in &my_rank {
            for &key in ranks.keys() {
                *size.entry(key).or_insert(0) += 1;
            }
        }
        Contexts { my_rank, size }
    }

    /// (caller's rank, context size) of rank `rank` for `field`.
    fn position(&self, rank: usize, field: &Field) -> Option<(i64, i64)> {
        let key = field.context.as_slice();
        Some((*self.my_rank[rank].get(key)?, *self.size.get(key)?))
    }
}

/// The terminals each rank's threads use (grammars and trace trees).
pub(crate) fn terminals_by_rank(m: &TraceRecord) -> Vec<Vec<u32>> {
    let mut grammar_terms: FastMap<u32, Vec<u32>> = FastMap::default();
    let mut tree_terms: FastMap<u32, Vec<u32>> = FastMap::default();
    m.ranks
        .iter()
        .map(|entry| {
            let mut used: Vec<u32> = Vec::new();
            for &g in &entry.threads {
                let terms = grammar_terms.entry(g).or_insert_with(|| {
                    m.grammars[g as usize]
                        .terminal_counts()
                        .into_keys()
                        .collect()
                });
                used.extend(terms.iter());
            }
            if let Some(forest) = &m.forest {
                for &tree in entry.trees.iter().filter(|&&t| t != NO_TREE) {
                    let terms = tree_terms
                        .entry(tree)
                        .or_insert_with(|| forest.terminal_counts(tree).into_keys().collect());
                    used.extend(terms.iter());
                }
            }
            used.sort_unstable();
            used.dedup();
            used
        })
        .collect()
}

/// Per family and field, the candidate chosen.
type Choices = FastMap<(usize, usize), Candidate>;

/// Counts, per family and field, the distinct values each candidate gives over every
/// (caller, peer) pair, and picks the smallest count. Families are done one at a time, so
/// only one family's sets of values are alive at once (a set per field and candidate for
/// every family at once took hundreds of MB with 10^5 signatures).
fn choose_codes(
    rankful: &FastMap<u32, Rankful>,
    used: &[Vec<u32>],
    contexts: &Contexts,
) -> Choices {
    let mut by_family: BTreeMap<usize, Vec<(usize, &Rankful)>> = BTreeMap::new();
    for (rank, terminals) in used.iter().enumerate() {
        for sig in terminals.iter().filter_map(|t| rankful.get(t)) {
            by_family.entry(sig.family).or_default().push((rank, sig));
        }
    }
    let mut choices = Choices::default();
    for (family, uses) in by_family {
        // Per field, the candidates: the fixed list, and the periodic dimension its offsets
        // suggest.
        let mut offsets: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
        for (_, sig) in &uses {
            for (j, field) in sig.fields.iter().enumerate() {
                offsets.entry(j).or_default().push(field.offset);
            }
        }
        let candidates: BTreeMap<usize, Vec<Candidate>> = offsets
            .into_iter()
            .map(|(j, mut seen)| {
                seen.sort_unstable();
                seen.dedup();
                let mut list = CANDIDATES.to_vec();
                list.extend(ring_of(&seen));
                (j, list)
            })
            .collect();
        let mut seen: BTreeMap<usize, Vec<FastSet<Rank>>> = BTreeMap::new();
        for (rank, sig) in uses {
            for (j, field) in sig.fields.iter().enumerate() {
                let list = &candidates[&j];
                let sets = seen
                    .entry(j)
                    .or_insert_with(|| vec![FastSet::default(); list.len()]);
                let relative = Rank::Relative(field.offset);
                let Some((me, n)) = contexts.position(rank, field) else {
                    sets.iter_mut().for_each(|s| {
                        s.insert(relative);
                    });
                    continue;
                };
                let peer = me + field.offset;
                for (set, &candidate) in sets.iter_mut().zip(list) {
                    set.insert(code(candidate, me, peer, n).unwrap_or(relative));
                }
            }
        }
        for (j, sets) in seen {
            let list = &candidates[&j];
            let best = (0..list.len())
                .min_by_key(|&i| (sets[i].len(), i))
                .expect("candidates");
            choices.insert((family, j), list[best]);
        }
    }
    choices
}

/// Rank `rank`'s form of rankful signature `bytes` under `choices`.
fn recode(
    bytes: &[u8],
    sig: &Rankful,
    rank: usize,
    choices: &Choices,
    contexts: &Contexts,
) -> Vec<u8> {
    let mut signature = Signature::parse(bytes).expect("a rankful signature parses");
    let mut j = 0;
    for_each_field(&mut signature, sig.fallback.as_ref(), |_, r| {
        let field = &sig.fields[j];
        let candidate = choices[&(sig.family, j)];
        if let Some((me, n)) = contexts.position(rank, field) {
            if let Some(code) = code(candidate, me, me + field.offset, n) {
                *r = code;
            }
        }
        j += 1;
    });
    encode_signature(&signature)
}

/// Stores every relative rank field of `m` under the code that makes the most ranks agree
/// (see the module documentation). Call it once, on a record of all ranks, before writing it.
pub fn choose_rank_codes(m: &mut TraceRecord) {
    let used = terminals_by_rank(m);
    let rankful = rankful_signatures(m, &used);
    if rankful.is_empty() {
        return;
    }
    let contexts = Contexts::of(m);
    let choices = choose_codes(&rankful, &used, &contexts);
    if choices.values().all(|&c| c == Candidate::Relative) {
        return;
    }
    let changed = |t: &u32| {
        rankful.get(t).is_some_and(|sig| {
            (0..sig.fields.len()).any(|j| choices[&(sig.family, j)] != Candidate::Relative)
        })
    };
    let forms: Vec<Vec<(u32, Vec<u8>)>> = used
        .iter()
        .enumerate()
        .map(|(rank, terminals)| {
            terminals
                .iter()
                .filter(|t| changed(t))
                .map(|&t| {
                    let bytes = &m.signatures[t as usize];
                    (t, recode(bytes, &rankful[&t], rank, &choices, &contexts))
                })
                .collect()
        })
        .collect();
    drop(contexts);
    reform(m, forms);
}

/// Gives each rank's terminals listed in `forms[rank]` their new signature bytes for that rank
/// (the other terminals keep theirs), then renames every rank's grammars, trees and streams:
/// ranks whose forms now agree share terminals and, where their calls agree, grammars.
pub(crate) fn reform(m: &mut TraceRecord, forms: Vec<Vec<(u32, Vec<u8>)>>) {
    let mut changed = vec![false; m.signatures.len()];
    forms
        .iter()
        .flatten()
        .for_each(|(t, _)| changed[*t as usize] = true);
    // New table: unchanged signatures first (in order), then each rank's forms of the others.
    let mut signatures: Vec<Vec<u8>> = Vec::new();
    let same: Vec<Option<u32>> = {
        let kept: Vec<u32> = (0..m.signatures.len() as u32)
            .filter(|&t| !changed[t as usize])
            .collect();
        let ids = intern(
            &mut signatures,
            kept.iter().map(|&t| m.signatures[t as usize].clone()),
        );
        let mut same = vec![None; m.signatures.len()];
        kept.iter()
            .zip(ids)
            .for_each(|(&t, id)| same[t as usize] = Some(id));
        same
    };
    let per_rank: Vec<Vec<(u32, u32)>> = forms
        .into_iter()
        .map(|mine| {
            let (terminals, bytes): (Vec<u32>, Vec<Vec<u8>>) = mine.into_iter().unzip();
            let ids = intern(&mut signatures, bytes);
            terminals.into_iter().zip(ids).collect()
        })
        .collect();
    rename(m, signatures, &same, &per_rank);
}

/// Replaces `m`'s table by `signatures`, renaming each rank's grammars and trees: terminal
/// `t` becomes `same[t]`, or for rank r the entry of `per_rank[r]` that names `t`.
fn rename(
    m: &mut TraceRecord,
    signatures: Vec<Vec<u8>>,
    same: &[Option<u32>],
    per_rank: &[Vec<(u32, u32)>],
) {
    let mut grammars = Vec::new();
    let mut grammar_keys: FastMap<(u32, Vec<(u32, u32)>), u32> = FastMap::default();
    let mut forest = m.forest.as_ref().map(|f| Forest::new(f.structure.clone()));
    let mut tree_keys: FastMap<(u32, Vec<(u32, u32)>), u32> = FastMap::default();
    let mut streams = Vec::new();
    let mut stream_keys: FastMap<(u32, Vec<(u32, u32)>), u32> = FastMap::default();
    let mut any_image: Vec<Option<u32>> = same.to_vec();
    for (rank, renamed) in per_rank.iter().enumerate() {
        let lookup: FastMap<u32, u32> = renamed.iter().copied().collect();
        for &(old, new) in renamed {
            any_image[old as usize].get_or_insert(new);
        }
        let map = |t: u32| {
            same[t as usize]
                .or_else(|| lookup.get(&t).copied())
                .expect("every terminal a rank uses is renamed")
        };
        let entry = &m.ranks[rank];
        let threads: Vec<u32> = entry
            .threads
            .iter()
            .map(|&g| {
                let grammar = &m.grammars[g as usize];
                let key = (g, restricted(renamed, grammar.terminal_counts().keys()));
                *grammar_keys
                    .entry(key)
                    .or_insert_with(|| intern(&mut grammars, [grammar.map_terminals(map)])[0])
            })
            .collect();
        let trees: Vec<u32> = match (&m.forest, &mut forest) {
            (Some(old), Some(new)) => entry
                .trees
                .iter()
                .map(|&tree| {
                    if tree == NO_TREE {
                        return NO_TREE;
                    }
                    let key = (tree, restricted(renamed, old.terminal_counts(tree).keys()));
                    *tree_keys
                        .entry(key)
                        .or_insert_with(|| add_renamed(new, old, tree, map))
                })
                .collect(),
            _ => entry.trees.clone(),
        };
        let stream_ids: Vec<u32> = entry
            .streams
            .iter()
            .map(|&set| {
                if set == NO_STREAMS {
                    return NO_STREAMS;
                }
                let old = &m.streams[set as usize];
                let key = (set, restricted(renamed, old.entries.iter().map(|(t, _)| t)));
                *stream_keys
                    .entry(key)
                    .or_insert_with(|| intern(&mut streams, [old.map_terminals(map)])[0])
            })
            .collect();
        let entry = &mut m.ranks[rank];
        entry.threads = threads;
        entry.trees = trees;
        entry.streams = stream_ids;
    }
    m.timing
        .retain_mut(|family| match any_image[family.terminal as usize] {
            Some(new) => {
                family.terminal = new;
                true
            }
            None => false,
        });
    m.signatures = signatures;
    m.grammars = grammars;
    m.forest = forest;
    m.streams = streams;
}

/// The entries of `renamed` whose old terminal is among `terminals`, in order.
fn restricted<'a>(
    renamed: &[(u32, u32)],
    terminals: impl Iterator<Item = &'a u32>,
) -> Vec<(u32, u32)> {
    let terminals: FastSet<u32> = terminals.copied().collect();
    renamed
        .iter()
        .copied()
        .filter(|(old, _)| terminals.contains(old))
        .collect()
}

/// Adds tree `tree` of `old` to `new` with its terminals renamed by `map`.
fn add_renamed(new: &mut Forest, old: &Forest, tree: u32, map: impl Fn(u32) -> u32) -> u32 {
    let source = &old.trees[tree as usize];
    let records = source
        .records
        .iter()
        .zip(&old.vertices)
        .zip(&mut new.vertices)
        .map(|((&r, olds), news)| {
            let record = olds[r as usize].clone().map_terminals(&map);
            intern(news, [record])[0]
        })
        .collect();
    intern(
        &mut new.trees,
        [TreeRef {
            leading_foreign: source.leading_foreign,
            records,
        }],
    )[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_candidate_names_its_pattern_with_one_value() {
        // (candidate, n, peer of caller r): every caller gets the same code.
        let n = 16;
        type PeerOf = fn(i64) -> i64;
        let cases: [(Candidate, PeerOf); 5] = [
            (Candidate::Fixed, |_| 0),
            (Candidate::Modular, |r| (r + 1) % 16),
            (Candidate::Xor, |r| r ^ 4),
            (Candidate::Transpose, |r| (r % 4) * 4 + r / 4),
            (Candidate::Torus, |r| {
                ((r / 4 + 3) % 4) * 4 + (r % 4 + 1) % 4
            }),
        ];
        for (candidate, peer) in cases {
            let codes: FastSet<Rank> = (0..n)
                .map(|r| code(candidate, r, peer(r), n).expect("exact"))
                .collect();
            assert_eq!(codes.len(), 1, "{candidate:?}: {codes:?}");
            let relative: FastSet<i64> = (0..n).map(|r| peer(r) - r).collect();
            assert!(relative.len() > 1, "{candidate:?} is not already relative");
        }
    }

    #[test]
    fn codes_refuse_what_they_cannot_name() {
        assert_eq!(code(Candidate::Transpose, 1, 5, 16), None); // 1's transpose is 4
        assert_eq!(code(Candidate::Transpose, 1, 4, 12), None); // 12 is no square
        assert_eq!(code(Candidate::Modular, 3, 20, 16), None); // out of range
        assert_eq!(torus_dims(12), Some((4, 3)));
        assert_eq!(torus_dims(7), None);
        assert_eq!(
            code(Candidate::Relative, 3, 20, 16),
            Some(Rank::Relative(17))
        );
    }
}
