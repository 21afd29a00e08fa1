//! Field sensitivity where it is exact: a load or store whose address is a constant byte
//! offset into one named object (a global — a module variable, a `COMMON` block, a Fortran
//! descriptor — or an `alloca`) reads or writes only those bytes. Liveness keeps such a store
//! only when a live read overlaps its bytes, so the fields of a descriptor (base address,
//! bounds, strides) or the members of a `COMMON` block are told apart; every other access
//! stands for its whole objects, as the points-to sees them.

use super::ir::{self, Ir, V};
use super::pointsto::{Obj, Objs, PointsTo};
use llvm_sys::core as llc;
use llvm_sys::target::{LLVMABISizeOfType, LLVMOffsetOfElement, LLVMStoreSizeOfType};
use llvm_sys::LLVMOpcode as Op;
use llvm_sys::LLVMTypeKind;
use std::collections::HashMap;

/// Bytes `lo..hi` of object `obj`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The object.
    pub obj: Obj,
    /// First byte.
    pub lo: i64,
    /// One past the last byte.
    pub hi: i64,
}

/// The bytes load, store or `memset` `i` accesses, when its address is a constant offset into
/// one global or `alloca` and its size is known.
pub fn access(ir: &Ir, pt: &PointsTo, i: V) -> Option<Access> {
    let (addr, size) = address_and_size(ir, i)?;
    let (base, lo) = offset_into(ir, addr)?;
    let objs = pt.of(base);
    let obj = *objs.first().filter(|_| objs.len() == 1)?;
    let hi = lo.checked_add(i64::try_from(size).ok()?)?;
    Some(Access { obj, lo, hi })
}

/// [`access`], also when the address is a constant offset from a parameter that every call
/// of its function passes as one constant offset into one global or `alloca` (a struct filled
/// in by a function given its address).
pub fn access_through_parameters(ir: &Ir, pt: &PointsTo, i: V) -> Option<Access> {
    if let Some(a) = access(ir, pt, i) {
        return Some(a);
    }
    let (addr, size) = address_and_size(ir, i)?;
    let (param, lo) = offset_from(ir, addr, true)?;
    // SAFETY: classifying and reading live values.
    let (f, k) = unsafe {
        if llc::LLVMIsAArgument(param).is_null() {
            return None;
        }
        let f = llc::LLVMGetParamParent(param);
        let k = (0..llc::LLVMCountParams(f)).position(|k| llc::LLVMGetParam(f, k) == param)?;
        (*ir.index.get(&f)?, k)
    };
    if ir.funcs[f].address_taken {
        return None;
    }
    let mut passed = None;
    for &call in &ir.funcs[f].callers {
        let (base, at) = offset_into(ir, *ir::call_args(call).get(k)?)?;
        let objs = pt.of(base);
        let obj = *objs.first().filter(|_| objs.len() == 1)?;
        match passed {
            None => passed = Some((obj, at)),
            Some(p) if p == (obj, at) => {}
            Some(_) => return None,
        }
    }
    let (obj, at) = passed?;
    let lo = at.checked_add(lo)?;
    let hi = lo.checked_add(i64::try_from(size).ok()?)?;
    Some(Access { obj, lo, hi })
}

/// The address load, store or `memset` `i` accesses and how many bytes.
fn address_and_size(ir: &Ir, i: V) -> Option<(V, u64)> {
    let ops = ir::operands(i);
    // SAFETY: reading types and operands of live values.
    unsafe {
        match ir::opcode(i) {
            Op::LLVMLoad => Some((ops[0], LLVMStoreSizeOfType(ir.layout, llc::LLVMTypeOf(i)))),
            Op::LLVMStore => Some((
                ops[1],
                LLVMStoreSizeOfType(ir.layout, llc::LLVMTypeOf(ops[0])),
            )),
            Op::LLVMCall if is_memset(i) => {
                let len = ops[2];
                if llc::LLVMIsAConstantInt(len).is_null() {
                    return None;
                }
                Some((ops[0], llc::LLVMConstIntGetZExtValue(len)))
            }
            _ => None,
        }
    }
}

/// Whether `call` is `llvm.memset.*`.
fn is_memset(call: V) -> bool {
    ir::direct_callee(call).is_some_and(|c| ir::name_of(c).starts_with("llvm.memset."))
}

/// `(object, byte offset)` when `addr` is a global or `alloca` plus constant offsets
/// (`getelementptr` with constant indices, casts), as an instruction or a constant.
pub fn offset_into(ir: &Ir, addr: V) -> Option<(V, i64)> {
    offset_from(ir, addr, false)
}

