//! Per-rank value columns, chosen once all ranks are merged: ranks that make the same calls
//! in the same order and differ only in integer fields (counts, displacements, a status's
//! bytes, buffer offsets, request ids numbered apart — see `value_fields`) share one
//! signature per call, each such field stored once as a rank → value column, so one grammar
//! serves them all.
//!
//! Threads whose grammars expand to the same sequence of *skeletons* (signatures with those
//! fields blanked) form a class, found without expanding by a hash of the skeleton sequence
//! computed over each grammar's rules. A class's grammars are then expanded side by side:
//! each position's tuple of terminals (one per distinct grammar) becomes one terminal of a
//! joint grammar, whose signature holds, per field that differs between the class's ranks, a
//! per-rank integer: affine in the world rank when one line fits exactly (tag 13), else a
//! column (tag 16). For each rank a joint signature gives back exactly the bytes it
//! recorded, so nothing is lost. A class is left alone when its joint grammar would name
//! more than twice the terminals of its largest member (ranks whose values vary call by
//! call), when it would expand more than `BUDGET` calls, and for threads with trace trees
//! or value streams.

use crate::value_fields::{blank, fill};
use conifer_compress::fast_hash::FastMap;
use conifer_compress::{FrozenGrammar, Grammar, Symbol};
use conifer_format::forest::NO_TREE;
use conifer_format::signature::{encode_signature, Signature};
use conifer_format::stored::{TraceRecord, NO_STREAMS};
use conifer_format::value::{Column, Value};
use std::collections::BTreeMap;

/// A signature split into its skeleton and its fields.
struct Split {
    /// Index of the skeleton among the distinct skeletons.
    skeleton: u32,
    /// The fields, in walk order.
    fields: Vec<i64>,
}

/// Every signature of `signatures` split (a signature that does not parse is a skeleton of
/// its own, without fields).
fn split_all(signatures: &[Vec<u8>]) -> Vec<Split> {
    let mut skeletons: FastMap<Vec<u8>, u32> = FastMap::default();
    signatures
        .iter()
        .map(|bytes| {
            let mut fields = Vec::new();
            let key = match Signature::parse(bytes) {
                Some(mut s) => {
                    blank(&mut s.values, &mut fields);
                    encode_signature(&s)
                }
                None => bytes.clone(),
            };
            let next = skeletons.len() as u32;
            Split {
                skeleton: *skeletons.entry(key).or_insert(next),
                fields,
            }
        })
        .collect()
}

/// Calls expanded side by side at most, over all classes (the merge's time stays bounded).
const BUDGET: u64 = 200_000_000;

/// Base of the polynomial hash of skeleton sequences (odd; arithmetic mod 2⁶⁴).
const BASE: u64 = 0x9e37_79b9_7f4a_7c15;

/// `BASE^n`.
fn base_pow(mut n: u64) -> u64 {
    let (mut result, mut b) = (1u64, BASE);
    while n > 0 {
        if n & 1 == 1 {
            result = result.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        n >>= 1;
    }
    result
}

/// (hash, length) of `x` repeated `e` times, `x` being (hash, length).
fn repeated((h, len): (u64, u64), e: u64) -> (u64, u64) {
    // h · (1 + B^len + B^2len + …): doubling on the exponent.
    let (mut acc, mut acc_len) = (0u64, 0u64);
    let (mut unit, mut unit_len) = (h, len);
    let mut e = e;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(base_pow(unit_len)).wrapping_add(unit);
            acc_len = acc_len.wrapping_add(unit_len);
        }
        unit = unit.wrapping_mul(base_pow(unit_len)).wrapping_add(unit);
        unit_len = unit_len.wrapping_mul(2);
        e >>= 1;
    }
    (acc, acc_len)
}

/// The polynomial hash and length of `grammar`'s expansion with each terminal `t` read as
/// `symbol(t)`, from its rules (each rule once, after the rules it refers to).
fn sequence_hash(grammar: &FrozenGrammar, symbol: impl Fn(u32) -> u64) -> (u64, u64) {
    let rules = grammar.rules();
    let mut of_rule: Vec<Option<(u64, u64)>> = vec![None; rules.len()];
    let mut stack = vec![0usize];
    while let Some(&r) = stack.last() {
        let pending: Vec<usize> = rules[r]
            .iter()
            .filter_map(|item| match item.symbol {
                Symbol::Rule(k) if of_rule[k as usize].is_none() => Some(k as usize),
                _ => None,
            })
            .collect();
        if !pending.is_empty() {
            stack.extend(pending);
            continue;
        }
        stack.pop();
        let mut acc = (0u64, 0u64);
        for item in &rules[r] {
            let one = match item.symbol {
                Symbol::Terminal(t) => (symbol(t), 1),
                Symbol::Rule(k) => of_rule[k as usize].expect("done before"),
            };
            let (h, len) = repeated(one, item.exponent);
            acc = (
                acc.0.wrapping_mul(base_pow(len)).wrapping_add(h),
                acc.1.wrapping_add(len),
            );
        }
        of_rule[r] = Some(acc);
    }
    of_rule[0].unwrap_or_default()
}

