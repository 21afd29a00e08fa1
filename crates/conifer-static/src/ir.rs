//! What the analysis reads from LLVM IR: for every defined function its blocks, their
//! successors, the calls in them (MPI, user function, indirect) and debug locations.

use crate::cfg::Cfg;
use crate::tree::Loc;
use inkwell::basic_block::BasicBlock;
use inkwell::module::Module;
use inkwell::values::{AsValueRef, FunctionValue, InstructionOpcode, InstructionValue};
use llvm_sys::core as llc;
use llvm_sys::prelude::LLVMValueRef;
use std::collections::HashMap;

/// What a call instruction calls.
#[derive(Clone, Debug, PartialEq)]
pub enum Callee {
    /// An MPI function; its C name (`MPI_Send`, also for Fortran's `mpi_send_`).
    Mpi(String),
    /// A function with a body in the module.
    User(String),
    /// Through a pointer.
    Indirect,
}

/// One call instruction of interest.
pub struct Call<'ctx> {
    /// The instruction.
    pub inst: InstructionValue<'ctx>,
    /// What it calls.
    pub callee: Callee,
    /// Its source position.
    pub loc: Option<Loc>,
}

/// One basic block.
pub struct Block<'ctx> {
    /// The block.
    pub block: BasicBlock<'ctx>,
    /// Indices (into [`Function::calls`]) of its calls, in order.
    pub calls: Vec<usize>,
    /// Position of its terminator.
    pub term_loc: Option<Loc>,
    /// First position of any instruction in it.
    pub first_loc: Option<Loc>,
}

/// A defined function.
pub struct Function<'ctx> {
    /// Its symbol.
    pub name: String,
    /// Blocks; index 0 is the entry.
    pub blocks: Vec<Block<'ctx>>,
    /// Calls of interest.
    pub calls: Vec<Call<'ctx>>,
    /// Its control-flow graph.
    pub cfg: Cfg,
    /// Position of its first instruction.
    pub loc: Option<Loc>,
}

/// The C name of an MPI function symbol (C `MPI_*`/`PMPI_*`, Fortran `mpi_*_`/`pmpi_*_`),
/// or `None`.
pub fn mpi_name(symbol: &str) -> Option<String> {
    let c = symbol.strip_prefix('P').unwrap_or(symbol);
    if let Some(rest) = c.strip_prefix("MPI_") {
        return (!rest.is_empty()).then(|| c.to_string());
    }
    let f = symbol.strip_prefix('p').unwrap_or(symbol);
    let rest = f.strip_prefix("mpi_")?.trim_end_matches('_');
    if rest.is_empty() || !f.ends_with('_') || rest.chars().any(|ch| ch.is_ascii_uppercase()) {
        return None;
    }
    let mut name = String::from("MPI_");
    let mut chars = rest.chars();
    name.extend(chars.next().map(|ch| ch.to_ascii_uppercase()));
    name.extend(chars);
    Some(name)
}

/// Debug location of an instruction.
pub fn loc_of(inst: LLVMValueRef) -> Option<Loc> {
    // SAFETY: `inst` is a live instruction; the C API returns 0/null when there is no location.
    unsafe {
        let line = llc::LLVMGetDebugLocLine(inst);
        if line == 0 {
            return None;
        }
        let mut len = 0;
        let ptr = llc::LLVMGetDebugLocFilename(inst, &mut len);
        if ptr.is_null() {
            return None;
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize);
        Some(Loc {
            file: String::from_utf8_lossy(bytes).into_owned(),
            line,
        })
    }
}

/// The source file of an instruction's debug location, its directory prepended when the file
/// name is relative.
pub fn source_path(inst: LLVMValueRef) -> Option<std::path::PathBuf> {
    // SAFETY: `inst` is a live instruction; the C API returns null when there is no location.
    unsafe {
        let text = |ptr: *const std::ffi::c_char, len: u32| {
            (!ptr.is_null()).then(|| {
                let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize);
                String::from_utf8_lossy(bytes).into_owned()
            })
        };
        let mut len = 0;
        let file = text(llc::LLVMGetDebugLocFilename(inst, &mut len), len)?;
        let mut len = 0;
        let dir = text(llc::LLVMGetDebugLocDirectory(inst, &mut len), len).unwrap_or_default();
        Some(std::path::Path::new(&dir).join(file))
    }
}

/// The function a call instruction calls directly, if any.
pub fn called_function(inst: InstructionValue) -> Option<LLVMValueRef> {
    // SAFETY: `inst` is a call or invoke.
    unsafe {
        let target = llc::LLVMGetCalledValue(inst.as_value_ref());
        (!llc::LLVMIsAFunction(target).is_null()).then_some(target)
    }
}

