//! Stored codes turned back into what the recorder wrote: the rank codes the merge chose
//! (see `rank_codes`) become ranks relative to the caller again, rank-affine integers (see
//! `int_codes`) the integers the program passed.

use crate::handle::HandleRef;
use crate::signature::{encode_signature, Signature};
use crate::value::{Buffer, Rank, Status, Value};
use conifer_compress::fast_hash::FastMap;
use std::borrow::Cow;

/// Calls `f` on every rank value of `signature` (top level, in arrays and in statuses, streamed
/// ones too) that
/// `pick` selects and that is relative to a communicator or group named in the call, with
/// that context. A call that names none (a completion: `MPI_Wait`'s status) takes `fallback`,
/// the communicator its requests were made on (see [`RequestContexts`]).
pub fn for_each_rank(
    signature: &mut Signature,
    fallback: Option<&Value>,
    pick: fn(&Rank) -> bool,
    mut f: impl FnMut(&Value, &mut Rank),
) {
    let contexts: Vec<Option<Value>> = signature
        .contexts()
        .into_iter()
        .map(|c| c.or(fallback).cloned())
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
        Value::StreamedStatus(source, _) if pick(source) => f(source),
        Value::RankStatus { source, .. } if pick(source) => f(source),
        Value::Array(items) => items.iter_mut().for_each(|v| visit(v, pick, f)),
        _ => {}
    }
}

/// The communicator each request was made on, for the status sources of the completion calls
/// that name the request but no communicator: the recorder stores those relative to the
/// request's communicator, and the merge codes them as that communicator's ranks.
#[derive(Debug, Default)]
pub struct RequestContexts {
    made_on: FastMap<HandleRef, Option<Value>>,
}

impl RequestContexts {
    /// Over the distinct signatures of a trace: a request is known when every call that names
    /// it and a communicator names the same communicator (request ids are reused, and one
    /// made on two communicators is left alone).
    pub fn of_signatures<'a>(signatures: impl IntoIterator<Item = &'a [u8]>) -> RequestContexts {
        let mut contexts = RequestContexts::default();
        for bytes in signatures {
            let Some(signature) = Signature::parse(bytes) else {
                continue;
            };
            let Some(comm) = signature.comm() else {
                continue;
            };
            for request in signature.requests() {
                let entry = contexts
                    .made_on
                    .entry(request)
                    .or_insert_with(|| Some(comm.clone()));
                if entry.as_ref() != Some(comm) {
                    *entry = None;
                }
            }
        }
        contexts
    }

    /// Notes the calls of one thread in order: a call naming a communicator makes its
    /// requests on it (a reused request id takes the latest).
    pub fn note(&mut self, signature: &Signature) {
        if let Some(comm) = signature.comm() {
            for request in signature.requests() {
                self.made_on.insert(request, Some(comm.clone()));
            }
        }
    }

    /// The context of a call that names no communicator: the one all its requests were made
    /// on, when they agree and are known.
    pub fn fallback(&self, signature: &Signature) -> Option<Value> {
        if signature.comm().is_some() {
            return None;
        }
        let mut common: Option<&Value> = None;
        for request in signature.requests() {
            let made_on = self.made_on.get(&request)?.as_ref()?;
            if common.is_some_and(|c| c != made_on) {
                return None;
            }
            common = Some(made_on);
        }
        common.cloned()
    }
}

/// `bytes` as the recorder wrote them, for the caller of world rank `world_rank` whose rank in
/// each communicator or group is `positions[encoded handle]`: merge-chosen codes become
/// relative ranks again, rank-affine integers integers. `requests` holds the thread's calls
/// so far (this one is noted in it), for the statuses of completion calls.
pub fn as_recorded<'a>(
    bytes: &'a [u8],
    world_rank: u32,
    positions: &FastMap<&[u8], i64>,
    requests: &mut RequestContexts,
) -> Cow<'a, [u8]> {
    let Some(mut signature) = Signature::parse(bytes) else {
        return Cow::Borrowed(bytes);
    };
    // Resolved first: per-rank request ids name the requests noted.
    let mut changed = resolve(&mut signature, world_rank);
    requests.note(&signature);
    let fallback = requests.fallback(&signature);
    for_each_rank(
        &mut signature,
        fallback.as_ref(),
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

/// Evaluates `signature`'s per-rank values (rank-affine integers, columns, statuses and
/// buffers with per-rank fields; at the top level and in arrays) for the caller of world
/// rank `rank`: what the program passed. True when it had any.
pub fn resolve(signature: &mut Signature, rank: u32) -> bool {
    let mut any = false;
    for v in &mut signature.values {
        any |= resolve_value(v, rank);
    }
    any
}

/// [`resolve`] on one value; true when it changed.
fn resolve_value(v: &mut Value, rank: u32) -> bool {
    let resolved = match v {
        Value::RankAffine { .. } | Value::RankColumn(_) => Value::Int(int_for(v, rank)),
        Value::RankStatus {
            source,
            error,
            tag,
            bytes,
        } => Value::Status(Status {
            source: *source,
            tag: int_for(tag, rank),
            error: *error,
            bytes: int_for(bytes, rank),
        }),
        Value::RankBuffer { id, offset } => Value::Buffer(Buffer::Segment {
            id: *id,
            offset: int_for(offset, rank),
        }),
        Value::RankHandle { kind, id } => {
            Value::Handle(*kind, HandleRef::Id(int_for(id, rank) as u32))
        }
        Value::Array(items) => {
            let mut any = false;
            for item in items {
                any |= resolve_value(item, rank);
            }
            return any;
        }
        _ => return false,
    };
    *v = resolved;
    true
}

/// The integer of a per-rank field for `rank` (0 for a rank its column does not cover: a
/// malformed trace).
fn int_for(v: &Value, rank: u32) -> i64 {
    v.int_for_rank(rank).unwrap_or(0)
}

/// True when `signature` holds a per-rank value (see [`resolve`]).
pub fn has_rank_affine(signature: &Signature) -> bool {
    fn per_rank(v: &Value) -> bool {
        match v {
            Value::RankAffine { .. }
            | Value::RankColumn(_)
            | Value::RankStatus { .. }
            | Value::RankBuffer { .. }
            | Value::RankHandle { .. } => true,
            Value::Array(items) => items.iter().any(per_rank),
            _ => false,
        }
    }
    signature.values.iter().any(per_rank)
}