/// The per-rank form of one field: an integer when every rank has the same value, affine in
/// the world rank when one line fits, else a column over the ranks `points` name (ranks
/// between them that do not make the call take the first value).
fn per_rank(points: &[(u32, i64)]) -> Value {
    let (r0, v0) = points[0];
    if points.iter().all(|&(_, v)| v == v0) {
        return Value::Int(v0);
    }
    if let Some(&(r1, v1)) = points.iter().find(|&&(r, _)| r != r0) {
        let (dv, dr) = (v1.wrapping_sub(v0), i64::from(r1) - i64::from(r0));
        if dv % dr == 0 {
            let a = dv / dr;
            let b = v0.wrapping_sub(a.wrapping_mul(i64::from(r0)));
            let fits = points
                .iter()
                .all(|&(r, v)| a.wrapping_mul(i64::from(r)).wrapping_add(b) == v);
            if fits {
                return Value::RankAffine { a, b };
            }
        }
    }
    let first = points.iter().map(|p| p.0).min().expect("points");
    let last = points.iter().map(|p| p.0).max().expect("points");
    let mut per_rank = vec![v0; (last - first + 1) as usize];
    for &(r, v) in points {
        per_rank[(r - first) as usize] = v;
    }
    Value::RankColumn(Column { first, per_rank })
}

/// A class's joint grammar over tuples, and the tuples (one terminal per member grammar);
/// `None` when the members' skeletons differ somewhere or the tuples are too many.
fn joint(
    m: &TraceRecord,
    splits: &[Split],
    members: &[u32],
) -> Option<(FrozenGrammar, Vec<Vec<u32>>)> {
    let widest = members
        .iter()
        .map(|&g| m.grammars[g as usize].terminal_counts().len())
        .max()?;
    let mut expansions: Vec<_> = members
        .iter()
        .map(|&g| m.grammars[g as usize].expand())
        .collect();
    let mut tuples: Vec<Vec<u32>> = Vec::new();
    let mut ids: FastMap<Vec<u32>, u32> = FastMap::default();
    let mut grammar = Grammar::new();
    loop {
        let tuple: Vec<Option<u32>> = expansions.iter_mut().map(Iterator::next).collect();
        if tuple.iter().all(Option::is_none) {
            break;
        }
        let tuple: Vec<u32> = tuple.into_iter().collect::<Option<_>>()?;
        let skeleton = splits[tuple[0] as usize].skeleton;
        if tuple
            .iter()
            .any(|&t| splits[t as usize].skeleton != skeleton)
        {
            return None;
        }
        let next = ids.len() as u32;
        let id = *ids.entry(tuple).or_insert_with_key(|tuple| {
            tuples.push(tuple.clone());
            next
        });
        if tuples.len() > 2 * widest {
            return None;
        }
        grammar.push(id);
    }
    Some((grammar.freeze(), tuples))
}

/// The signature of one tuple: the sample's, its fields per rank (`ranks[i]` the world ranks
/// using member `i`).
fn tuple_signature(
    m: &TraceRecord,
    splits: &[Split],
    tuple: &[u32],
    ranks: &[Vec<u32>],
) -> Vec<u8> {
    let fields = splits[tuple[0] as usize].fields.len();
    let per_field: Vec<Value> = (0..fields)
        .map(|f| {
            let points: Vec<(u32, i64)> = tuple
                .iter()
                .zip(ranks)
                .flat_map(|(&t, rs)| rs.iter().map(move |&r| (r, splits[t as usize].fields[f])))
                .collect();
            per_rank(&points)
        })
        .collect();
    if per_field.iter().all(|v| matches!(v, Value::Int(_))) {
        return m.signatures[tuple[0] as usize].clone();
    }
    let mut signature =
        Signature::parse(&m.signatures[tuple[0] as usize]).expect("a split signature parses");
    fill(&mut signature.values, &mut per_field.into_iter());
    encode_signature(&signature)
}

