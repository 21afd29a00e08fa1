//! Where a guard can go: a comparison inside a live branch condition, computed from values
//! every rank holds alike, that makes part of the condition irrelevant when it has one value.
//!
//! A comparison qualifies when it reads only constants and memory whose last writer is a
//! collective every rank leaves with the same contents (`MPI_Bcast`, `MPI_Allreduce`,
//! `MPI_Allgather`): every other write of those bytes comes before that collective on every
//! path (it post-dominates them), all in one function. Then the comparison has one value on
//! every rank, so all ranks run the same version, and it can be evaluated as soon as that
//! collective returned (the dispatch point).

use super::super::fields::{self, Access};
use super::super::ir::{self, Ir, V};
use super::super::live::Liveness;
use super::super::mpi::MpiCall;
use super::super::pointsto::PointsTo;
use super::super::writers::{self, Writer};
use crate::cfg::Cfg;
use llvm_sys::core as llc;
use llvm_sys::LLVMOpcode as Op;
use std::collections::{HashMap, HashSet};

/// `MPI_COMM_WORLD`'s handle in MPICH (C and Fortran).
const MPICH_WORLD: u64 = 0x4400_0000;

/// Collectives whose result every rank of their communicator holds alike.
const UNIFORM: [&str; 4] = [
    "MPI_Bcast",
    "MPI_Allreduce",
    "MPI_Allgather",
    "MPI_Allgatherv",
];

/// Largest comparison expression considered (instructions).
const LARGEST_EXPRESSION: usize = 16;

/// A comparison that may guard a version, and where its value is known.
#[derive(Clone)]
pub struct Site {
    /// The function holding the branch.
    pub func: usize,
    /// The live conditional branch whose condition holds the comparison.
    pub branch: V,
    /// The comparison.
    pub leaf: V,
    /// The instructions computing it, operands first, `leaf` last.
    pub expression: Vec<V>,
    /// The dispatch point: the instruction the guarded version starts at (in `func`).
    pub at: V,
}

/// Every comparison in a live branch condition that qualifies, with its dispatch point.
pub fn sites(ir: &Ir, pt: &PointsTo, live: &Liveness) -> Vec<Site> {
    let writers = writers::collect(ir, pt, &live.mpi);
    let mut out = Vec::new();
    for (fi, f) in ir.funcs.iter().enumerate() {
        if !live.active[fi] {
            continue;
        }
        let cfg = ir::cfg_of(f);
        let idom = cfg.idoms();
        for (b, insts) in f.insts.iter().enumerate() {
            let term = *insts.last().expect("terminator");
            if ir::opcode(term) != Op::LLVMBr || !live.live.contains(&term) {
                continue;
            }
            // SAFETY: `term` is a branch.
            if unsafe { llc::LLVMIsConditional(term) } == 0 {
                continue;
            }
            let mut leaves = Vec::new();
            condition_leaves(ir::operands(term)[0], &mut leaves);
            for leaf in leaves {
                let Some(expression) = expression_of(leaf) else {
                    continue;
                };
                let context = Context {
                    ir,
                    pt,
                    writers: &writers,
                    mpi: &live.mpi,
                    cfg: &cfg,
                    idom: &idom,
                    func: fi,
                    branch_block: b,
                };
                if let Some(at) = context.dispatch_point(&expression) {
                    out.push(Site {
                        func: fi,
                        branch: term,
                        leaf,
                        expression,
                        at,
                    });
                }
            }
        }
    }
    out
}

/// The comparisons an `i1` condition combines with `and`, `or`, `xor` and `select`.
fn condition_leaves(v: V, out: &mut Vec<V>) {
    // SAFETY: classifying a live value.
    if unsafe { llc::LLVMIsAInstruction(v).is_null() } {
        return;
    }
    match ir::opcode(v) {
        Op::LLVMAnd | Op::LLVMOr | Op::LLVMXor | Op::LLVMSelect => {
            for o in ir::operands(v) {
                condition_leaves(o, out);
            }
        }
        Op::LLVMICmp | Op::LLVMFCmp if !out.contains(&v) => out.push(v),
        _ => {}
    }
}

/// The instructions computing comparison `leaf` from constants and loads (addresses from
/// constants, `alloca`s and pointer parameters), operands first; `None` when it uses
/// anything else.
fn expression_of(leaf: V) -> Option<Vec<V>> {
    let mut out = Vec::new();
    collect_expression(leaf, false, &mut out)?;
    Some(out)
}

