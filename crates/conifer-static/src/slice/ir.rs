//! The whole module as the slicer sees it: every defined function's blocks and instructions,
//! which function and block each instruction is in, direct call sites per function, functions
//! whose address is taken, and each block's control dependences (post-dominance frontiers).

use crate::cfg::Cfg;
use llvm_sys::core as llc;
use llvm_sys::prelude::{LLVMBasicBlockRef, LLVMModuleRef, LLVMValueRef};
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

/// An LLVM value (instruction, argument, function, global, constant).
pub type V = LLVMValueRef;

/// One defined function.
pub struct Func {
    /// The function.
    pub value: V,
    /// Its symbol.
    pub name: String,
    /// Its blocks, entry first.
    pub blocks: Vec<LLVMBasicBlockRef>,
    /// The instructions of each block, terminator last.
    pub insts: Vec<Vec<V>>,
    /// For each block, the blocks whose terminator decides whether it runs.
    pub control: Vec<Vec<usize>>,
    /// Immediate post-dominator of each block (`None`: an exit, or no common one).
    pub ipdom: Vec<Option<usize>>,
    /// For each block, the index of its first instruction that runs only after this
    /// invocation called `MPI_Finalize` (the block is dominated by a finalize call, or holds
    /// one before it), if any.
    pub finalized_from: Vec<Option<usize>>,
    /// Direct calls of this function, anywhere in the module.
    pub callers: Vec<V>,
    /// Used other than as a direct callee (may be called through a pointer).
    pub address_taken: bool,
    /// Takes variable arguments (`...`).
    pub variadic: bool,
}

/// The module's defined functions and where every instruction is.
pub struct Ir {
    /// Functions with a body.
    pub funcs: Vec<Func>,
    /// Function value → index in `funcs`.
    pub index: HashMap<V, usize>,
    /// Instruction → (function, block).
    pub place: HashMap<V, (usize, usize)>,
    /// Functions called only after their callers called `MPI_Finalize` (a final report).
    pub only_after_finalize: Vec<bool>,
    /// Calls through a pointer.
    pub indirect_calls: Vec<V>,
    /// Calls of library functions that call a function of the module back (OpenMP's
    /// `__kmpc_fork_call` runs a parallel region's outlined function): call → that function.
    /// Such a call is among the function's [`Func::callers`].
    pub callbacks: HashMap<V, usize>,
    /// Global variables.
    pub globals: Vec<V>,
    /// The module's data layout (type sizes, field offsets).
    pub layout: llvm_sys::target::LLVMTargetDataRef,
}

/// The symbol of a global value.
pub fn name_of(value: V) -> String {
    // SAFETY: `value` is a live global; the C API returns its name and length.
    unsafe {
        let mut len = 0;
        let ptr = llc::LLVMGetValueName2(value, &mut len);
        String::from_utf8_lossy(std::slice::from_raw_parts(ptr.cast::<u8>(), len)).into_owned()
    }
}

/// The opcode of an instruction.
pub fn opcode(inst: V) -> LLVMOpcode {
    // SAFETY: `inst` is a live instruction.
    unsafe { llc::LLVMGetInstructionOpcode(inst) }
}

/// Whether `inst` is a call or invoke.
pub fn is_call(inst: V) -> bool {
    matches!(
        opcode(inst),
        LLVMOpcode::LLVMCall | LLVMOpcode::LLVMInvoke | LLVMOpcode::LLVMCallBr
    )
}

/// The operands of a value.
pub fn operands(value: V) -> Vec<V> {
    // SAFETY: `value` is a live user; operand indices are in range.
    unsafe {
        (0..llc::LLVMGetNumOperands(value).max(0))
            .map(|i| llc::LLVMGetOperand(value, i as u32))
            .collect()
    }
}

