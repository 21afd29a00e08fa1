//! Inserts the runtime hooks (defined in libconifer, `conifer-preload/src/record/structure.rs`).
//!
//! Every hook takes a vertex id local to the function it is in: the function's pruned tree
//! numbered in pre-order from 0. A call whose callee's tree was spliced in is bracketed by
//! `conifer_call_enter(p)`/`conifer_call_exit(p)`, `p` being the local id of the first spliced
//! vertex, so the runtime keeps a stack of bases and the global id of a local id `i` is
//! `base + i` (the entry function's base is 1; the root is 0). Opaque calls push `u32::MAX`
//! (unknown context). The hooks are weak references called only when they resolve, so an
//! instrumented program runs unchanged without libconifer and reports to it when it is
//! preloaded.

use crate::inter::Expanded;
use crate::intra::Analysis;
use crate::ir::Function;
use crate::tree::{self, Origin};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, FunctionValue, InstructionOpcode, InstructionValue};
use llvm_sys::core as llc;
use std::collections::HashMap;

/// The hooks, by the suffix of their `conifer_` symbol.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Hook {
    LoopEnter,
    LoopIter,
    LoopExit,
    Branch,
    MpiSite,
    CallEnter,
    CallExit,
    RecursionEnter,
    RecursionExit,
}

impl Hook {
    fn symbol(self) -> &'static str {
        match self {
            Hook::LoopEnter => "conifer_loop_enter",
            Hook::LoopIter => "conifer_loop_iter",
            Hook::LoopExit => "conifer_loop_exit",
            Hook::Branch => "conifer_branch",
            Hook::MpiSite => "conifer_mpi_site",
            Hook::CallEnter => "conifer_call_enter",
            Hook::CallExit => "conifer_call_exit",
            Hook::RecursionEnter => "conifer_recursion_enter",
            Hook::RecursionExit => "conifer_recursion_exit",
        }
    }
}

/// Id pushed for calls the tree does not follow.
const UNKNOWN: u32 = u32::MAX;

/// Inserts hooks into one module.
pub struct Instrumenter<'ctx, 'm> {
    context: &'ctx Context,
    module: &'m Module<'ctx>,
    builder: Builder<'ctx>,
    helpers: HashMap<Hook, FunctionValue<'ctx>>,
    /// Number of hook calls inserted.
    pub inserted: usize,
}

impl<'ctx, 'm> Instrumenter<'ctx, 'm> {
    /// An instrumenter for `module`.
    pub fn new(context: &'ctx Context, module: &'m Module<'ctx>) -> Self {
        Instrumenter {
            context,
            module,
            builder: context.create_builder(),
            helpers: HashMap::new(),
            inserted: 0,
        }
    }