/// Stores the fields that differ between ranks making the same calls as per-rank integers
/// (see the module documentation). Call it once, on a record of all ranks, after the rank
/// codes.
pub fn choose_value_columns(m: &mut TraceRecord) {
    let splits = split_all(&m.signatures);
    // Threads that may take part: grammar only, without streams.
    let mut users: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, entry) in m.ranks.iter().enumerate() {
        let plain = entry.trees.iter().all(|&t| t == NO_TREE)
            && entry.streams.iter().all(|&s| s == NO_STREAMS);
        if !plain {
            continue;
        }
        for &g in &entry.threads {
            users.entry(g).or_default().push(m.first_rank + i as u32);
        }
    }
    let mut classes: BTreeMap<(u64, u64), Vec<u32>> = BTreeMap::new();
    for &g in users.keys() {
        let key = sequence_hash(&m.grammars[g as usize], |t| {
            u64::from(splits[t as usize].skeleton).wrapping_add(1)
        });
        classes.entry(key).or_default().push(g);
    }
    let mut budget = BUDGET;
    // Old grammar → joint grammar and its terminals' new signatures.
    let mut replaced: FastMap<u32, usize> = FastMap::default();
    let mut joints: Vec<Joint> = Vec::new();
    for ((_, len), members) in classes {
        let cost = len.saturating_mul(members.len() as u64);
        if members.len() < 2 || cost > budget {
            continue;
        }
        budget -= cost;
        let Some((grammar, tuples)) = joint(m, &splits, &members) else {
            continue;
        };
        let ranks: Vec<Vec<u32>> = members.iter().map(|g| users[g].clone()).collect();
        let signatures = tuples
            .iter()
            .map(|tuple| tuple_signature(m, &splits, tuple, &ranks))
            .collect();
        for &g in &members {
            replaced.insert(g, joints.len());
        }
        joints.push(Joint {
            grammar,
            signatures,
            tuples,
        });
    }
    if joints.is_empty() {
        return;
    }
    install(m, &replaced, joints);
}

/// A class's joint grammar, the signature of each of its terminals and the old terminals
/// each stands for.
struct Joint {
    grammar: FrozenGrammar,
    signatures: Vec<Vec<u8>>,
    tuples: Vec<Vec<u32>>,
}

/// Gives the threads using the grammars of `replaced` their class's joint grammar, over
/// new terminals, and drops the signatures and grammars no thread uses any more (their
/// timing goes to a joint terminal that stands for them).
fn install(m: &mut TraceRecord, replaced: &FastMap<u32, usize>, joints: Vec<Joint>) {
    let mut index: FastMap<Vec<u8>, u32> = FastMap::default();
    for (t, bytes) in m.signatures.iter().enumerate() {
        index.entry(bytes.clone()).or_insert(t as u32);
    }
    let mut image: FastMap<u32, u32> = FastMap::default();
    let first_joint = m.grammars.len() as u32;
    for joint in joints {
        let ids: Vec<u32> = joint
            .signatures
            .into_iter()
            .map(|bytes| {
                let next = m.signatures.len() as u32;
                *index.entry(bytes).or_insert_with_key(|bytes| {
                    m.signatures.push(bytes.clone());
                    next
                })
            })
            .collect();
        for (tuple, &id) in joint.tuples.iter().zip(&ids) {
            for &old in tuple {
                image.entry(old).or_insert(id);
            }
        }
        m.grammars
            .push(joint.grammar.map_terminals(|k| ids[k as usize]));
    }
    for entry in &mut m.ranks {
        for g in &mut entry.threads {
            if let Some(&j) = replaced.get(g) {
                *g = first_joint + j as u32;
            }
        }
    }
    crate::compaction::drop_unused(m, &image);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_take_the_smallest_form_that_gives_every_rank_its_value() {
        assert_eq!(per_rank(&[(0, 5), (3, 5)]), Value::Int(5));
        assert_eq!(
            per_rank(&[(1, 10), (2, 20), (4, 40)]),
            Value::RankAffine { a: 10, b: 0 }
        );
        assert_eq!(
            per_rank(&[(2, 7), (4, 9), (5, 7)]),
            Value::RankColumn(Column {
                first: 2,
                per_rank: vec![7, 7, 9, 7]
            })
        );
    }
}