fn collect_expression(v: V, address: bool, out: &mut Vec<V>) -> Option<()> {
    // SAFETY: classifying live values.
    unsafe {
        if !llc::LLVMIsAConstant(v).is_null() {
            return Some(());
        }
        let pointer =
            llc::LLVMGetTypeKind(llc::LLVMTypeOf(v)) == llvm_sys::LLVMTypeKind::LLVMPointerTypeKind;
        if !llc::LLVMIsAArgument(v).is_null() || !llc::LLVMIsAAllocaInst(v).is_null() {
            return (address && pointer).then_some(());
        }
        if llc::LLVMIsAInstruction(v).is_null() || out.contains(&v) {
            return (!llc::LLVMIsAInstruction(v).is_null()).then_some(());
        }
        let operand_is_address = match ir::opcode(v) {
            Op::LLVMLoad => true,
            Op::LLVMGetElementPtr => address,
            Op::LLVMICmp | Op::LLVMFCmp | Op::LLVMFNeg => false,
            Op::LLVMAdd
            | Op::LLVMSub
            | Op::LLVMMul
            | Op::LLVMFAdd
            | Op::LLVMFSub
            | Op::LLVMFMul
            | Op::LLVMFDiv
            | Op::LLVMSDiv
            | Op::LLVMUDiv
            | Op::LLVMAnd
            | Op::LLVMOr
            | Op::LLVMXor => false,
            Op::LLVMTrunc
            | Op::LLVMZExt
            | Op::LLVMSExt
            | Op::LLVMFPToSI
            | Op::LLVMFPToUI
            | Op::LLVMSIToFP
            | Op::LLVMUIToFP
            | Op::LLVMFPExt
            | Op::LLVMFPTrunc => false,
            _ => return None,
        };
        for o in ir::operands(v) {
            collect_expression(o, operand_is_address, out)?;
        }
        if out.len() >= LARGEST_EXPRESSION {
            return None;
        }
        out.push(v);
        Some(())
    }
}

/// Whether communicator argument `v` is `MPI_COMM_WORLD`: Open MPI's C handle (the address of
/// `ompi_mpi_comm_world`), MPICH's constant, or a Fortran handle (0 in Open MPI, MPICH's
/// constant) passed by address in memory that only that constant is stored to.
fn is_world(v: V) -> bool {
    let world_constant = |c: V| {
        // SAFETY: classifying a live value.
        unsafe {
            !llc::LLVMIsAConstantInt(c).is_null()
                && [0, MPICH_WORLD].contains(&llc::LLVMConstIntGetZExtValue(c))
        }
    };
    // SAFETY: classifying and reading live values.
    unsafe {
        if !llc::LLVMIsAConstantInt(v).is_null() {
            return llc::LLVMConstIntGetZExtValue(v) == MPICH_WORLD;
        }
        if !llc::LLVMIsAGlobalVariable(v).is_null() {
            let init = llc::LLVMGetInitializer(v);
            return ir::name_of(v) == "ompi_mpi_comm_world"
                || (llc::LLVMIsGlobalConstant(v) != 0 && !init.is_null() && world_constant(init));
        }
        if llc::LLVMIsAAllocaInst(v).is_null() {
            return false;
        }
        let mut stored = false;
        let mut u = llc::LLVMGetFirstUse(v);
        while !u.is_null() {
            let user = llc::LLVMGetUser(u);
            if !llc::LLVMIsAStoreInst(user).is_null() {
                let ops = ir::operands(user);
                if ops[1] != v || !world_constant(ops[0]) {
                    return false;
                }
                stored = true;
            }
            u = llc::LLVMGetNextUse(u);
        }
        stored
    }
}

/// What a candidate's checks need.
struct Context<'a> {
    ir: &'a Ir,
    pt: &'a PointsTo,
    writers: &'a [Writer],
    mpi: &'a HashMap<V, MpiCall>,
    cfg: &'a Cfg,
    idom: &'a [Option<usize>],
    func: usize,
    branch_block: usize,
}