/// The argument operands of a call (callee and bundle operands left out).
pub fn call_args(call: V) -> Vec<V> {
    // SAFETY: `call` is a call or invoke.
    unsafe {
        (0..llc::LLVMGetNumArgOperands(call))
            .map(|i| llc::LLVMGetOperand(call, i))
            .collect()
    }
}

/// The function a call calls directly, if any (through an alias too: clang calls a C++
/// constructor's or destructor's complete-object variant, `C1`/`D1`, an alias of its base
/// variant).
pub fn direct_callee(call: V) -> Option<V> {
    // SAFETY: `call` is a call or invoke.
    let target = unsafe { llc::LLVMGetCalledValue(call) };
    function_of(target)
}

/// The function `v` is, or is an alias of.
pub fn function_of(v: V) -> Option<V> {
    // SAFETY: classifying live values.
    unsafe {
        if !llc::LLVMIsAGlobalAlias(v).is_null() {
            let aliasee = llc::LLVMAliasGetAliasee(v);
            return (!llc::LLVMIsAFunction(aliasee).is_null()).then_some(aliasee);
        }
        (!llc::LLVMIsAFunction(v).is_null()).then_some(v)
    }
}

/// Whether `user` is a call or invoke instruction.
fn is_call_user(user: V) -> bool {
    // SAFETY: classifying a live value.
    unsafe { !llc::LLVMIsAInstruction(user).is_null() && is_call(user) }
}

/// Whether every use of alias `alias` calls it.
fn only_called(alias: V) -> bool {
    // SAFETY: walking the use list of a live alias.
    unsafe {
        let mut u = llc::LLVMGetFirstUse(alias);
        while !u.is_null() {
            let user = llc::LLVMGetUser(u);
            if !is_call_user(user) || llc::LLVMGetCalledValue(user) != alias {
                return false;
            }
            u = llc::LLVMGetNextUse(u);
        }
    }
    true
}

/// Whether `v` is a constant global variable (read-only memory).
pub fn is_constant_global(v: V) -> bool {
    // SAFETY: classifying a live value.
    unsafe { !llc::LLVMIsAGlobalVariable(v).is_null() && llc::LLVMIsGlobalConstant(v) != 0 }
}

/// Whether the instruction after `inst` is `unreachable` (a call that never returns).
pub fn followed_by_unreachable(inst: V) -> bool {
    // SAFETY: walking a live instruction list.
    unsafe {
        let next = llc::LLVMGetNextInstruction(inst);
        !next.is_null() && opcode(next) == LLVMOpcode::LLVMUnreachable
    }
}

/// The landing pad an invoke unwinds to (`None` for other instructions).
pub fn landing_pad(inst: V) -> Option<V> {
    if opcode(inst) != LLVMOpcode::LLVMInvoke {
        return None;
    }
    // SAFETY: `inst` is an invoke; its unwind block is live and non-empty.
    unsafe {
        let mut i = llc::LLVMGetFirstInstruction(llc::LLVMGetUnwindDest(inst));
        while !i.is_null() && opcode(i) == LLVMOpcode::LLVMPHI {
            i = llc::LLVMGetNextInstruction(i);
        }
        (!i.is_null()).then_some(i)
    }
}

/// Whether a call's target is inline assembly.
pub fn is_inline_asm(call: V) -> bool {
    // SAFETY: `call` is a call or invoke.
    unsafe { !llc::LLVMIsAInlineAsm(llc::LLVMGetCalledValue(call)).is_null() }
}

fn blocks_of(f: V) -> Vec<LLVMBasicBlockRef> {
    let mut out = Vec::new();
    // SAFETY: walking the block list of a live function.
    unsafe {
        let mut b = llc::LLVMGetFirstBasicBlock(f);
        while !b.is_null() {
            out.push(b);
            b = llc::LLVMGetNextBasicBlock(b);
        }
    }
    out
}

