//! Copies of code for the guarded version: the rest of a function from a dispatch point on
//! ([`Cloner::split`], [`Cloner::copy_region`]), and whole functions the copies call
//! ([`Cloner::function`]), each copy calling copies. Copies keep their source locations.

use super::super::ir::{self, V};
use llvm_sys::core as llc;
use llvm_sys::prelude::{LLVMBasicBlockRef, LLVMBuilderRef, LLVMContextRef, LLVMModuleRef};
use llvm_sys::LLVMOpcode as Op;
use std::collections::{HashMap, HashSet};

/// Suffix of the guarded version's copy of a function.
pub const SUFFIX: &str = ".conifer.guarded";

/// Makes and remembers the guarded version's copies.
pub struct Cloner {
    module: LLVMModuleRef,
    context: LLVMContextRef,
    builder: LLVMBuilderRef,
    /// Original function → its guarded copy.
    copies: HashMap<V, V>,
    /// Blocks of the full version after a dispatch point.
    pub full_blocks: HashSet<LLVMBasicBlockRef>,
    /// Blocks of the guarded version's copies of regions.
    pub guarded_blocks: HashSet<LLVMBasicBlockRef>,
}

impl Cloner {
    /// A cloner for `module`.
    ///
    /// # Safety
    /// `module` is live for the cloner's life.
    pub unsafe fn new(module: LLVMModuleRef) -> Cloner {
        let context = llc::LLVMGetModuleContext(module);
        Cloner {
            module,
            context,
            builder: llc::LLVMCreateBuilderInContext(context),
            copies: HashMap::new(),
            full_blocks: HashSet::new(),
            guarded_blocks: HashSet::new(),
        }
    }

    /// The guarded copies of functions made so far.
    pub fn guarded_functions(&self) -> HashSet<V> {
        self.copies.values().copied().collect()
    }

    /// Splits the block of `at` before it: what precedes `at` (phis included) moves to a new
    /// block, which the block's predecessors now branch to and which is left without a
    /// terminator. Returns (that new block, the block now starting at `at`).
    ///
    /// # Safety
    /// `at` is a live, non-phi instruction.
    pub unsafe fn split(&mut self, at: V) -> (LLVMBasicBlockRef, LLVMBasicBlockRef) {
        let rest = llc::LLVMGetInstructionParent(at);
        let function = llc::LLVMGetBasicBlockParent(rest);
        let head =
            llc::LLVMInsertBasicBlockInContext(self.context, rest, c"conifer.dispatch".as_ptr());
        let mut b = llc::LLVMGetFirstBasicBlock(function);
        while !b.is_null() {
            if b != head {
                let term = llc::LLVMGetBasicBlockTerminator(b);
                if !term.is_null() {
                    for k in 0..llc::LLVMGetNumSuccessors(term) {
                        if llc::LLVMGetSuccessor(term, k) == rest {
                            llc::LLVMSetSuccessor(term, k, head);
                        }
                    }
                }
            }
            b = llc::LLVMGetNextBasicBlock(b);
        }
        llc::LLVMPositionBuilderAtEnd(self.builder, head);
        let mut i = llc::LLVMGetFirstInstruction(rest);
        while i != at {
            let next = llc::LLVMGetNextInstruction(i);
            llc::LLVMInstructionRemoveFromParent(i);
            llc::LLVMInsertIntoBuilder(self.builder, i);
            i = next;
        }
        (head, rest)
    }

    /// Copies every block reachable from `start` (in `start`'s function) for the guarded
    /// version; the originals are the full version's. Returns the copy of each instruction
    /// and the copy of `start`.
    ///
    /// # Safety
    /// `start` is a live block without phis, not reachable from itself.
    pub unsafe fn copy_region(
        &mut self,
        start: LLVMBasicBlockRef,
    ) -> (HashMap<V, V>, LLVMBasicBlockRef) {
        let function = llc::LLVMGetBasicBlockParent(start);
        let mut region = Vec::new();
        let mut seen = HashSet::new();
        let mut todo = vec![start];
        while let Some(b) = todo.pop() {
            if seen.insert(b) {
                region.push(b);
                todo.extend(ir::successors(llc::LLVMGetBasicBlockTerminator(b)));
            }
        }
        let (values, blocks) = self.copy_blocks(&region, function, HashMap::new());
        self.full_blocks.extend(region.iter().copied());
        self.guarded_blocks.extend(blocks.values().copied());
        (values, blocks[&start])
    }

