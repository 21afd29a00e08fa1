//! The signature families the merge chooses rank codes for (`rank_codes`): signatures equal
//! but for their relative rank fields, for received byte counts, request ids and buffer
//! offsets, and for the integers that follow the rank. An integer field follows the rank
//! when, among the signatures equal but for ranks and integers, the ranks using them do not
//! all pass the same set of values there (a split's colour beside its key, a count that
//! depends on the rank's cell): leaving such fields in the family would keep ranks in
//! families of their own, so no code could be chosen. Integers every rank passes alike (CG's
//! tags 1, 2, 3 for its three partners) stay in the family, so each partner's calls are
//! coded apart.

use conifer_compress::fast_hash::{FastMap, FastSet};
use conifer_format::recorded::{for_each_rank, RequestContexts};
use conifer_format::signature::{encode_signature, Signature};
use conifer_format::stored::TraceRecord;
use conifer_format::value::{Buffer, HandleKind, HandleRef, Rank, Value};
use std::collections::BTreeMap;

/// A relative rank field of a signature: where it sits and which communicator or group it is
/// relative to.
pub(crate) struct Field {
    /// The encoded communicator or group value.
    pub context: Vec<u8>,
    /// The recorded displacement from the caller.
    pub offset: i64,
}

/// A signature with relative rank fields whose communicator is known (its bytes stay in the
/// table and are parsed again to be recoded: parsed values of 10^5 signatures take ~50 MB).
pub(crate) struct Rankful {
    pub fields: Vec<Field>,
    pub family: usize,
    /// The communicator of a completion call's requests (see [`RequestContexts`]).
    pub fallback: Option<Value>,
}

/// The rank fields the merge chooses codes for: those recorded relative to the caller.
fn is_relative(r: &Rank) -> bool {
    matches!(r, Rank::Relative(_))
}

/// Calls `f` on every relative rank field of `signature`, with its context (`fallback` for a
/// call naming no communicator).
pub(crate) fn for_each_field(
    signature: &mut Signature,
    fallback: Option<&Value>,
    f: impl FnMut(&Value, &mut Rank),
) {
    for_each_rank(signature, fallback, is_relative, f);
}

/// A rankful signature before its family is known.
struct Draft {
    rankful: Rankful,
    /// Its family when every integer is left out.
    coarse: usize,
    /// Its top-level integers (field index, value).
    ints: Vec<(usize, i64)>,
}

/// `signature` without its relative ranks, and without its top-level integers where `keep`
/// says no.
fn family_key(
    signature: &mut Signature,
    fallback: Option<&Value>,
    keep: impl Fn(usize) -> bool,
) -> Vec<u8> {
    for_each_field(signature, fallback, |_, r| *r = Rank::Absolute(0));
    for (j, v) in signature.values.iter_mut().enumerate() {
        if let Value::Int(x) = v {
            if !keep(j) {
                *x = 0;
            }
        }
        blank_rank_dependent(v);
    }
    encode_signature(signature)
}

/// Blanks in `v` what ranks sharing a call may hold apart without naming another partner —
/// received byte counts, request ids, buffer offsets — so one family, and one code, serves
/// them (the value columns chosen later store those fields per rank).
fn blank_rank_dependent(v: &mut Value) {
    match v {
        Value::Status(s) => s.bytes = 0,
        Value::Handle(HandleKind::Request, HandleRef::Id(id)) => *id = 0,
        Value::Buffer(Buffer::Segment { offset, .. }) => *offset = 0,
        Value::Array(items) => items.iter_mut().for_each(blank_rank_dependent),
        _ => {}
    }
}

