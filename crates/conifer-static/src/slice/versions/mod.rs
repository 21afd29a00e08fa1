//! Guarded slices (conditioned slicing): where computation reaches a communication-deciding
//! branch only through a condition that an input value can make irrelevant — a convergence
//! test `(err > epsi && epsi >= 0) || (its < n && epsi < 0)` run with a negative `epsi` —
//! the program gets two versions of the code after the point where that input is known: the
//! full one, and a *guarded* one in which the comparison (`epsi >= 0`) is the constant it has
//! in that case, so the computation only the other case needs is dead there.
//!
//! [`plan`] picks the comparison ([`search`]) and value whose guarded version keeps least.
//! [`apply`] makes the versions ([`clone`]): at the dispatch point the program evaluates the
//! comparison from the values the collective left and runs the guarded copy of the rest of
//! the function when it has that value, the original otherwise; the functions the copy calls
//! are copied too, and every function calling the guarded one continues in its own copy
//! after the call once the guarded version ran (a flag says so). Liveness then slices both
//! versions apart ([`super::worlds`]). The trace is the full run's either way.

mod clone;
mod fold;
mod search;

use super::ir::{self, Ir, V};
use super::live::{self, Liveness};
use super::pointsto::PointsTo;
use super::report::Guard;
use super::worlds::{Worlds, GUARDED};
use inkwell::module::Module;
use llvm_sys::core as llc;
use llvm_sys::prelude::LLVMModuleRef;
use llvm_sys::LLVMOpcode as Op;
use std::collections::HashSet;

/// Most comparisons tried (each value of each is sliced on a copy of the module).
const MOST_SITES: usize = 8;

/// An instruction by place: function, block and index in the block (the same in a copy of the
/// module).
type Place = (usize, usize, usize);

/// The chosen guard, by place in the module as indexed before versioning.
pub struct Plan {
    /// The function holding the branch.
    func: usize,
    /// The branch whose condition holds the comparison.
    branch: Place,
    /// The comparison.
    leaf: Place,
    /// The instructions computing it, operands first.
    expression: Vec<Place>,
    /// The dispatch point.
    at: Place,
    /// The comparison's value in the guarded version.
    value: bool,
    /// Calls of the guard's function and of its callers, up to the entry: each continues in
    /// its function's guarded copy once the guarded version ran.
    callers: Vec<Place>,
}

/// A versioned module sliced: its index, points-to, runs and liveness.
pub struct Sliced {
    /// The module's index after versioning.
    pub program: Ir,
    /// Which run every block is in.
    pub worlds: Worlds,
    /// Liveness with the runs apart.
    pub live: Liveness,
    /// The entry function's index.
    pub entry: Option<usize>,
    /// What the report says of the guard (its kept count filled in by the transformation).
    pub guard: Guard,
}

/// The guard that pays most: for each qualifying comparison and each value it can take, the
/// versions are made and sliced on a copy of `module`; the one whose guarded run keeps fewest
/// instructions, when it keeps at most nine tenths of what `live` (the unguarded slice) keeps.
pub fn plan(
    module: &Module,
    ir: &Ir,
    pt: &PointsTo,
    live: &Liveness,
    entry: Option<&str>,
) -> Option<Plan> {
    let entry_index = entry.and_then(|e| ir.funcs.iter().position(|f| f.name == e));
    let mut best: Option<(usize, Plan)> = None;
    for site in search::sites(ir, pt, live).into_iter().take(MOST_SITES) {
        let Some(callers) = callers_to_version(ir, site.func, entry_index) else {
            continue;
        };
        for value in [false, true] {
            // The branch must no longer need everything its condition read.
            if !fold::assumed(site.leaf, value).contains_key(&ir::operands(site.branch)[0]) {
                continue;
            }
            let plan = Plan {
                func: site.func,
                branch: place(ir, site.branch),
                leaf: place(ir, site.leaf),
                expression: site.expression.iter().map(|&e| place(ir, e)).collect(),
                at: place(ir, site.at),
                value,
                callers: callers.iter().map(|&c| place(ir, c)).collect(),
            };
            let trial = module.clone();
            let Some(sliced) = slice(&trial, entry, &plan) else {
                continue;
            };
            let kept = sliced
                .live
                .live
                .iter()
                .filter(|&&i| sliced.worlds.of(&sliced.program, i) & GUARDED != 0)
                .count();
            let pays = kept * 10 <= live.live.len() * 9;
            if pays && best.as_ref().is_none_or(|(k, _)| kept < *k) {
                best = Some((kept, plan));
            }
        }
    }
    best.map(|(_, plan)| plan)
}