fn insts_of(b: LLVMBasicBlockRef) -> Vec<V> {
    let mut out = Vec::new();
    // SAFETY: walking the instruction list of a live block.
    unsafe {
        let mut i = llc::LLVMGetFirstInstruction(b);
        while !i.is_null() {
            out.push(i);
            i = llc::LLVMGetNextInstruction(i);
        }
    }
    out
}

/// Successor blocks of a terminator (unwind edges included).
pub fn successors(term: V) -> Vec<LLVMBasicBlockRef> {
    // SAFETY: `term` is a terminator.
    unsafe {
        (0..llc::LLVMGetNumSuccessors(term))
            .map(|i| llc::LLVMGetSuccessor(term, i))
            .collect()
    }
}

impl Ir {
    /// Indexes `module`.
    pub fn new(module: LLVMModuleRef) -> Ir {
        let mut funcs = Vec::new();
        let mut globals = Vec::new();
        // SAFETY: walking the function and global lists of a live module.
        unsafe {
            let mut g = llc::LLVMGetFirstGlobal(module);
            while !g.is_null() {
                globals.push(g);
                g = llc::LLVMGetNextGlobal(g);
            }
            let mut f = llc::LLVMGetFirstFunction(module);
            while !f.is_null() {
                if llc::LLVMCountBasicBlocks(f) > 0 {
                    funcs.push(function(f));
                }
                f = llc::LLVMGetNextFunction(f);
            }
        }
        let index: HashMap<V, usize> = funcs
            .iter()
            .enumerate()
            .map(|(i, f)| (f.value, i))
            .collect();
        let mut place = HashMap::new();
        let mut indirect_calls = Vec::new();
        let mut callbacks = HashMap::new();
        let mut callers: Vec<Vec<V>> = vec![Vec::new(); funcs.len()];
        for (fi, f) in funcs.iter().enumerate() {
            for (bi, insts) in f.insts.iter().enumerate() {
                for &i in insts {
                    place.insert(i, (fi, bi));
                    if !is_call(i) || is_inline_asm(i) {
                        continue;
                    }
                    match direct_callee(i) {
                        Some(g) => {
                            if let Some(&gi) = index.get(&g) {
                                callers[gi].push(i);
                            } else if let Some(gi) = called_back(&index, g, i) {
                                callers[gi].push(i);
                                callbacks.insert(i, gi);
                            }
                        }
                        None => indirect_calls.push(i),
                    }
                }
            }
        }
        for (f, c) in funcs.iter_mut().zip(callers) {
            f.address_taken = address_taken(f.value, &c, &callbacks);
            f.callers = c;
        }
        let only_after_finalize = only_after_finalize(&funcs, &place);
        Ir {
            funcs,
            index,
            place,
            only_after_finalize,
            indirect_calls,
            callbacks,
            globals,
            // SAFETY: the layout is owned by the module, which outlives the slicing.
            layout: unsafe { llvm_sys::target::LLVMGetModuleDataLayout(module) },
        }
    }

    /// The terminator of block `b` of function `f`.
    pub fn terminator(&self, f: usize, b: usize) -> V {
        *self.funcs[f].insts[b]
            .last()
            .expect("a block ends with a terminator")
    }

    /// Whether instruction `i` runs only after its function called `MPI_Finalize`, when
    /// nothing more is recorded.
    pub fn after_finalize(&self, i: V) -> bool {
        let Some(&(f, b)) = self.place.get(&i) else {
            return false;
        };
        self.only_after_finalize[f] || finalized_in_block(&self.funcs[f], b, i)
    }

    /// The argument of `call` (a direct call of a function of the module, or a call in
    /// [`Ir::callbacks`]) its callee receives as parameter `k`, if any.
    pub fn actual(&self, call: V, k: usize) -> Option<V> {
        let args = call_args(call);
        match self.callbacks.contains_key(&call) {
            true => {
                let name = direct_callee(call).map(name_of).unwrap_or_default();
                super::openmp::actual(&name, k).and_then(|a| args.get(a).copied())
            }
            false => args.get(k).copied(),
        }
    }

