//! What a condition reduces to once one of its comparisons is known: `and`/`or` (and their
//! `select` forms) with a known operand become a constant or their other operand, so the
//! operand the guard makes irrelevant is no longer read.
//!
//! [`assumed`] gives the reduction as the operands each instruction still needs (for the
//! liveness estimate, the IR untouched); [`apply`] rewrites the guarded version's copy.

use super::super::ir::{self, V};
use super::super::live::Assumed;
use llvm_sys::core as llc;
use llvm_sys::LLVMOpcode as Op;
use std::collections::HashMap;

/// What a value reduces to.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Known {
    /// A constant `i1`.
    Bool(bool),
    /// Another value.
    Same(V),
}

/// A known `i1` constant `v`, if `v` is one.
fn constant_bool(v: V) -> Option<bool> {
    // SAFETY: classifying a live value.
    unsafe {
        let int = llc::LLVMIsAConstantInt(v);
        let i1 = !int.is_null() && llc::LLVMGetIntTypeWidth(llc::LLVMTypeOf(v)) == 1;
        i1.then(|| llc::LLVMConstIntGetZExtValue(v) != 0)
    }
}

/// What `inst` reduces to when its operands are `ops` (each known or itself).
fn reduce(inst: V, ops: &[Known]) -> Option<Known> {
    let bool_of = |k: &Known| match *k {
        Known::Bool(b) => Some(b),
        Known::Same(v) => constant_bool(v),
    };
    match ir::opcode(inst) {
        Op::LLVMAnd | Op::LLVMOr if ops.len() == 2 => {
            // `and`: a false operand decides; `or`: a true one.
            let decides = ir::opcode(inst) == Op::LLVMOr;
            let (a, b) = (bool_of(&ops[0]), bool_of(&ops[1]));
            if a == Some(decides) || b == Some(decides) {
                return Some(Known::Bool(decides));
            }
            match (a, b) {
                (Some(_), _) => Some(ops[1]),
                (_, Some(_)) => Some(ops[0]),
                _ => None,
            }
        }
        Op::LLVMXor if ops.len() == 2 => match (bool_of(&ops[0]), bool_of(&ops[1])) {
            (Some(a), Some(b)) => Some(Known::Bool(a != b)),
            _ => None,
        },
        Op::LLVMSelect if ops.len() == 3 => {
            if let Some(c) = bool_of(&ops[0]) {
                return Some(if c { ops[1] } else { ops[2] });
            }
            match (bool_of(&ops[1]), bool_of(&ops[2])) {
                (Some(x), Some(y)) if x == y => Some(Known::Bool(x)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The instructions using `v`.
fn users(v: V) -> Vec<V> {
    let mut out = Vec::new();
    // SAFETY: walking the use list of a live value.
    unsafe {
        let mut u = llc::LLVMGetFirstUse(v);
        while !u.is_null() {
            let user = llc::LLVMGetUser(u);
            if !llc::LLVMIsAInstruction(user).is_null() && !out.contains(&user) {
                out.push(user);
            }
            u = llc::LLVMGetNextUse(u);
        }
    }
    out
}

/// The operands every instruction still needs when `leaf` is `value`: `leaf` none, each
/// instruction reducing to a constant none, each reducing to one of its operands that one.
pub fn assumed(leaf: V, value: bool) -> Assumed {
    let mut known: HashMap<V, Known> = HashMap::from([(leaf, Known::Bool(value))]);
    let mut work = users(leaf);
    while let Some(u) = work.pop() {
        if known.contains_key(&u) {
            continue;
        }
        let ops: Vec<Known> = ir::operands(u)
            .into_iter()
            .map(|o| known.get(&o).copied().unwrap_or(Known::Same(o)))
            .collect();
        if let Some(k) = reduce(u, &ops) {
            known.insert(u, k);
            work.extend(users(u));
        }
    }
    known
        .into_iter()
        .map(|(i, k)| {
            let needed = match k {
                Known::Bool(_) => Vec::new(),
                Known::Same(v) => vec![v],
            };
            (i, needed)
        })
        .collect()
}

/// Replaces `leaf` (an instruction of the guarded version) by the constant `value` and
/// rewrites what reduces with it; the replaced instructions are left unused.
///
/// # Safety
/// `leaf` is a live `i1` instruction.
pub unsafe fn apply(leaf: V, value: bool) {
    let constant = llc::LLVMConstInt(llc::LLVMTypeOf(leaf), u64::from(value), 0);
    let mut work = vec![(leaf, constant)];
    while let Some((from, to)) = work.pop() {
        let affected = users(from);
        llc::LLVMReplaceAllUsesWith(from, to);
        for u in affected {
            let ops: Vec<Known> = ir::operands(u).into_iter().map(Known::Same).collect();
            if let Some(k) = reduce(u, &ops) {
                let replacement = match k {
                    Known::Bool(b) => llc::LLVMConstInt(llc::LLVMTypeOf(u), u64::from(b), 0),
                    Known::Same(v) => v,
                };
                work.push((u, replacement));
            }
        }
    }
}