/// Makes `plan`'s versions in `module`, lets the optimiser fold the guarded version's
/// branches, and solves liveness with the runs apart; `None` when the optimiser fails.
pub fn slice(module: &Module, entry: Option<&str>, plan: &Plan) -> Option<Sliced> {
    let raw = module.as_mut_ptr();
    let ir = Ir::new(raw);
    let guard = describe(&ir, plan);
    // SAFETY: `raw` is the live module `ir` indexes, as `plan`'s places do.
    let versioned = unsafe { apply(raw, &ir, plan) };
    drop(ir);
    crate::passes::run(module, "function(simplifycfg)").ok()?;
    let program = Ir::new(raw);
    let pt = PointsTo::solve(&program);
    let worlds = Worlds::versioned(
        &program,
        &versioned.full_blocks,
        &versioned.guarded_blocks,
        &versioned.guarded_funcs,
    );
    let entry = entry.and_then(|e| program.funcs.iter().position(|f| f.name == e));
    let live = live::solve(&program, &pt, entry, &worlds, &Default::default());
    Some(Sliced {
        program,
        worlds,
        live,
        entry,
        guard,
    })
}

/// The place of instruction `i`.
fn place(ir: &Ir, i: V) -> Place {
    let (f, b) = ir.place[&i];
    let k = ir.funcs[f].insts[b]
        .iter()
        .position(|&x| x == i)
        .expect("an instruction of its block");
    (f, b, k)
}

/// The instruction at `p`.
fn at(ir: &Ir, p: Place) -> V {
    ir.funcs[p.0].insts[p.1][p.2]
}

/// The calls after which callers must continue in their guarded copies: every direct call of
/// `func` and, transitively, of the functions calling it, up to `entry`; `None` when one
/// cannot be versioned (called through a pointer, recursion, an `invoke`, a call in a loop).
fn callers_to_version(ir: &Ir, func: usize, entry: Option<usize>) -> Option<Vec<V>> {
    let mut calls = Vec::new();
    let mut seen = HashSet::from([func]);
    let mut todo = vec![func];
    while let Some(f) = todo.pop() {
        if Some(f) == entry {
            continue;
        }
        let g = &ir.funcs[f];
        if g.address_taken || g.callers.is_empty() {
            return None;
        }
        for &call in &g.callers {
            let (h, b) = ir.place[&call];
            if ir::opcode(call) != Op::LLVMCall || in_cycle(ir, h, b) || h == f {
                return None;
            }
            calls.push(call);
            if seen.insert(h) {
                todo.push(h);
            } else if h == func {
                return None;
            }
        }
    }
    Some(calls)
}

/// Whether block `b` of function `f` can reach itself.
fn in_cycle(ir: &Ir, f: usize, b: usize) -> bool {
    let cfg = ir::cfg_of(&ir.funcs[f]);
    let mut seen = HashSet::new();
    let mut todo = cfg.succs[b].clone();
    while let Some(x) = todo.pop() {
        if x == b {
            return true;
        }
        if seen.insert(x) {
            todo.extend(cfg.succs[x].iter().copied());
        }
    }
    false
}

/// The two versions made in the module: which blocks and functions run in which.
struct Versioned {
    /// Blocks after a dispatch point, of the full version.
    full_blocks: HashSet<llvm_sys::prelude::LLVMBasicBlockRef>,
    /// Their guarded copies.
    guarded_blocks: HashSet<llvm_sys::prelude::LLVMBasicBlockRef>,
    /// Guarded copies of whole functions.
    guarded_funcs: HashSet<V>,
}