/// The signatures of `m` that have relative rank fields, with their families (see the module
/// documentation); `used[rank]` lists the terminals each rank uses.
pub(crate) fn rankful_signatures(m: &TraceRecord, used: &[Vec<u32>]) -> FastMap<u32, Rankful> {
    let requests = RequestContexts::of_signatures(m.signatures.iter().map(Vec::as_slice));
    let mut coarse_ids: FastMap<Vec<u8>, usize> = FastMap::default();
    let mut drafts: FastMap<u32, Draft> = FastMap::default();
    for (t, bytes) in m.signatures.iter().enumerate() {
        let Some(mut signature) = Signature::parse(bytes) else {
            continue;
        };
        let fallback = requests.fallback(&signature);
        let mut fields = Vec::new();
        for_each_field(&mut signature, fallback.as_ref(), |context, r| {
            if let Rank::Relative(d) = r {
                let mut key = Vec::new();
                context.encode(&mut key);
                fields.push(Field {
                    context: key,
                    offset: *d,
                });
            }
        });
        if fields.is_empty() {
            continue;
        }
        let ints = signature
            .values
            .iter()
            .enumerate()
            .filter_map(|(j, v)| match v {
                Value::Int(x) => Some((j, *x)),
                _ => None,
            })
            .collect();
        let key = family_key(&mut signature, fallback.as_ref(), |_| false);
        let next = coarse_ids.len();
        let coarse = *coarse_ids.entry(key).or_insert(next);
        let rankful = Rankful {
            fields,
            family: 0,
            fallback,
        };
        drafts.insert(
            t as u32,
            Draft {
                rankful,
                coarse,
                ints,
            },
        );
    }
    let following = rank_following_ints(&drafts, used);
    let mut families: FastMap<Vec<u8>, usize> = FastMap::default();
    let mut out = FastMap::default();
    for (t, mut draft) in drafts {
        let mut signature = Signature::parse(&m.signatures[t as usize]).expect("parsed above");
        let coarse = draft.coarse;
        let key = family_key(&mut signature, draft.rankful.fallback.as_ref(), |j| {
            !following.contains(&(coarse, j))
        });
        let next = families.len();
        draft.rankful.family = *families.entry(key).or_insert(next);
        out.insert(t, draft.rankful);
    }
    out
}

/// The (coarse family, field) pairs whose integer follows the rank: the ranks using the
/// family do not all pass the same set of values there (a split's colour, a count that
/// depends on the rank's cell); a field every rank passes the same values in (one tag per
/// partner) keeps partners apart.
fn rank_following_ints(drafts: &FastMap<u32, Draft>, used: &[Vec<u32>]) -> FastSet<(usize, usize)> {
    let mut by_family: BTreeMap<usize, Vec<(usize, i64, i64)>> = BTreeMap::new();
    for (rank, terminals) in used.iter().enumerate() {
        for draft in terminals.iter().filter_map(|t| drafts.get(t)) {
            let seen = by_family.entry(draft.coarse).or_default();
            seen.extend(draft.ints.iter().map(|&(j, x)| (j, rank as i64, x)));
        }
    }
    let mut following = FastSet::default();
    for (family, mut seen) in by_family {
        seen.sort_unstable();
        seen.dedup();
        for field in seen.chunk_by(|a, b| a.0 == b.0) {
            let sets: Vec<Vec<i64>> = field
                .chunk_by(|a, b| a.1 == b.1)
                .map(|rank| rank.iter().map(|p| p.2).collect())
                .collect();
            if sets.iter().any(|s| *s != sets[0]) {
                following.insert((family, field[0].0));
            }
        }
    }
    following
}

/// Per field of `seen` ((field, rank, value) entries, in any order, repeats allowed), the
/// (rank, value) points in rank order, for the fields where every rank has one value.
pub(crate) fn one_value_per_rank(
    mut seen: Vec<(usize, i64, i64)>,
) -> Vec<(usize, Vec<(i64, i64)>)> {
    seen.sort_unstable();
    seen.dedup();
    seen.chunk_by(|a, b| a.0 == b.0)
        .filter(|field| field.windows(2).all(|pair| pair[0].1 != pair[1].1))
        .map(|field| (field[0].0, field.iter().map(|&(_, r, x)| (r, x)).collect()))
        .collect()
}
