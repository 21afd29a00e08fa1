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

use crate::slice::ir::{Ir, V};
use crate::slice::objects::{Obj, Objs, UNKNOWN};
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

impl Calls {
    /// Gives every function of the module its object, and library code one, numbered from
    /// `first`; returns how many numbers it used.
    pub fn name_code(&mut self, ir: &Ir, first: Obj) -> Obj {
        let mut next = first;
        for (fi, f) in ir.funcs.iter().enumerate() {
            self.code.insert(f.value, next);
            self.function.insert(next, fi);
            next += 1;
        }
        self.library = next;
        self.foreign.insert(next);
        next + 1 - first
    }

    /// The object function value `f` is (library code for a function without a body).
    pub fn code_of(&self, f: V) -> Obj {
        self.code.get(&f).copied().unwrap_or(self.library)
    }

    /// Notes `o` as library memory a library's code pointer may be in.
    pub fn foreign(&mut self, o: Obj) {
        self.foreign.insert(o);
    }

    /// The functions a callee pointing to `callee` may be, and whether that is all it may
    /// call.
    pub fn targets_now(&self, callee: &Objs) -> (Vec<usize>, bool) {
        let mut named = Vec::new();
        let mut resolved = true;
        for &o in callee {
            match self.function.get(&o) {
                Some(&g) => named.push(g),
                None => resolved &= o != UNKNOWN && !self.foreign.contains(&o),
            }
        }
        (named, resolved)
    }

    /// Remembers `call` among the callers of `named`; whether that is new.
    pub fn bind(&mut self, call: V, named: &[usize]) -> bool {
        let mut new = false;
        for &g in named {
            if self.seen.insert((call, g)) {
                self.callers.entry(g).or_default().push(call);
                new = true;
            }
        }
        new
    }

    /// The functions of the module among `objs`.
    pub fn code_objects(&self, objs: &Objs) -> Objs {
        objs.iter()
            .copied()
            .filter(|o| self.function.contains_key(o))
            .collect()
    }

    /// Whether function `fi` may be called by code the analysis does not see, when `exposed`
    /// is what that code may reach.
    pub fn open(&self, ir: &Ir, fi: usize, exposed: &Objs) -> bool {
        ir.funcs[fi].address_taken
            && self
                .code
                .get(&ir.funcs[fi].value)
                .is_some_and(|o| exposed.contains(o))
    }

    /// The calls of function `fi` the analysis sees: direct, called back, through pointers.
    pub fn sites(&self, ir: &Ir, fi: usize) -> Vec<V> {
        let mut out = ir.funcs[fi].callers.clone();
        out.extend(self.callers.get(&fi).into_iter().flatten().copied());
        out
    }

    /// Fixes what every call through a pointer may call, once solved: `callee` gives the
    /// objects a call's callee may point to.
    pub fn resolve_all(&mut self, ir: &Ir, callee: impl Fn(V) -> Objs, exposed: &Objs) {
        self.open = (0..ir.funcs.len())
            .map(|f| self.open(ir, f, exposed))
            .collect();
        let mut callers: HashMap<usize, Vec<V>> = HashMap::new();
        for &c in &ir.indirect_calls {
            let (named, resolved) = self.targets_now(&callee(c));
            let all: Vec<usize> = match resolved {
                true => named.clone(),
                false => (0..ir.funcs.len())
                    .filter(|&f| self.open[f] || named.contains(&f))
                    .collect(),
            };
            for &f in &all {
                callers.entry(f).or_default().push(c);
            }
            self.resolved.insert(c, (all, resolved));
        }
        self.callers = callers;
    }

    /// The functions call through a pointer `call` calls, when it is resolved.
    pub fn targets(&self, call: V) -> Option<&[usize]> {
        let (all, resolved) = self.resolved.get(&call)?;
        resolved.then_some(all.as_slice())
    }

    /// The functions of the module call through a pointer `call` may call.
    pub fn may_call(&self, call: V) -> &[usize] {
        self.resolved
            .get(&call)
            .map(|(all, _)| all.as_slice())
            .unwrap_or(&[])
    }

    /// The calls through pointers that may call function `f`.
    pub fn indirect_callers(&self, f: usize) -> &[V] {
        self.callers.get(&f).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether function `f` may be called by code the analysis does not see (a library it
    /// was given to), once solved.
    pub fn is_open(&self, f: usize) -> bool {
        self.open.get(f).copied().unwrap_or(false)
    }
}