/// Makes the versions `plan` describes in `module` (indexed as `ir`).
///
/// # Safety
/// `module` is the live module `ir` indexes.
unsafe fn apply(module: LLVMModuleRef, ir: &Ir, plan: &Plan) -> Versioned {
    let context = llc::LLVMGetModuleContext(module);
    let i1 = llc::LLVMInt1TypeInContext(context);
    let flag = llc::LLVMAddGlobal(module, i1, c"conifer.guarded.runs".as_ptr());
    llc::LLVMSetInitializer(flag, llc::LLVMConstInt(i1, 0, 0));
    llc::LLVMSetLinkage(flag, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
    let builder = llc::LLVMCreateBuilderInContext(context);
    let mut cloner = clone::Cloner::new(module);
    for &call in &plan.callers {
        let after = llc::LLVMGetNextInstruction(at(ir, call));
        let (head, rest) = cloner.split(after);
        let (copies, start) = cloner.copy_region(rest);
        cloner.call_copies(copies.values().copied());
        llc::LLVMPositionBuilderAtEnd(builder, head);
        let ran = llc::LLVMBuildLoad2(builder, i1, flag, c"guarded.ran".as_ptr());
        llc::LLVMBuildCondBr(builder, ran, start, rest);
    }
    let leaf = at(ir, plan.leaf);
    let (head, rest) = cloner.split(at(ir, plan.at));
    let (copies, start) = cloner.copy_region(rest);
    if let Some(&copy) = copies.get(&leaf) {
        fold::apply(copy, plan.value);
    }
    cloner.call_copies(copies.values().copied());
    llc::LLVMPositionBuilderAtEnd(builder, head);
    let mut evaluated = std::collections::HashMap::new();
    for &e in &plan.expression {
        let e = at(ir, e);
        let c = llc::LLVMInstructionClone(e);
        llc::LLVMInsertIntoBuilder(builder, c);
        for k in 0..llc::LLVMGetNumOperands(c).max(0) as u32 {
            if let Some(&v) = evaluated.get(&llc::LLVMGetOperand(c, k)) {
                llc::LLVMSetOperand(c, k, v);
            }
        }
        evaluated.insert(e, c);
    }
    let mut holds = evaluated[&leaf];
    if !plan.value {
        holds = llc::LLVMBuildNot(builder, holds, c"guard".as_ptr());
    }
    llc::LLVMBuildStore(builder, holds, flag);
    llc::LLVMBuildCondBr(builder, holds, start, rest);
    llc::LLVMDisposeBuilder(builder);
    Versioned {
        full_blocks: cloner.full_blocks.clone(),
        guarded_blocks: cloner.guarded_blocks.clone(),
        guarded_funcs: cloner.guarded_functions(),
    }
}

/// The report's account of `plan`'s guard.
fn describe(ir: &Ir, plan: &Plan) -> Guard {
    let branch = crate::ir::loc_of(at(ir, plan.branch));
    let condition = crate::ir::source_path(at(ir, plan.branch))
        .zip(branch.as_ref())
        .and_then(|(path, l)| source_line(&path, l.line))
        .unwrap_or_default();
    let file_line = |l: Option<crate::tree::Loc>| {
        l.map(|l| format!("{}:{}", l.file, l.line))
            .unwrap_or_else(|| "?".into())
    };
    Guard {
        at: file_line(branch),
        function: ir.funcs[plan.func].name.clone(),
        condition,
        comparison: super::render::expression(at(ir, plan.leaf)),
        when: plan.value,
        dispatch: file_line(crate::ir::loc_of(at(ir, plan.at))),
        kept: 0,
    }
}

/// Line `line` (from 1) of source file `file`, trimmed, if it can be read.
fn source_line(file: &std::path::Path, line: u32) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let l = text.lines().nth(line.checked_sub(1)? as usize)?;
    Some(l.trim().to_string())
}