    /// The functions run before or after `main` (`llvm.global_ctors`, `llvm.global_dtors`).
    pub fn static_constructors(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for &g in &self.globals {
            let name = name_of(g);
            if name != "llvm.global_ctors" && name != "llvm.global_dtors" {
                continue;
            }
            // SAFETY: reading the initializer of a live global.
            let init = unsafe { llc::LLVMGetInitializer(g) };
            if init.is_null() {
                continue;
            }
            for entry in operands(init) {
                out.extend(
                    operands(entry)
                        .into_iter()
                        .filter_map(|v| self.index.get(&v).copied()),
                );
            }
        }
        out
    }

    /// Number of instructions in the module's defined functions.
    pub fn instruction_count(&self) -> usize {
        self.funcs
            .iter()
            .map(|f| f.insts.iter().map(Vec::len).sum::<usize>())
            .sum()
    }
}

/// Whether instruction `i` of block `b` of `f` runs after `f` called `MPI_Finalize`.
fn finalized_in_block(f: &Func, b: usize, i: V) -> bool {
    f.finalized_from[b].is_some_and(|k| f.insts[b][k..].contains(&i))
}

/// [`Ir::only_after_finalize`]: functions every direct call of which runs after its caller
/// called `MPI_Finalize` or in such a function (never the entry or one called through a
/// pointer).
fn only_after_finalize(funcs: &[Func], place: &HashMap<V, (usize, usize)>) -> Vec<bool> {
    let mut after = vec![false; funcs.len()];
    loop {
        let mut changed = false;
        for (g, f) in funcs.iter().enumerate() {
            if after[g] || f.callers.is_empty() || f.address_taken {
                continue;
            }
            let all = f.callers.iter().all(|&c| {
                let (cf, cb) = place[&c];
                cf != g && (after[cf] || finalized_in_block(&funcs[cf], cb, c))
            });
            if all {
                after[g] = true;
                changed = true;
            }
        }
        if !changed {
            return after;
        }
    }
}

/// The function of the module library call `call` of `library` calls back, if any.
fn called_back(index: &HashMap<V, usize>, library: V, call: V) -> Option<usize> {
    let k = super::openmp::callback(&name_of(library))?;
    index.get(call_args(call).get(k)?).copied()
}

/// Whether `f` has a use other than as the callee of one of `direct` (its direct calls and
/// the library calls calling it back, `callbacks`).
fn address_taken(f: V, direct: &[V], callbacks: &HashMap<V, usize>) -> bool {
    // SAFETY: walking the use list of a live function.
    unsafe {
        let mut u = llc::LLVMGetFirstUse(f);
        while !u.is_null() {
            let user = llc::LLVMGetUser(u);
            let as_callee = direct.contains(&user)
                && (llc::LLVMGetCalledValue(user) == f || callbacks.contains_key(&user))
                || !llc::LLVMIsAGlobalAlias(user).is_null() && only_called(user);
            // `llvm.used` and similar metadata arrays keep a function alive without calling it.
            let used_list = !llc::LLVMIsAConstant(user).is_null()
                && llc::LLVMIsAGlobalValue(user).is_null()
                && only_in_metadata_globals(user);
            if !as_callee && !used_list {
                return true;
            }
            u = llc::LLVMGetNextUse(u);
        }
    }
    false
}

/// A constant used only by `llvm.*` globals (`llvm.used`, `llvm.compiler.used`).
fn only_in_metadata_globals(constant: V) -> bool {
    // SAFETY: walking the use list of a live constant.
    unsafe {
        let mut u = llc::LLVMGetFirstUse(constant);
        if u.is_null() {
            return false;
        }
        while !u.is_null() {
            let user = llc::LLVMGetUser(u);
            if llc::LLVMIsAGlobalVariable(user).is_null() || !name_of(user).starts_with("llvm.") {
                return false;
            }
            u = llc::LLVMGetNextUse(u);
        }
    }
    true
}

