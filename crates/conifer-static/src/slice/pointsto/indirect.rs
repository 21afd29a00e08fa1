//! Calls through pointers, resolved by the points-to analysis itself: every function of the
//! module is an object its address points to (a library function's address points to one
//! object standing for library code), global initializers put their pointers in their
//! globals (a C++ vtable holds its virtual functions, an array of member pointers the
//! `ptrtoint`ed functions of the Itanium ABI's `{ptr, adj}` pairs), so a call through a
//! loaded pointer — a member pointer's function or a vtable slot — may call the functions
//! its callee may point to.
//!
//! A call is *resolved* when its callee may point only to functions of the module or to
//! memory no library code pointer can be in (calling data is undefined, so it adds no
//! target): not to an unknown pointer, a library function, a library's global (`stdout`'s
//! memory stands for everything the library keeps) or what an unknown library function
//! returned. It then calls only those functions, with its arguments (none when its callee
//! points nowhere: null). Otherwise it may also call every *open* function: one whose
//! address is taken and reaches code the analysis does not see, whose parameters may be
//! unknown pointers.

use super::{Obj, Objs, PointsTo, UNKNOWN};
use crate::slice::ir::{self, Ir, V};
use llvm_sys::core as llc;
use llvm_sys::LLVMOpcode as Op;
use std::collections::{HashMap, HashSet};

/// What the analysis knows about code and calls through pointers.
#[derive(Default)]
pub struct Calls {
    /// The object each function of the module is.
    code: HashMap<V, Obj>,
    /// Function (index in [`Ir::funcs`]) by object.
    function: HashMap<Obj, usize>,
    /// The object standing for every library function's code.
    library: Obj,
    /// Objects a library's code pointer may be in: library functions, library globals, what
    /// unknown library functions return.
    foreign: Objs,
    /// For each function, the calls through pointers that may call it.
    callers: HashMap<usize, Vec<V>>,
    seen: HashSet<(V, usize)>,
    /// Once solved: every function each call through a pointer may call, and whether it is
    /// resolved.
    resolved: HashMap<V, (Vec<usize>, bool)>,
    /// Once solved: whether each function is open.
    open: Vec<bool>,
}

impl PointsTo {
    /// Gives every function of the module its object, and library code one.
    pub(super) fn name_code(&mut self, ir: &Ir) {
        for (fi, f) in ir.funcs.iter().enumerate() {
            let o = self.fresh();
            self.calls.code.insert(f.value, o);
            self.calls.function.insert(o, fi);
        }
        self.calls.library = self.fresh();
        self.calls.foreign.insert(self.calls.library);
    }

    /// The objects function value `f` points to.
    pub(super) fn code_of(&self, f: V) -> Objs {
        Objs::from([self
            .calls
            .code
            .get(&f)
            .copied()
            .unwrap_or(self.calls.library)])
    }

    /// The object of `v`, library memory a library's code pointer may be in.
    pub(super) fn foreign(&mut self, v: V) -> Obj {
        let o = self.object(v);
        self.calls.foreign.insert(o);
        o
    }

    /// Every defined global holds the pointers of its initializer (a vtable's without its
    /// type information).
    pub(super) fn initializers(&mut self, ir: &Ir) {
        for &g in &ir.globals {
            // SAFETY: reading a live global.
            let init = unsafe { llc::LLVMGetInitializer(g) };
            if init.is_null() {
                continue;
            }
            let o = self.object(g);
            let mut pointers = self.of(init);
            if ir::name_of(g).starts_with("_ZTV") {
                // A vtable's type information is read only by the library (`dynamic_cast`,
                // `typeid`), never called: its slot is left out so that what a virtual call
                // loads from a vtable is only code.
                let rtti: Objs = ir::operands(init)
                    .into_iter()
                    .flat_map(ir::operands)
                    .filter(|&v| ir::name_of(v).starts_with("_ZTI"))
                    .flat_map(|v| self.of(v))
                    .collect();
                pointers.retain(|o| !rtti.contains(o));
            }
            self.store(&Objs::from([o]), &pointers);
        }
    }