/// [`offset_into`], with a parameter also accepted as the base when `parameters`.
fn offset_from(ir: &Ir, addr: V, parameters: bool) -> Option<(V, i64)> {
    // SAFETY: classifying and reading live values.
    unsafe {
        let base = !llc::LLVMIsAGlobalVariable(addr).is_null()
            || !llc::LLVMIsAAllocaInst(addr).is_null()
            || (parameters && !llc::LLVMIsAArgument(addr).is_null());
        if base {
            return Some((addr, 0));
        }
        let is_inst = !llc::LLVMIsAInstruction(addr).is_null();
        let is_expr = !llc::LLVMIsAConstantExpr(addr).is_null();
        if !is_inst && !is_expr {
            return None;
        }
        let opcode = match is_inst {
            true => llc::LLVMGetInstructionOpcode(addr),
            false => llc::LLVMGetConstOpcode(addr),
        };
        let ops = ir::operands(addr);
        match opcode {
            Op::LLVMBitCast | Op::LLVMAddrSpaceCast => offset_from(ir, ops[0], parameters),
            Op::LLVMGetElementPtr => {
                let (base, at) = offset_from(ir, ops[0], parameters)?;
                let step = gep_offset(ir, addr, &ops[1..])?;
                Some((base, at.checked_add(step)?))
            }
            _ => None,
        }
    }
}

/// The byte offset `getelementptr` `gep` adds with constant `indices`.
fn gep_offset(ir: &Ir, gep: V, indices: &[V]) -> Option<i64> {
    // SAFETY: reading the types and constant indices of a live `getelementptr`.
    unsafe {
        let mut ty = llc::LLVMGetGEPSourceElementType(gep);
        let mut offset: i64 = 0;
        for (k, &index) in indices.iter().enumerate() {
            if llc::LLVMIsAConstantInt(index).is_null() {
                return None;
            }
            let n = llc::LLVMConstIntGetSExtValue(index);
            let size = |t| i64::try_from(LLVMABISizeOfType(ir.layout, t)).ok();
            let step = if k == 0 {
                n.checked_mul(size(ty)?)?
            } else {
                match llc::LLVMGetTypeKind(ty) {
                    LLVMTypeKind::LLVMStructTypeKind => {
                        let field = u32::try_from(n).ok()?;
                        let at = LLVMOffsetOfElement(ir.layout, ty, field);
                        ty = llc::LLVMStructGetTypeAtIndex(ty, field);
                        i64::try_from(at).ok()?
                    }
                    LLVMTypeKind::LLVMArrayTypeKind => {
                        ty = llc::LLVMGetElementType(ty);
                        n.checked_mul(size(ty)?)?
                    }
                    _ => return None,
                }
            };
            offset = offset.checked_add(step)?;
        }
        Some(offset)
    }
}

/// The memory live code reads: whole objects, and parts of objects read only at known bytes.
#[derive(Default)]
pub struct LiveMemory {
    /// Objects read anywhere (or through an address the analysis cannot place).
    whole: Objs,
    /// Byte ranges read of objects not in `whole`.
    parts: HashMap<Obj, Vec<(i64, i64)>>,
    /// Every object read at all.
    any: Objs,
}

impl LiveMemory {
    /// Live code reads all of `obj`; whether nothing of it was live before.
    pub fn read_whole(&mut self, obj: Obj) -> bool {
        self.parts.remove(&obj);
        self.whole.insert(obj);
        self.any.insert(obj)
    }

    /// Live code reads the bytes of `a`; whether nothing of its object was live before.
    pub fn read_part(&mut self, a: Access) -> bool {
        if !self.whole.contains(&a.obj) {
            let parts = self.parts.entry(a.obj).or_default();
            if !parts.contains(&(a.lo, a.hi)) {
                parts.push((a.lo, a.hi));
            }
        }
        self.any.insert(a.obj)
    }

    /// Whether a write of `objs` — exactly of the bytes `exact` when known — may change
    /// something live code reads.
    pub fn is_read(&self, pt: &PointsTo, objs: &Objs, exact: Option<Access>) -> bool {
        let Some(a) = exact else {
            return pt.may_alias(objs, &self.any);
        };
        pt.may_alias(&Objs::from([a.obj]), &self.whole)
            || self
                .parts
                .get(&a.obj)
                .is_some_and(|p| p.iter().any(|&(lo, hi)| lo < a.hi && a.lo < hi))
    }
}
