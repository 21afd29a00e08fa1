//! A comparison as text for the slicing report: `deck_ < 0`, `local+40 >= 0`.

use super::ir::{self, V};
use llvm_sys::core as llc;
use llvm_sys::LLVMOpcode as Op;
use llvm_sys::{LLVMIntPredicate as I, LLVMRealPredicate as R};

/// The expression computing `v`: loads by the name of what they read, constants by value.
pub fn expression(v: V) -> String {
    // SAFETY: reading live values.
    unsafe {
        if !llc::LLVMIsAConstantInt(v).is_null() {
            return llc::LLVMConstIntGetSExtValue(v).to_string();
        }
        if !llc::LLVMIsAConstantFP(v).is_null() {
            let mut lossy = 0;
            return llc::LLVMConstRealGetDouble(v, &mut lossy).to_string();
        }
        if !llc::LLVMIsAGlobalValue(v).is_null() {
            return ir::name_of(v);
        }
        if !llc::LLVMIsAAllocaInst(v).is_null() || !llc::LLVMIsAArgument(v).is_null() {
            return "a local variable".into();
        }
        if llc::LLVMIsAInstruction(v).is_null() {
            return "?".into();
        }
        let ops = ir::operands(v);
        match ir::opcode(v) {
            Op::LLVMLoad => address(ops[0]),
            Op::LLVMICmp => binary(&ops, int_predicate(llc::LLVMGetICmpPredicate(v))),
            Op::LLVMFCmp => binary(&ops, real_predicate(llc::LLVMGetFCmpPredicate(v))),
            Op::LLVMAdd | Op::LLVMFAdd => binary(&ops, "+"),
            Op::LLVMSub | Op::LLVMFSub => binary(&ops, "-"),
            Op::LLVMMul | Op::LLVMFMul => binary(&ops, "*"),
            Op::LLVMSDiv | Op::LLVMUDiv | Op::LLVMFDiv => binary(&ops, "/"),
            Op::LLVMFNeg => format!("-{}", expression(ops[0])),
            _ if ops.len() == 1 => expression(ops[0]),
            _ => "?".into(),
        }
    }
}

/// What an address names: a global (with its byte offset), or a local variable.
fn address(a: V) -> String {
    // SAFETY: reading live values.
    unsafe {
        if !llc::LLVMIsAGlobalValue(a).is_null() {
            return ir::name_of(a);
        }
        let ops = ir::operands(a);
        let is_gep = (!llc::LLVMIsAInstruction(a).is_null()
            && ir::opcode(a) == Op::LLVMGetElementPtr)
            || (!llc::LLVMIsAConstantExpr(a).is_null()
                && llc::LLVMGetConstOpcode(a) == Op::LLVMGetElementPtr);
        if is_gep {
            let offsets: Vec<String> = ops[1..].iter().map(|&i| expression(i)).collect();
            return format!("{}[{}]", address(ops[0]), offsets.join("]["));
        }
        "a local variable".into()
    }
}

fn binary(ops: &[V], op: &str) -> String {
    format!("{} {op} {}", expression(ops[0]), expression(ops[1]))
}

fn int_predicate(p: I) -> &'static str {
    match p {
        I::LLVMIntEQ => "==",
        I::LLVMIntNE => "!=",
        I::LLVMIntSGT | I::LLVMIntUGT => ">",
        I::LLVMIntSGE | I::LLVMIntUGE => ">=",
        I::LLVMIntSLT | I::LLVMIntULT => "<",
        I::LLVMIntSLE | I::LLVMIntULE => "<=",
    }
}

/// Ordered and unordered comparisons read alike (they differ only for NaN).
fn real_predicate(p: R) -> &'static str {
    match p {
        R::LLVMRealOEQ | R::LLVMRealUEQ => "==",
        R::LLVMRealONE | R::LLVMRealUNE => "!=",
        R::LLVMRealOGT | R::LLVMRealUGT => ">",
        R::LLVMRealOGE | R::LLVMRealUGE => ">=",
        R::LLVMRealOLT | R::LLVMRealULT => "<",
        R::LLVMRealOLE | R::LLVMRealULE => "<=",
        R::LLVMRealPredicateFalse => "false",
        R::LLVMRealPredicateTrue => "true",
        R::LLVMRealORD => "ordered",
        R::LLVMRealUNO => "unordered",
    }
}
