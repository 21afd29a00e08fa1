//! Removes what the slice does not keep and tags unmarked MPI calls.
//!
//! Dead instructions are replaced by `poison` in their (dead) uses and erased; a dead branch
//! becomes a branch to its immediate post-dominator (nothing between them is live, so no
//! live phi there has an edge from the region skipped); functions no live code runs in are
//! emptied to `unreachable`. Blocks left unreachable are removed by the optimiser afterwards.
//! Before every unmarked MPI call the runtime can leave out, a call of
//! `conifer_slice_skip()` (a weak reference, called only when libconifer is loaded) tells the
//! runtime to record the next MPI call without executing it. The entry checks first that it
//! runs under Conifer.

use super::ir::{self, Ir, V};
use super::live::Liveness;
use super::worlds::{Worlds, EACH};
use llvm_sys::core as llc;
use llvm_sys::prelude::{LLVMContextRef, LLVMModuleRef};
use llvm_sys::LLVMOpcode as Op;

/// What the transformation did.
pub struct Done {
    /// Functions emptied.
    pub emptied: Vec<String>,
    /// Unmarked MPI calls tagged.
    pub tagged: usize,
    /// Instructions of the program left in blocks still reachable (emptied functions, skip
    /// calls and the helper the pass adds not counted), in the full run and in the guarded
    /// version's run ([`super::worlds`]; both alike without a guard).
    pub kept: [usize; 2],
}

/// Applies `live` to `module`, whose entry function is `entry` (it gets the check that the
/// program runs under Conifer, [`super::guard`]); `worlds` says which run each block is in.
pub fn apply(
    module: LLVMModuleRef,
    ir: &Ir,
    live: &Liveness,
    entry: Option<usize>,
    worlds: &Worlds,
) -> Done {
    let mut done = Done {
        emptied: Vec::new(),
        tagged: 0,
        kept: [0; 2],
    };
    // SAFETY: the module and every value in `ir` are live; values are erased only after
    // their uses are replaced, and each at most once.
    unsafe {
        let context = llc::LLVMGetModuleContext(module);
        let builder = llc::LLVMCreateBuilderInContext(context);
        for (fi, f) in ir.funcs.iter().enumerate() {
            if !live.active[fi] {
                empty(context, builder, f.value, f.insts.iter().flatten().copied());
                done.emptied.push(f.name.clone());
                continue;
            }
            if !live.returns_used[fi] {
                for &r in f.insts.iter().flatten() {
                    if ir::opcode(r) == Op::LLVMRet && llc::LLVMGetNumOperands(r) == 1 {
                        let ty = llc::LLVMTypeOf(llc::LLVMGetOperand(r, 0));
                        llc::LLVMSetOperand(r, 0, llc::LLVMConstNull(ty));
                    }
                }
            }
            let mut dead_terms = Vec::new();
            for (b, insts) in f.insts.iter().enumerate() {
                for &i in insts {
                    if live.live.contains(&i) {
                        continue;
                    }
                    if Some(&i) == insts.last() {
                        // An `unreachable` is left where it is: its block is entered only
                        // when a live branch leads there.
                        if ir::opcode(i) != Op::LLVMUnreachable {
                            dead_terms.push((b, i));
                        }
                    } else {
                        llc::LLVMReplaceAllUsesWith(i, llc::LLVMGetPoison(llc::LLVMTypeOf(i)));
                    }
                }
            }
            for &i in f.insts.iter().flatten() {
                let term = !llc::LLVMIsATerminatorInst(i).is_null();
                if !term && !live.live.contains(&i) {
                    llc::LLVMInstructionEraseFromParent(i);
                }
            }
            for (b, term) in dead_terms {
                let to = f.blocks[f.ipdom[b].expect("branches without a post-dominator are live")];
                llc::LLVMPositionBuilderBefore(builder, term);
                llc::LLVMBuildBr(builder, to);
                llc::LLVMReplaceAllUsesWith(term, llc::LLVMGetPoison(llc::LLVMTypeOf(term)));
                llc::LLVMInstructionEraseFromParent(term);
                add_missing_incoming(to, f.blocks[b]);
            }
        }
        for (fi, f) in ir.funcs.iter().enumerate() {
            if live.active[fi] {
                let kept = reachable_instructions(f, |b| worlds.of_block(fi, b));
                done.kept[0] += kept[0];
                done.kept[1] += kept[1];
            }
        }
        let hook = skip_helper(context, module);
        if let Some(e) = entry {
            let target = llc::LLVMGetNamedFunction(module, c"conifer_slice_skip".as_ptr());
            super::guard::insert(context, module, ir.funcs[e].value, target);
        }
        for (&call, mpi) in &live.mpi {
            // Calls in functions that never run are gone.
            let kept = live.live.contains(&call);
            if kept && mpi.skip().is_some() && !live.marked.contains(&call) {
                llc::LLVMPositionBuilderBefore(builder, call);
                let ty = llc::LLVMGlobalGetValueType(hook);
                llc::LLVMBuildCall2(builder, ty, hook, std::ptr::null_mut(), 0, c"".as_ptr());
                done.tagged += 1;
            }
        }
        llc::LLVMDisposeBuilder(builder);
    }
    done
}

