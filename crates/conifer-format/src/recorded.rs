//! Stored codes turned back into what the recorder wrote: the rank codes the merge chose
//! (see `rank_codes`) become ranks relative to the caller again, rank-affine integers (see
//! `int_codes`) the integers the program passed.

use crate::signature::{encode_signature, Signature};
use crate::value::{Rank, Value};
use conifer_compress::fast_hash::FastMap;
use std::borrow::Cow;

/// Calls `f` on every rank value of `signature` (top level, in arrays and in statuses) that
/// `pick` selects and that is relative to a communicator or group named in the call, with
/// that context.
pub fn for_each_rank(
    signature: &mut Signature,
    pick: fn(&Rank) -> bool,
    mut f: impl FnMut(&Value, &mut Rank),
) {
    let contexts: Vec<Option<Value>> = signature
        .contexts()
        .into_iter()
        .map(|c| c.cloned())
        .collect();
    for (value, context) in signature.values.iter_mut().zip(contexts) {
        let Some(context) = context else { continue };
        visit(value, pick, &mut |r| f(&context, r));
    }
}

fn visit(value: &mut Value, pick: fn(&Rank) -> bool, f: &mut impl FnMut(&mut Rank)) {
    match value {
        Value::Rank(r) if pick(r) => f(r),
        Value::Status(s) if pick(&s.source) => f(&mut s.source),
        Value::Array(items) => items.iter_mut().for_each(|v| visit(v, pick, f)),
        _ => {}
    }
}

/// `bytes` as the recorder wrote them, for the caller of world rank `world_rank` whose rank in
/// each communicator or group is `positions[encoded handle]`: merge-chosen codes become
/// relative ranks again, rank-affine integers integers.
pub fn as_recorded<'a>(
    bytes: &'a [u8],
    world_rank: u32,
    positions: &FastMap<&[u8], i64>,
) -> Cow<'a, [u8]> {
    let Some(mut signature) = Signature::parse(bytes) else {
        return Cow::Borrowed(bytes);
    };
    let mut changed = resolve(&mut signature, world_rank);
    for_each_rank(
        &mut signature,
        |_| true,
        |context, r| {
            let mut key = Vec::new();
            context.encode(&mut key);
            if let Some(&me) = positions.get(key.as_slice()) {
                let recorded = r.as_recorded(me);
                changed |= recorded != *r;
                *r = recorded;
            }
        },
    );
    if changed {
        Cow::Owned(encode_signature(&signature))
    } else {
        Cow::Borrowed(bytes)
    }
}

/// Evaluates `signature`'s rank-affine integers for the caller of world rank `rank`: what the
/// program passed. True when it had any.
pub fn resolve(signature: &mut Signature, rank: u32) -> bool {
    let mut any = false;
    for v in &mut signature.values {
        if let Value::RankAffine { a, b } = *v {
            *v = Value::Int(a.wrapping_mul(i64::from(rank)).wrapping_add(b));
            any = true;
        }
    }
    any
}

/// True when `signature` holds a rank-affine integer (see [`resolve`]).
pub fn has_rank_affine(signature: &Signature) -> bool {
    signature
        .values
        .iter()
        .any(|v| matches!(v, Value::RankAffine { .. }))
}