    /// The guarded copy of function `f` (made on first use, its calls calling copies).
    ///
    /// # Safety
    /// `f` is a live function with a body.
    pub unsafe fn function(&mut self, f: V) -> V {
        if let Some(&g) = self.copies.get(&f) {
            return g;
        }
        let name = format!("{}{SUFFIX}", ir::name_of(f));
        let name = std::ffi::CString::new(name).expect("symbols have no NUL");
        let g = llc::LLVMAddFunction(self.module, name.as_ptr(), llc::LLVMGlobalGetValueType(f));
        llc::LLVMSetLinkage(g, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
        llc::LLVMSetFunctionCallConv(g, llc::LLVMGetFunctionCallConv(f));
        if llc::LLVMHasPersonalityFn(f) != 0 {
            llc::LLVMSetPersonalityFn(g, llc::LLVMGetPersonalityFn(f));
        }
        let params = llc::LLVMCountParams(f);
        let mut slots = vec![
            llvm_sys::LLVMAttributeFunctionIndex,
            llvm_sys::LLVMAttributeReturnIndex,
        ];
        slots.extend(1..=params);
        for slot in slots {
            let n = llc::LLVMGetAttributeCountAtIndex(f, slot);
            let mut attrs = vec![std::ptr::null_mut(); n as usize];
            llc::LLVMGetAttributesAtIndex(f, slot, attrs.as_mut_ptr());
            for a in attrs {
                llc::LLVMAddAttributeAtIndex(g, slot, a);
            }
        }
        self.copies.insert(f, g);
        let mut values = HashMap::new();
        for k in 0..params {
            values.insert(llc::LLVMGetParam(f, k), llc::LLVMGetParam(g, k));
        }
        let mut blocks = Vec::new();
        let mut b = llc::LLVMGetFirstBasicBlock(f);
        while !b.is_null() {
            blocks.push(b);
            b = llc::LLVMGetNextBasicBlock(b);
        }
        let (copied, _) = self.copy_blocks(&blocks, g, values);
        self.call_copies(copied.values().copied());
        g
    }

    /// Makes the direct calls among `insts` of the program's own functions call their
    /// guarded copies (the structure tree's hooks excepted).
    ///
    /// # Safety
    /// `insts` are live instructions.
    pub unsafe fn call_copies(&mut self, insts: impl IntoIterator<Item = V>) {
        let calls: Vec<V> = insts.into_iter().filter(|&i| ir::is_call(i)).collect();
        for call in calls {
            let Some(callee) = ir::direct_callee(call) else {
                continue;
            };
            let name = ir::name_of(callee);
            let own = llc::LLVMCountBasicBlocks(callee) > 0;
            if !own || name.starts_with("conifer") || name.ends_with(SUFFIX) {
                continue;
            }
            let copy = self.function(callee);
            let last = (llc::LLVMGetNumOperands(call) - 1) as u32;
            llc::LLVMSetOperand(call, last, copy);
        }
    }

    /// Copies `blocks` to the end of `into`, operands mapped through `values` (extended with
    /// every copied instruction) and the copied blocks; a phi keeps only the edges from
    /// copied blocks. Returns the value and block maps.
    unsafe fn copy_blocks(
        &mut self,
        blocks: &[LLVMBasicBlockRef],
        into: V,
        mut values: HashMap<V, V>,
    ) -> (HashMap<V, V>, HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef>) {
        let map: HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef> = blocks
            .iter()
            .map(|&b| {
                let copy = llc::LLVMAppendBasicBlockInContext(
                    self.context,
                    into,
                    c"conifer.guarded".as_ptr(),
                );
                (b, copy)
            })
            .collect();
        let mut phis = Vec::new();
        let mut copied = Vec::new();
        for &b in blocks {
            llc::LLVMPositionBuilderAtEnd(self.builder, map[&b]);
            let mut i = llc::LLVMGetFirstInstruction(b);
            while !i.is_null() {
                let copy = match ir::opcode(i) {
                    Op::LLVMPHI => {
                        let phi = llc::LLVMBuildPhi(self.builder, llc::LLVMTypeOf(i), c"".as_ptr());
                        phis.push((i, phi));
                        phi
                    }
                    _ => {
                        let c = llc::LLVMInstructionClone(i);
                        llc::LLVMInsertIntoBuilder(self.builder, c);
                        copied.push(c);
                        c
                    }
                };
                values.insert(i, copy);
                i = llc::LLVMGetNextInstruction(i);
            }
        }
        for c in copied {
            for k in 0..llc::LLVMGetNumOperands(c).max(0) as u32 {
                let op = llc::LLVMGetOperand(c, k);
                if let Some(&v) = values.get(&op) {
                    llc::LLVMSetOperand(c, k, v);
                } else if llc::LLVMValueIsBasicBlock(op) != 0 {
                    if let Some(&nb) = map.get(&llc::LLVMValueAsBasicBlock(op)) {
                        llc::LLVMSetOperand(c, k, llc::LLVMBasicBlockAsValue(nb));
                    }
                }
            }
        }
        for (phi, copy) in phis {
            for k in 0..llc::LLVMCountIncoming(phi) {
                let from = llc::LLVMGetIncomingBlock(phi, k);
                let Some(&nb) = map.get(&from) else {
                    continue;
                };
                let v = llc::LLVMGetIncomingValue(phi, k);
                let mut value = values.get(&v).copied().unwrap_or(v);
                let mut block = nb;
                llc::LLVMAddIncoming(copy, &mut value, &mut block, 1);
            }
        }
        (values, map)
    }
}

impl Drop for Cloner {
    fn drop(&mut self) {
        // SAFETY: the builder was created by `new` and is disposed once.
        unsafe { llc::LLVMDisposeBuilder(self.builder) }
    }
}