/// The control-flow graph of `f`'s blocks (unwind edges included).
pub fn cfg_of(f: &Func) -> Cfg {
    cfg_from(&f.blocks, &f.insts)
}

fn cfg_from(blocks: &[LLVMBasicBlockRef], insts: &[Vec<V>]) -> Cfg {
    let number: HashMap<LLVMBasicBlockRef, usize> =
        blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let succs: Vec<Vec<usize>> = insts
        .iter()
        .map(|is| {
            let mut s: Vec<usize> = is
                .last()
                .map(|&t| successors(t).iter().map(|b| number[b]).collect())
                .unwrap_or_default();
            s.dedup();
            s
        })
        .collect();
    Cfg::new(succs)
}

fn function(f: V) -> Func {
    let blocks = blocks_of(f);
    let insts: Vec<Vec<V>> = blocks.iter().map(|&b| insts_of(b)).collect();
    let cfg = cfg_from(&blocks, &insts);
    // Post-dominance towards the returns: a path ending in `unreachable` (after `exit`,
    // Fortran's `STOP`) does not leave normally, so a branch around it has the return path's
    // join as post-dominator, where it can jump once the exit is removed.
    let returns: Vec<usize> = insts
        .iter()
        .enumerate()
        .filter(|(_, is)| is.last().is_some_and(|&t| opcode(t) == LLVMOpcode::LLVMRet))
        .map(|(b, _)| b)
        .collect();
    let ipdom = match returns.is_empty() {
        true => cfg.ipdoms(),
        false => cfg.ipdoms_to(&returns),
    };
    let finalized_from = finalized_from(&cfg, &insts);
    let mut control = vec![Vec::new(); blocks.len()];
    for (a, ss) in cfg.succs.iter().enumerate() {
        for &s in ss {
            // Every block on the post-dominator tree path from `s` up to (not including)
            // ipdom(a) runs only when `a` branches to `s`.
            let mut runner = Some(s);
            let mut steps = 0;
            while let Some(r) = runner {
                if Some(r) == ipdom[a] || steps > blocks.len() {
                    break;
                }
                if !control[r].contains(&a) {
                    control[r].push(a);
                }
                runner = ipdom[r];
                steps += 1;
            }
        }
    }
    Func {
        value: f,
        name: name_of(f),
        blocks,
        insts,
        control,
        ipdom,
        finalized_from,
        callers: Vec::new(),
        address_taken: false,
        // SAFETY: reading the type of a live function.
        variadic: unsafe { llc::LLVMIsFunctionVarArg(llc::LLVMGlobalGetValueType(f)) != 0 },
    }
}

/// Whether `i` calls `MPI_Finalize` (C or Fortran binding).
fn is_finalize(i: V) -> bool {
    is_call(i)
        && direct_callee(i)
            .and_then(|c| crate::ir::mpi_name(&name_of(c)))
            .is_some_and(|n| n == "MPI_Finalize")
}

/// [`Func::finalized_from`] of every block: after a finalize call in the same block, or from
/// the start of a block a block with a finalize call dominates.
fn finalized_from(cfg: &Cfg, insts: &[Vec<V>]) -> Vec<Option<usize>> {
    let own: Vec<Option<usize>> = insts
        .iter()
        .map(|is| is.iter().position(|&i| is_finalize(i)).map(|k| k + 1))
        .collect();
    if own.iter().all(Option::is_none) {
        return own;
    }
    let idom = cfg.idoms();
    (0..insts.len())
        .map(|b| {
            let mut d = idom[b];
            let mut steps = 0;
            while let Some(a) = d {
                if own[a].is_some() {
                    return Some(0);
                }
                d = idom[a];
                steps += 1;
                if steps > insts.len() {
                    break;
                }
            }
            own[b]
        })
        .collect()
}