/// Instructions in the blocks of `f` reachable from its entry, counted in each run the
/// block is in (`runs` of a block index; blocks made since indexing count in both).
unsafe fn reachable_instructions(f: &ir::Func, runs: impl Fn(usize) -> u8) -> [usize; 2] {
    let index: std::collections::HashMap<_, usize> =
        f.blocks.iter().enumerate().map(|(k, &b)| (b, k)).collect();
    let mut seen = std::collections::HashSet::new();
    let mut todo = vec![llc::LLVMGetEntryBasicBlock(f.value)];
    let mut count = [0; 2];
    while let Some(b) = todo.pop() {
        if !seen.insert(b) {
            continue;
        }
        let block_runs = index.get(&b).map_or(super::worlds::BOTH, |&k| runs(k));
        let mut i = llc::LLVMGetFirstInstruction(b);
        while !i.is_null() {
            for (k, run) in EACH {
                if block_runs & run != 0 {
                    count[k] += 1;
                }
            }
            i = llc::LLVMGetNextInstruction(i);
        }
        todo.extend(ir::successors(llc::LLVMGetBasicBlockTerminator(b)));
    }
    count
}

/// Replaces a function's body by `unreachable`.
unsafe fn empty(
    context: LLVMContextRef,
    builder: llvm_sys::prelude::LLVMBuilderRef,
    f: V,
    insts: impl Iterator<Item = V>,
) {
    for i in insts {
        llc::LLVMReplaceAllUsesWith(i, llc::LLVMGetPoison(llc::LLVMTypeOf(i)));
    }
    let mut b = llc::LLVMGetFirstBasicBlock(f);
    while !b.is_null() {
        let next = llc::LLVMGetNextBasicBlock(b);
        llc::LLVMDeleteBasicBlock(b);
        b = next;
    }
    let entry = llc::LLVMAppendBasicBlockInContext(context, f, c"sliced".as_ptr());
    llc::LLVMPositionBuilderAtEnd(builder, entry);
    llc::LLVMSetCurrentDebugLocation2(builder, std::ptr::null_mut());
    llc::LLVMBuildUnreachable(builder);
}

/// Gives every phi of `to` an incoming value from `from` if it has none (a `poison`: such a
/// phi is dead, kept only until the optimiser removes it).
unsafe fn add_missing_incoming(
    to: llvm_sys::prelude::LLVMBasicBlockRef,
    from: llvm_sys::prelude::LLVMBasicBlockRef,
) {
    let mut i = llc::LLVMGetFirstInstruction(to);
    while !i.is_null() && ir::opcode(i) == Op::LLVMPHI {
        let has = (0..llc::LLVMCountIncoming(i)).any(|k| llc::LLVMGetIncomingBlock(i, k) == from);
        if !has {
            let mut value = llc::LLVMGetPoison(llc::LLVMTypeOf(i));
            let mut block = from;
            llc::LLVMAddIncoming(i, &mut value, &mut block, 1);
        }
        i = llc::LLVMGetNextInstruction(i);
    }
}

/// `internal alwaysinline void conifer.slice.skip() { if (&conifer_slice_skip) conifer_slice_skip(); }`
unsafe fn skip_helper(context: LLVMContextRef, module: LLVMModuleRef) -> V {
    let void = llc::LLVMVoidTypeInContext(context);
    let ty = llc::LLVMFunctionType(void, std::ptr::null_mut(), 0, 0);
    let target = llc::LLVMAddFunction(module, c"conifer_slice_skip".as_ptr(), ty);
    llc::LLVMSetLinkage(target, llvm_sys::LLVMLinkage::LLVMExternalWeakLinkage);
    let helper = llc::LLVMAddFunction(module, c"conifer.slice.skip".as_ptr(), ty);
    llc::LLVMSetLinkage(helper, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
    let kind = llc::LLVMGetEnumAttributeKindForName(c"alwaysinline".as_ptr(), 12);
    let attr = llc::LLVMCreateEnumAttribute(context, kind, 0);
    llc::LLVMAddAttributeAtIndex(helper, llvm_sys::LLVMAttributeFunctionIndex, attr);
    let entry = llc::LLVMAppendBasicBlockInContext(context, helper, c"entry".as_ptr());
    let call = llc::LLVMAppendBasicBlockInContext(context, helper, c"call".as_ptr());
    let done = llc::LLVMAppendBasicBlockInContext(context, helper, c"done".as_ptr());
    let b = llc::LLVMCreateBuilderInContext(context);
    llc::LLVMPositionBuilderAtEnd(b, entry);
    let present = llc::LLVMBuildIsNotNull(b, target, c"present".as_ptr());
    llc::LLVMBuildCondBr(b, present, call, done);
    llc::LLVMPositionBuilderAtEnd(b, call);
    llc::LLVMBuildCall2(b, ty, target, std::ptr::null_mut(), 0, c"".as_ptr());
    llc::LLVMBuildBr(b, done);
    llc::LLVMPositionBuilderAtEnd(b, done);
    llc::LLVMBuildRetVoid(b);
    llc::LLVMDisposeBuilder(b);
    helper
}
