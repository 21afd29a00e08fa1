//! A flow- and context-insensitive points-to analysis over abstract memory objects (every
//! `alloca`, global variable and allocation call is one object, fields not told apart), in the
//! style of Andersen, solved by iterating to a fixed point. The object [`UNKNOWN`] stands for
//! any memory: a pointer the analysis cannot follow (loaded from memory an unknown function
//! wrote, made from an integer, returned by an unknown function, a parameter of a function
//! called through a pointer) may point to it, and it aliases every object. Library functions
//! without a body may write through their pointer arguments but are assumed not to keep the
//! pointers (as `qsort`, `timespec_get`, `fopen` do not).

use super::externals::{self, External};
use super::ir::{self, Ir, V};
use super::mpi;
use llvm_sys::core as llc;
use llvm_sys::LLVMOpcode as Op;
use std::collections::{BTreeSet, HashMap};

/// An abstract memory object's number.
pub type Obj = u32;

/// Any memory.
pub const UNKNOWN: Obj = 0;

/// A set of objects.
pub type Objs = BTreeSet<Obj>;

/// Whether two object sets may share memory.
pub fn may_alias(a: &Objs, b: &Objs) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    a.contains(&UNKNOWN) || b.contains(&UNKNOWN) || a.iter().any(|o| b.contains(o))
}

/// The solved analysis.
pub struct PointsTo {
    /// Objects each instruction or argument may point to (pointers inside aggregates too).
    values: HashMap<V, Objs>,
    /// Objects each object's contents may point to.
    contents: HashMap<Obj, Objs>,
    /// Objects pointers stored where the analysis cannot see may point to.
    escaped: Objs,
    /// Object numbers of allocas, globals and allocation calls.
    objects: HashMap<V, Obj>,
    /// Set when an object's contents or the escaped set grew.
    dirty: bool,
}

impl PointsTo {
    /// Solves the analysis for the whole module.
    pub fn solve(ir: &Ir) -> PointsTo {
        let mut pt = PointsTo {
            values: HashMap::new(),
            contents: HashMap::new(),
            escaped: Objs::new(),
            objects: HashMap::new(),
            dirty: false,
        };
        for &g in &ir.globals {
            pt.object(g);
        }
        loop {
            let mut changed = std::mem::take(&mut pt.dirty);
            for (fi, f) in ir.funcs.iter().enumerate() {
                changed |= pt.arguments(ir, fi);
                for &i in f.insts.iter().flatten() {
                    changed |= pt.instruction(ir, i);
                }
            }
            if !changed && !pt.dirty {
                return pt;
            }
        }
    }

    fn object(&mut self, v: V) -> Obj {
        let next = self.objects.len() as Obj + 1;
        *self.objects.entry(v).or_insert(next)
    }

    /// The objects `v` may point to.
    pub fn of(&self, v: V) -> Objs {
        // SAFETY: classifying and reading a live value.
        unsafe {
            if !llc::LLVMIsAInstruction(v).is_null() || !llc::LLVMIsAArgument(v).is_null() {
                return self.values.get(&v).cloned().unwrap_or_default();
            }
            if !llc::LLVMIsAGlobalVariable(v).is_null() {
                return self
                    .objects
                    .get(&v)
                    .map(|&o| Objs::from([o]))
                    .unwrap_or_default();
            }
            if !llc::LLVMIsAFunction(v).is_null() || !llc::LLVMIsAConstantExpr(v).is_null() {
                if llc::LLVMIsAFunction(v).is_null() {
                    return match llc::LLVMGetConstOpcode(v) {
                        // Sentinels (`MPI_STATUS_IGNORE`, `MPI_IN_PLACE`) point to nothing.
                        Op::LLVMIntToPtr
                            if !llc::LLVMIsAConstantInt(llc::LLVMGetOperand(v, 0)).is_null() =>
                        {
                            Objs::new()
                        }
                        Op::LLVMIntToPtr => Objs::from([UNKNOWN]),
                        _ => self.union_of(&ir::operands(v)),
                    };
                }
                return Objs::new();
            }
            if !llc::LLVMIsAConstantStruct(v).is_null() || !llc::LLVMIsAConstantArray(v).is_null() {
                return self.union_of(&ir::operands(v));
            }
        }
        Objs::new()
    }