impl Context<'_> {
    /// The first instruction of the guarded version for `expression`: right after the last
    /// collective writing what it loads when that is in this function, else this function's
    /// first instruction after its `alloca`s; `None` when the expression is not uniform or
    /// no such point dominates the branch outside every cycle.
    fn dispatch_point(&self, expression: &[V]) -> Option<V> {
        let f = &self.ir.funcs[self.func];
        let mut writes: Vec<(usize, usize)> = Vec::new();
        for &load in expression
            .iter()
            .filter(|&&i| ir::opcode(i) == Op::LLVMLoad)
        {
            let (holder, writer) = self.uniform_source(load)?;
            // Written by a function this one calls: known once the call returned.
            let calls: Vec<V> = match holder == self.func {
                true => vec![writer],
                false => f
                    .insts
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|&i| {
                        ir::is_call(i) && ir::direct_callee(i) == Some(self.ir.funcs[holder].value)
                    })
                    .collect(),
            };
            if holder != self.func && calls.is_empty() {
                let global = fields::offset_into(self.ir, ir::operands(load)[0])
                    // SAFETY: classifying a live value.
                    .is_some_and(|(base, _)| unsafe {
                        !llc::LLVMIsAGlobalVariable(base).is_null()
                    });
                if !global
                    || self.calls_reach(self.func, holder)
                    || self.calls_reach(holder, self.func)
                {
                    return None;
                }
                continue;
            }
            if holder != self.func && self.calls_reach(holder, self.func) {
                return None;
            }
            for call in calls {
                let (_, b) = self.ir.place[&call];
                let k = f.insts[b].iter().position(|&i| i == call)?;
                if !self.dominates(b, self.branch_block) {
                    return None;
                }
                writes.push((b, k));
            }
        }
        // The collective every other one comes before.
        let before = |(ob, ok): (usize, usize), (b, k): (usize, usize)| match ob == b {
            true => ok <= k,
            false => self.dominates(ob, b),
        };
        let latest = match writes.is_empty() {
            true => None,
            false => Some(
                *writes
                    .iter()
                    .find(|&&c| writes.iter().all(|&o| before(o, c)))?,
            ),
        };
        let (block, index) = match latest {
            Some((b, k)) => (b, k + 1),
            None => {
                let first = f.insts[0]
                    .iter()
                    .position(|&i| ir::opcode(i) != Op::LLVMAlloca)?;
                (0, first)
            }
        };
        let at = *f.insts[block].get(index)?;
        if ir::opcode(at) == Op::LLVMPHI || self.in_cycle(block) {
            return None;
        }
        // What the expression uses from outside itself must be there before the dispatch.
        for &e in expression {
            for o in ir::operands(e) {
                // SAFETY: classifying a live value.
                let outside =
                    unsafe { !llc::LLVMIsAInstruction(o).is_null() } && !expression.contains(&o);
                if outside {
                    let (_, ob) = self.ir.place[&o];
                    let ok = match ob == block {
                        true => f.insts[block][..index].contains(&o),
                        false => self.dominates(ob, block),
                    };
                    if !ok {
                        return None;
                    }
                }
            }
        }
        Some(at)
    }

    /// The function and collective that last write what `load` reads, when every write of
    /// those bytes is in one function and that collective comes after all the others.
    fn uniform_source(&self, load: V) -> Option<(usize, V)> {
        let address = ir::operands(load)[0];
        let objs = self.pt.of(address);
        if objs.len() != 1 || objs.contains(&super::super::pointsto::UNKNOWN) {
            return None;
        }
        let exact: Option<Access> = fields::access_through_parameters(self.ir, self.pt, load);
        let mut relevant: Vec<V> = self
            .writers
            .iter()
            .filter(|w| !self.is_summary(w.inst))
            .filter(|w| self.pt.may_alias(&w.objs, &objs))
            .filter(|w| {
                let written = fields::access_through_parameters(self.ir, self.pt, w.inst);
                match (exact, written) {
                    (Some(a), Some(b)) => a.obj != b.obj || (a.lo < b.hi && b.lo < a.hi),
                    _ => true,
                }
            })
            .map(|w| w.inst)
            .collect();
        relevant.extend(self.unknown_code_given(&objs));
        let holder = self.ir.place[relevant.first()?].0;
        if relevant.iter().any(|w| self.ir.place[w].0 != holder) {
            return None;
        }
        let is_uniform = |w: &V| {
            self.mpi.get(w).is_some_and(|m| {
                UNIFORM.contains(&m.name.as_str())
                    && m.argument_of_kind("COMMUNICATOR")
                        .and_then(|k| ir::call_args(*w).get(k).copied())
                        .is_some_and(is_world)
            })
        };
        if relevant
            .iter()
            .any(|w| self.mpi.contains_key(w) && !is_uniform(w))
        {
            return None;
        }
        let last = *relevant.iter().filter(|w| is_uniform(w)).find(|&&u| {
            relevant
                .iter()
                .all(|&w| w == u || self.comes_before(holder, w, u))
        })?;
        Some((holder, last))
    }

    /// Whether `call` calls one of the program's own functions (its writer entry is a MOD
    /// summary, not a write of its own).
    fn is_summary(&self, call: V) -> bool {
        ir::is_call(call)
            && ir::direct_callee(call).is_some_and(|c| self.ir.index.contains_key(&c))
            && !self.mpi.contains_key(&call)
    }

    /// Calls into code the analysis cannot see into (through pointers, unknown library
    /// functions such as `fscanf`) given a pointer that reaches `objs`: writers of them (a
    /// library keeping an address for a later call is not modelled).
    fn unknown_code_given(&self, objs: &super::super::pointsto::Objs) -> Vec<V> {
        let given = |i: V| {
            ir::call_args(i).into_iter().any(|a| {
                self.pt
                    .reach(&self.pt.of(a))
                    .iter()
                    .any(|o| objs.contains(o))
            })
        };
        self.ir
            .funcs
            .iter()
            .flat_map(|f| f.insts.iter().flatten().copied())
            .filter(|&i| ir::is_call(i) && !self.mpi.contains_key(&i))
            .filter(|&i| match ir::direct_callee(i) {
                None => true,
                Some(c) if self.ir.index.contains_key(&c) => false,
                Some(_) => matches!(
                    writers::external_class(self.ir, self.mpi, i),
                    Some(super::super::class::External::Unknown)
                ),
            })
            .filter(|&i| given(i))
            .collect()
    }

    /// Whether, in function `holder`, every path from `w` to the function's return passes
    /// `u` after it (same block: `w` first; else `u`'s block post-dominates `w`'s).
    fn comes_before(&self, holder: usize, w: V, u: V) -> bool {
        let f = &self.ir.funcs[holder];
        let (_, wb) = self.ir.place[&w];
        let (_, ub) = self.ir.place[&u];
        if wb == ub {
            let at = |x| f.insts[wb].iter().position(|&i| i == x);
            return at(w) < at(u);
        }
        let mut b = f.ipdom[wb];
        let mut steps = 0;
        while let Some(p) = b {
            if p == ub {
                return true;
            }
            b = f.ipdom[p];
            steps += 1;
            if steps > f.blocks.len() {
                break;
            }
        }
        false
    }

    /// Whether block `a` dominates block `b` of the function.
    fn dominates(&self, a: usize, b: usize) -> bool {
        let mut x = Some(b);
        let mut steps = 0;
        while let Some(y) = x {
            if y == a {
                return true;
            }
            x = self.idom[y];
            steps += 1;
            if steps > self.idom.len() {
                break;
            }
        }
        false
    }

    /// Whether block `b` can reach itself.
    fn in_cycle(&self, b: usize) -> bool {
        let mut seen = HashSet::new();
        let mut todo = self.cfg.succs[b].clone();
        while let Some(x) = todo.pop() {
            if x == b {
                return true;
            }
            if seen.insert(x) {
                todo.extend(self.cfg.succs[x].iter().copied());
            }
        }
        false
    }

    /// Whether function `from` may call `to`, directly or through others.
    fn calls_reach(&self, from: usize, to: usize) -> bool {
        let mut seen = HashSet::new();
        let mut todo = vec![from];
        while let Some(f) = todo.pop() {
            if !seen.insert(f) {
                continue;
            }
            for &i in self.ir.funcs[f].insts.iter().flatten() {
                if !ir::is_call(i) {
                    continue;
                }
                match ir::direct_callee(i).and_then(|c| self.ir.index.get(&c)) {
                    Some(&g) if g == to => return true,
                    Some(&g) => todo.push(g),
                    None if ir::direct_callee(i).is_none() => return true,
                    None => {}
                }
            }
        }
        false
    }
}