    /// `internal alwaysinline void conifer.hook.X(i32 id) { if (&conifer_X) conifer_X(id); }`
    fn helper(&mut self, hook: Hook) -> FunctionValue<'ctx> {
        if let Some(&f) = self.helpers.get(&hook) {
            return f;
        }
        let ty = self
            .context
            .void_type()
            .fn_type(&[self.context.i32_type().into()], false);
        let target = self.module.get_function(hook.symbol()).unwrap_or_else(|| {
            self.module
                .add_function(hook.symbol(), ty, Some(Linkage::ExternalWeak))
        });
        let name = format!("conifer.hook.{}", &hook.symbol()["conifer_".len()..]);
        let helper = self.module.add_function(&name, ty, Some(Linkage::Internal));
        let inline = Attribute::get_named_enum_kind_id("alwaysinline");
        helper.add_attribute(
            AttributeLoc::Function,
            self.context.create_enum_attribute(inline, 0),
        );
        let entry = self.context.append_basic_block(helper, "entry");
        let call = self.context.append_basic_block(helper, "call");
        let done = self.context.append_basic_block(helper, "done");
        let b = self.context.create_builder();
        b.position_at_end(entry);
        let present = b
            .build_is_not_null(target.as_global_value().as_pointer_value(), "present")
            .expect("icmp");
        b.build_conditional_branch(present, call, done).expect("br");
        b.position_at_end(call);
        let id = helper.get_nth_param(0).expect("param");
        b.build_call(target, &[id.into()], "").expect("call");
        b.build_unconditional_branch(done).expect("br");
        b.position_at_end(done);
        b.build_return(None).expect("ret");
        self.helpers.insert(hook, helper);
        helper
    }

    fn emit_before(&mut self, at: InstructionValue<'ctx>, hook: Hook, id: u32) {
        let helper = self.helper(hook);
        self.builder.position_before(&at);
        let arg = self.context.i32_type().const_int(u64::from(id), false);
        self.builder
            .build_call(helper, &[arg.into()], "")
            .expect("call");
        self.inserted += 1;
    }

    /// Splits the edge `from -> to` (all of `from`'s edges to `to`), returning the new block,
    /// or `None` when the terminator's edges cannot be split.
    fn split_edge(
        &mut self,
        from: BasicBlock<'ctx>,
        to: BasicBlock<'ctx>,
    ) -> Option<BasicBlock<'ctx>> {
        let term = from.get_terminator()?;
        if !matches!(
            term.get_opcode(),
            InstructionOpcode::Br | InstructionOpcode::Switch | InstructionOpcode::Invoke
        ) {
            return None;
        }
        let middle = self.context.insert_basic_block_after(from, "conifer.edge");
        // SAFETY: `term` is a terminator of a live block; successors are rewired in place.
        unsafe {
            let t = term.as_value_ref();
            for i in 0..llc::LLVMGetNumSuccessors(t) {
                if llc::LLVMGetSuccessor(t, i) == to.as_mut_ptr() {
                    llc::LLVMSetSuccessor(t, i, middle.as_mut_ptr());
                }
            }
        }
        // Positioning before `term` gives the builder `term`'s debug location (same function).
        self.builder.position_before(&term);
        self.builder.position_at_end(middle);
        self.builder.build_unconditional_branch(to).expect("br");
        let phis: Vec<InstructionValue> = instructions(to)
            .into_iter()
            .take_while(|i| i.get_opcode() == InstructionOpcode::Phi)
            .collect();
        for phi in phis {
            // SAFETY: rebuilding a phi with the same incoming values, `from` replaced by
            // `middle` (once), then replacing and erasing the old one.
            unsafe {
                let p = phi.as_value_ref();
                let first = to.get_first_instruction().expect("phi block");
                self.builder.position_before(&first);
                let new =
                    llc::LLVMBuildPhi(self.builder.as_mut_ptr(), llc::LLVMTypeOf(p), c"".as_ptr());
                let mut seen_from = false;
                for i in 0..llc::LLVMCountIncoming(p) {
                    let mut value = llc::LLVMGetIncomingValue(p, i);
                    let mut block = llc::LLVMGetIncomingBlock(p, i);
                    if block == from.as_mut_ptr() {
                        if seen_from {
                            continue;
                        }
                        seen_from = true;
                        block = middle.as_mut_ptr();
                    }
                    llc::LLVMAddIncoming(new, &mut value, &mut block, 1);
                }
                llc::LLVMReplaceAllUsesWith(p, new);
                llc::LLVMInstructionEraseFromParent(p);
            }
        }
        Some(middle)
    }

    /// Inserts every hook of function `f` given its expanded tree.
    pub fn function(&mut self, f: &Function<'ctx>, a: &Analysis, e: &Expanded) {
        let numbering = tree::number(&e.forest, 0);
        // Hooks at block starts, ordered by rank.
        let mut starts: Vec<(usize, (u8, usize), Hook, u32)> = Vec::new();
        let mut arms: Vec<(usize, usize, u32)> = Vec::new();
        let mut before: Vec<(usize, Hook, u32)> = Vec::new();
        let mut after: Vec<(usize, Hook, u32)> = Vec::new();
        for (&origin, &id) in &numbering.vertices {
            match origin {
                Origin::Loop(h) => {
                    let l = &a.loops[a.loop_at(h).expect("loop header")];
                    if let Some(p) = l.preheader {
                        let term = f.blocks[p].block.get_terminator().expect("terminator");
                        self.emit_before(term, Hook::LoopEnter, id);
                    }
                    starts.push((h, (3, 0), Hook::LoopIter, id));
                    for &x in &l.exits {
                        starts.push((x, (1, usize::MAX - l.depth), Hook::LoopExit, id));
                    }
                }
                Origin::Arm { branch, succ } => arms.push((branch, succ, id)),
                Origin::ExitArm(x) => starts.push((x, (2, 0), Hook::Branch, id)),
                Origin::Site(c) => before.push((c, Hook::MpiSite, id)),
                Origin::Recursion => {
                    starts.push((0, (0, 0), Hook::RecursionEnter, id));
                    for b in &f.blocks {
                        if let Some(t) = b.block.get_terminator() {
                            if t.get_opcode() == InstructionOpcode::Return {
                                self.emit_before(t, Hook::RecursionExit, id);
                            }
                        }
                    }
                }
                Origin::Continuation(c) => after.push((c, Hook::Branch, id)),
            }
        }
        for (&c, &p) in &numbering.splices {
            before.push((c, Hook::CallEnter, p));
            after.push((c, Hook::CallExit, p));
        }
        for &c in &e.opaque {
            before.push((c, Hook::CallEnter, UNKNOWN));
            after.push((c, Hook::CallExit, UNKNOWN));
        }
        starts.sort_by_key(|s| (s.0, s.1));
        for (b, _, hook, id) in starts {
            let at = first_insertion_point(f.blocks[b].block);
            self.emit_before(at, hook, id);
        }
        for (branch, succ, id) in arms {
            let (from, to) = (f.blocks[branch].block, f.blocks[succ].block);
            let single = f.cfg.preds[succ].len() == 1;
            let target = if single {
                Some(to)
            } else {
                self.split_edge(from, to)
            };
            if let Some(block) = target {
                let at = first_insertion_point(block);
                self.emit_before(at, Hook::Branch, id);
            }
        }
        for (c, hook, id) in before {
            self.emit_before(f.calls[c].inst, hook, id);
        }
        for (c, hook, id) in after {
            let inst = f.calls[c].inst;
            if inst.get_opcode() == InstructionOpcode::Invoke {
                // SAFETY: `inst` is an invoke.
                let normal =
                    unsafe { BasicBlock::new(llc::LLVMGetNormalDest(inst.as_value_ref())) };
                let from = inst.get_parent().expect("parent");
                if let Some(block) = normal.and_then(|n| self.split_edge(from, n)) {
                    let at = first_insertion_point(block);
                    self.emit_before(at, hook, id);
                }
            } else {
                let next = inst
                    .get_next_instruction()
                    .expect("a call is not a terminator");
                self.emit_before(next, hook, id);
            }
        }
    }
}

fn instructions(block: BasicBlock) -> Vec<InstructionValue> {
    let mut out = Vec::new();
    let mut inst = block.get_first_instruction();
    while let Some(i) = inst {
        out.push(i);
        inst = i.get_next_instruction();
    }
    out
}

/// The first instruction of `block` that a call may be inserted before.
fn first_insertion_point(block: BasicBlock) -> InstructionValue {
    instructions(block)
        .into_iter()
        .find(|i| {
            !matches!(
                i.get_opcode(),
                InstructionOpcode::Phi
                    | InstructionOpcode::LandingPad
                    | InstructionOpcode::CatchPad
                    | InstructionOpcode::CleanupPad
                    | InstructionOpcode::CatchSwitch
            )
        })
        .expect("a block ends with a terminator")
}