    fn union_of(&self, vs: &[V]) -> Objs {
        vs.iter().flat_map(|&v| self.of(v)).collect()
    }

    /// `objs` and what they may point to: a Fortran descriptor and its data.
    pub fn reach(&self, objs: &Objs) -> Objs {
        let mut out = self.loaded(objs);
        out.extend(objs.iter().copied());
        out
    }

    /// What a load through a pointer to `addr` may read as a pointer.
    fn loaded(&self, addr: &Objs) -> Objs {
        if addr.contains(&UNKNOWN) {
            return Objs::from([UNKNOWN]);
        }
        let mut out = self.escaped.clone();
        for o in addr {
            out.extend(self.contents.get(o).into_iter().flatten());
        }
        out
    }

    fn grow(map: &mut HashMap<V, Objs>, v: V, add: Objs) -> bool {
        let set = map.entry(v).or_default();
        let before = set.len();
        set.extend(add);
        set.len() != before
    }

    /// Adds `add` to what every object in `into` may contain.
    fn store(&mut self, into: &Objs, add: &Objs) -> bool {
        if add.is_empty() {
            return false;
        }
        let mut changed = false;
        if into.contains(&UNKNOWN) {
            let before = self.escaped.len();
            self.escaped.extend(add.iter().copied());
            changed |= self.escaped.len() != before;
        }
        for &o in into.iter().filter(|&&o| o != UNKNOWN) {
            let set = self.contents.entry(o).or_default();
            let before = set.len();
            set.extend(add.iter().copied());
            changed |= set.len() != before;
        }
        self.dirty |= changed;
        changed
    }

    fn arguments(&mut self, ir: &Ir, fi: usize) -> bool {
        let f = &ir.funcs[fi];
        // SAFETY: reading the parameters of a live function.
        let params: Vec<V> = unsafe {
            (0..llc::LLVMCountParams(f.value))
                .map(|i| llc::LLVMGetParam(f.value, i))
                .collect()
        };
        let mut changed = false;
        // The entry's parameters (`argv`) point to memory the program's environment made,
        // pointing to itself, that nothing in the program writes but through unknown pointers.
        let environment = self.object(f.value);
        for (i, &p) in params.iter().enumerate() {
            let add = if f.callers.is_empty() && !f.address_taken {
                let own = Objs::from([environment]);
                self.store(&own.clone(), &own);
                own
            } else if f.address_taken {
                Objs::from([UNKNOWN])
            } else {
                f.callers
                    .iter()
                    .filter_map(|&c| ir::call_args(c).get(i).copied())
                    .flat_map(|a| self.of(a))
                    .collect()
            };
            changed |= Self::grow(&mut self.values, p, add);
        }
        changed
    }