fn value_name(value: LLVMValueRef) -> String {
    // SAFETY: `value` is a live global.
    unsafe {
        let mut len = 0;
        let ptr = llc::LLVMGetValueName2(value, &mut len);
        String::from_utf8_lossy(std::slice::from_raw_parts(ptr.cast::<u8>(), len)).into_owned()
    }
}

/// Successors of a block's terminator, leaving out unwind edges.
fn successors(block: BasicBlock) -> Vec<BasicBlock> {
    let Some(term) = block.get_terminator() else {
        return Vec::new();
    };
    if term.get_opcode() == InstructionOpcode::Invoke {
        // SAFETY: `term` is an invoke.
        let normal = unsafe { llc::LLVMGetNormalDest(term.as_value_ref()) };
        // SAFETY: a valid block reference from LLVM.
        return unsafe { BasicBlock::new(normal) }.into_iter().collect();
    }
    // SAFETY: `term` is a terminator.
    unsafe {
        let n = llc::LLVMGetNumSuccessors(term.as_value_ref());
        (0..n)
            .filter_map(|i| BasicBlock::new(llc::LLVMGetSuccessor(term.as_value_ref(), i)))
            .collect()
    }
}

/// Reads every function with a body.
pub fn functions<'ctx>(module: &Module<'ctx>) -> Vec<Function<'ctx>> {
    let defined: std::collections::HashSet<String> = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .map(|f| value_name(f.as_value_ref()))
        .collect();
    module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .map(|f| function(f, &defined))
        .collect()
}

fn function<'ctx>(
    value: FunctionValue<'ctx>,
    defined: &std::collections::HashSet<String>,
) -> Function<'ctx> {
    let bbs = value.get_basic_blocks();
    let index: HashMap<BasicBlock, usize> = bbs.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let mut blocks = Vec::new();
    let mut calls = Vec::new();
    let mut succs = Vec::new();
    for &bb in &bbs {
        let mut block = Block {
            block: bb,
            calls: Vec::new(),
            term_loc: bb.get_terminator().and_then(|t| loc_of(t.as_value_ref())),
            first_loc: None,
        };
        let mut inst = bb.get_first_instruction();
        while let Some(i) = inst {
            if block.first_loc.is_none() {
                block.first_loc = loc_of(i.as_value_ref());
            }
            if matches!(
                i.get_opcode(),
                InstructionOpcode::Call | InstructionOpcode::Invoke
            ) {
                if let Some(callee) = classify(i, defined) {
                    block.calls.push(calls.len());
                    calls.push(Call {
                        inst: i,
                        callee,
                        loc: loc_of(i.as_value_ref()),
                    });
                }
            }
            inst = i.get_next_instruction();
        }
        succs.push(successors(bb).iter().map(|s| index[s]).collect());
        blocks.push(block);
    }
    let loc = blocks.iter().find_map(|b| b.first_loc.clone());
    Function {
        name: value_name(value.as_value_ref()),
        blocks,
        calls,
        cfg: Cfg::new(succs),
        loc,
    }
}

fn classify(inst: InstructionValue, defined: &std::collections::HashSet<String>) -> Option<Callee> {
    match called_function(inst) {
        Some(f) => {
            let name = value_name(f);
            if defined.contains(&name) {
                Some(Callee::User(name))
            } else {
                mpi_name(&name).map(Callee::Mpi)
            }
        }
        None => {
            // SAFETY: `inst` is a call or invoke.
            let target = unsafe { llc::LLVMGetCalledValue(inst.as_value_ref()) };
            // SAFETY: querying the kind of a live value.
            let asm = unsafe { !llc::LLVMIsAInlineAsm(target).is_null() };
            (!asm).then_some(Callee::Indirect)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::mpi_name;

    #[test]
    fn mpi_names_from_c_and_fortran_symbols() {
        assert_eq!(mpi_name("MPI_Send").as_deref(), Some("MPI_Send"));
        assert_eq!(mpi_name("PMPI_Comm_rank").as_deref(), Some("MPI_Comm_rank"));
        assert_eq!(mpi_name("mpi_comm_rank_").as_deref(), Some("MPI_Comm_rank"));
        assert_eq!(mpi_name("pmpi_send_").as_deref(), Some("MPI_Send"));
        assert_eq!(mpi_name("mpi_helper"), None);
        assert_eq!(mpi_name("MPI_"), None);
        assert_eq!(mpi_name("compute"), None);
    }
}