    /// The functions `call`'s callee may point to, and whether that is all it may call.
    fn targets_now(&self, call: V) -> (Vec<usize>, bool) {
        // SAFETY: `call` is a call; its last operand is the callee.
        let callee = unsafe { llc::LLVMGetCalledValue(call) };
        let mut named = Vec::new();
        let mut resolved = true;
        for o in self.of(callee) {
            match self.calls.function.get(&o) {
                Some(&g) => named.push(g),
                None => resolved &= o != UNKNOWN && !self.calls.foreign.contains(&o),
            }
        }
        (named, resolved)
    }

    /// [`PointsTo::targets_now`], remembering `call` among the callers of what it names.
    pub(super) fn bind(&mut self, call: V) -> (Vec<usize>, bool) {
        let (named, resolved) = self.targets_now(call);
        for &g in &named {
            if self.calls.seen.insert((call, g)) {
                self.calls.callers.entry(g).or_default().push(call);
                self.dirty = true;
            }
        }
        (named, resolved)
    }

    /// The functions of the module among `objs`.
    pub(super) fn code_objects(&self, objs: &Objs) -> Objs {
        objs.iter()
            .copied()
            .filter(|o| self.calls.function.contains_key(o))
            .collect()
    }

    /// What function `g` may return.
    pub(super) fn returned(&self, ir: &Ir, g: usize) -> Objs {
        let rets: Vec<V> = ir.funcs[g]
            .insts
            .iter()
            .flatten()
            .filter(|&&r| ir::opcode(r) == Op::LLVMRet)
            .filter_map(|&r| ir::operands(r).first().copied())
            .collect();
        self.union_of(&rets)
    }

    /// Whether function `fi` may be called by code the analysis does not see.
    pub(super) fn open(&self, ir: &Ir, fi: usize) -> bool {
        ir.funcs[fi].address_taken
            && self
                .calls
                .code
                .get(&ir.funcs[fi].value)
                .is_some_and(|o| self.exposed.contains(o))
    }

    /// The calls of function `fi` the analysis sees: direct, called back, through pointers.
    pub(super) fn sites(&self, ir: &Ir, fi: usize) -> Vec<V> {
        let mut out = ir.funcs[fi].callers.clone();
        out.extend(self.calls.callers.get(&fi).into_iter().flatten().copied());
        out
    }

    /// Fixes what every call through a pointer may call, once solved.
    pub(super) fn resolve_all(&mut self, ir: &Ir) {
        self.calls.open = (0..ir.funcs.len()).map(|f| self.open(ir, f)).collect();
        let mut callers: HashMap<usize, Vec<V>> = HashMap::new();
        for &c in &ir.indirect_calls {
            let (named, resolved) = self.targets_now(c);
            let all: Vec<usize> = match resolved {
                true => named.clone(),
                false => (0..ir.funcs.len())
                    .filter(|&f| self.calls.open[f] || named.contains(&f))
                    .collect(),
            };
            for &f in &all {
                callers.entry(f).or_default().push(c);
            }
            self.calls.resolved.insert(c, (all, resolved));
        }
        self.calls.callers = callers;
    }

    /// The functions call through a pointer `call` calls, when it is resolved.
    pub fn targets(&self, call: V) -> Option<&[usize]> {
        let (all, resolved) = self.calls.resolved.get(&call)?;
        resolved.then_some(all.as_slice())
    }

    /// The functions of the module call through a pointer `call` may call.
    pub fn may_call(&self, call: V) -> &[usize] {
        self.calls
            .resolved
            .get(&call)
            .map(|(all, _)| all.as_slice())
            .unwrap_or(&[])
    }

    /// The calls through pointers that may call function `f`.
    pub fn indirect_callers(&self, f: usize) -> &[V] {
        self.calls.callers.get(&f).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether function `f` may be called by code the analysis does not see (a library it
    /// was given to), once solved.
    pub fn is_open(&self, f: usize) -> bool {
        self.calls.open.get(f).copied().unwrap_or(false)
    }
}