    fn instruction(&mut self, ir: &Ir, i: V) -> bool {
        let ops = ir::operands(i);
        let value = match ir::opcode(i) {
            Op::LLVMAlloca => Objs::from([self.object(i)]),
            Op::LLVMGetElementPtr
            | Op::LLVMBitCast
            | Op::LLVMAddrSpaceCast
            | Op::LLVMFreeze
            | Op::LLVMExtractValue
            | Op::LLVMExtractElement => self.of(ops[0]),
            Op::LLVMSelect => self.union_of(&ops[1..]),
            Op::LLVMPHI | Op::LLVMInsertValue | Op::LLVMInsertElement => self.union_of(&ops),
            // Pointers carried through integers (C11 atomics on pointers compile to `i64`
            // atomics) keep their objects; an integer with none becomes an unknown pointer.
            Op::LLVMPtrToInt => self.of(ops[0]),
            Op::LLVMIntToPtr => {
                // SAFETY: classifying a live operand.
                let carried = !unsafe { llc::LLVMIsAInstruction(ops[0]) }.is_null()
                    && matches!(
                        ir::opcode(ops[0]),
                        Op::LLVMPtrToInt
                            | Op::LLVMLoad
                            | Op::LLVMPHI
                            | Op::LLVMSelect
                            | Op::LLVMExtractValue
                            | Op::LLVMAtomicRMW
                            | Op::LLVMAtomicCmpXchg
                    );
                match carried {
                    true => self.of(ops[0]),
                    false => Objs::from([UNKNOWN]),
                }
            }
            Op::LLVMVAArg => Objs::from([UNKNOWN]),
            // Both store their new value (last operand) and return the old one.
            Op::LLVMAtomicRMW | Op::LLVMAtomicCmpXchg => {
                let addr = self.of(ops[0]);
                let new = self.of(*ops.last().expect("operands"));
                self.store(&addr, &new);
                self.loaded(&addr)
            }
            Op::LLVMLoad => self.loaded(&self.of(ops[0])),
            Op::LLVMStore => {
                let (val, addr) = (self.of(ops[0]), self.of(ops[1]));
                self.store(&addr, &val);
                return false;
            }
            Op::LLVMCall | Op::LLVMInvoke | Op::LLVMCallBr => self.call(ir, i),
            _ => return false,
        };
        Self::grow(&mut self.values, i, value)
    }

    fn call(&mut self, ir: &Ir, call: V) -> Objs {
        let args = ir::call_args(call);
        let callee = ir::direct_callee(call).filter(|_| !ir::is_inline_asm(call));
        let Some(callee) = callee else {
            let reached = self.union_of(&args);
            self.store(&reached, &Objs::from([UNKNOWN]));
            self.store(&Objs::from([UNKNOWN]), &reached);
            return Objs::from([UNKNOWN]);
        };
        if let Some(&g) = ir.index.get(&callee) {
            let rets: Vec<V> = ir.funcs[g]
                .insts
                .iter()
                .flatten()
                .filter(|&&r| ir::opcode(r) == Op::LLVMRet)
                .filter_map(|&r| ir::operands(r).first().copied())
                .collect();
            return self.union_of(&rets);
        }
        let name = ir::name_of(callee);
        if let Some(call) = mpi::MpiCall::new(&name) {
            for (a, _) in call.outputs(&args) {
                let objs = self.of(a);
                self.store(&objs, &Objs::from([UNKNOWN]));
            }
            return Objs::new();
        }
        match externals::classify(&name) {
            External::Allocates => {
                let mut out = Objs::from([self.object(call)]);
                if name == "realloc" {
                    out.extend(args.first().map(|&a| self.of(a)).unwrap_or_default());
                }
                out
            }
            External::IoStatement => Objs::from([self.object(call)]),
            External::FortranAssign => {
                let (dst, src) = (self.of(args[0]), self.of(args[1]));
                // The left-hand side may be reallocated: its descriptor points to new memory,
                // which gets the pointers the right-hand side's data holds.
                let fresh = Objs::from([self.object(call)]);
                self.store(&dst, &fresh);
                let copied = self.loaded(&self.loaded(&src));
                self.store(&self.loaded(&dst), &copied);
                Objs::new()
            }
            External::Pure | External::Frees | External::Prints | External::Reads => Objs::new(),
            External::Writes => {
                if name.contains("memcpy") || name.contains("memmove") {
                    let (dst, src) = (self.of(args[0]), self.of(args[1]));
                    let copied = self.loaded(&src);
                    self.store(&dst, &copied);
                }
                Objs::new()
            }
            External::Unknown => {
                // It may write anything through its pointers; library functions are assumed
                // not to keep the pointers themselves (a function they call back through a
                // pointer sees unknown parameters anyway).
                let reached = self.union_of(&args);
                self.store(&reached, &Objs::from([UNKNOWN]));
                Objs::from([UNKNOWN])
            }
        }
    }
}
