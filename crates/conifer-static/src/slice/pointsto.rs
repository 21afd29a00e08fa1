//! A flow- and context-insensitive points-to analysis over abstract memory objects (every
//! `alloca`, global variable, allocation call and library call's own memory is one object,
//! fields not told apart here; liveness tells apart the bytes accessed at constant offsets,
//! [`super::fields`]), in the style of Andersen, solved by iterating to a fixed point.
//!
//! The object [`UNKNOWN`] stands for memory the analysis cannot name: a pointer made from an
//! integer, read by `va_arg`, returned by a call through a pointer, or a parameter of a
//! function whose address is taken may point to it. It stays local: it aliases only the
//! objects *exposed* to code the analysis does not see (what reaches the arguments of library
//! functions and of calls through pointers, pointers turned into integers, what is stored
//! through an unknown pointer, and everything those point to), never the rest of the program.
//!
//! Library functions without a body may write what their pointer arguments reach, pointers
//! to it or to memory of their own included, but are assumed not to keep the pointers (as
//! `qsort`, `timespec_get`, `fopen` do not). MPI calls write handles to memory of MPI's own.
//! flang's runtime is modelled where pointers are made: `ALLOCATE` gives a descriptor fresh
//! memory, assignments and results may reallocate, pointer association copies. Every external
//! Fortran I/O unit has an object standing for its state ([`PointsTo::unit_state`]).

use super::class::External;
use super::externals;
use super::fortran;
use super::ir::{self, Ir, V};
use super::mpi;
use llvm_sys::core as llc;
use llvm_sys::LLVMOpcode as Op;
use std::collections::HashMap;

mod indirect;

pub use super::objects::{Obj, Objs, UNKNOWN};

/// The solved analysis.
pub struct PointsTo {
    /// Objects each instruction or argument may point to (pointers inside aggregates too).
    values: HashMap<V, Objs>,
    /// Objects each object's contents may point to.
    contents: HashMap<Obj, Objs>,
    /// Objects pointers stored through unknown pointers may point to.
    escaped: Objs,
    /// Objects code the analysis does not see may reach.
    exposed: Objs,
    /// Object numbers of allocas, globals, calls making memory, I/O units.
    objects: HashMap<V, Obj>,
    /// The next object number.
    next: Obj,
    /// The unit-state objects each external I/O statement's first call reads and writes.
    units: HashMap<V, Objs>,
    /// For values that may point to [`UNKNOWN`], the instruction (or parameter) the unknown
    /// pointer came from; the same for objects whose contents may.
    unknown_from: HashMap<V, V>,
    contents_unknown_from: HashMap<Obj, V>,
    /// Set when an object's contents, the escaped or the exposed set grew.
    dirty: bool,
    /// Calls through pointers and the functions they may call ([`indirect`]).
    calls: indirect::Calls,
    /// Whether the module makes a pointer from an integer not carrying one (otherwise a
    /// pointer turned into an integer, a C++ vector's size computation, is exposed to
    /// nothing).
    makes_pointers: bool,
}

/// Whether an `inttoptr` of `op` gets back the pointers `op` carries.
fn carried(op: V) -> bool {
    // SAFETY: classifying a live operand.
    !unsafe { llc::LLVMIsAInstruction(op) }.is_null()
        && matches!(
            ir::opcode(op),
            Op::LLVMPtrToInt
                | Op::LLVMLoad
                | Op::LLVMPHI
                | Op::LLVMSelect
                | Op::LLVMExtractValue
                | Op::LLVMAtomicRMW
                | Op::LLVMAtomicCmpXchg
        )
}

impl PointsTo {
    /// Solves the analysis for the whole module.
    pub fn solve(ir: &Ir) -> PointsTo {
        let mut pt = PointsTo {
            values: HashMap::new(),
            contents: HashMap::new(),
            escaped: Objs::new(),
            exposed: Objs::from([UNKNOWN]),
            objects: HashMap::new(),
            next: UNKNOWN + 1,
            units: HashMap::new(),
            unknown_from: HashMap::new(),
            contents_unknown_from: HashMap::new(),
            dirty: false,
            calls: indirect::Calls::default(),
            makes_pointers: ir
                .funcs
                .iter()
                .flat_map(|f| f.insts.iter().flatten())
                .any(|&i| ir::opcode(i) == Op::LLVMIntToPtr && !carried(ir::operands(i)[0])),
        };
        let used = pt.calls.name_code(ir, pt.next);
        pt.next += used;
        for &g in &ir.globals {
            let o = pt.object(g);
            // A global defined elsewhere (`stdout`, `environ`) is library memory, pointing
            // to itself.
            // SAFETY: reading a live global.
            if unsafe { llc::LLVMGetInitializer(g) }.is_null() {
                pt.calls.foreign(o);
                pt.store(&Objs::from([o]), &Objs::from([o]));
                pt.expose(&Objs::from([o]));
            }
        }
        pt.find_units(ir);
        pt.initializers(ir);
        loop {
            let mut changed = std::mem::take(&mut pt.dirty);
            for (fi, f) in ir.funcs.iter().enumerate() {
                changed |= pt.arguments(ir, fi);
                for &i in f.insts.iter().flatten() {
                    changed |= pt.instruction(ir, i);
                }
            }
            let exposed = pt.closure(&pt.exposed);
            pt.expose(&exposed);
            if !changed && !pt.dirty {
                let exposed = pt.exposed.clone();
                let mut calls = std::mem::take(&mut pt.calls);
                // SAFETY: every indirect call is a live call; its last operand is the callee.
                calls.resolve_all(
                    ir,
                    |c| pt.of(unsafe { llc::LLVMGetCalledValue(c) }),
                    &exposed,
                );
                pt.calls = calls;
                return pt;
            }
        }
    }

    fn object(&mut self, v: V) -> Obj {
        match self.objects.get(&v) {
            Some(&o) => o,
            None => {
                let o = self.fresh();
                self.objects.insert(v, o);
                o
            }
        }
    }

    /// A new object that no value names.
    fn fresh(&mut self) -> Obj {
        self.next += 1;
        self.next - 1
    }

    /// Whether two object sets may share memory: they share an object, or one holds
    /// [`UNKNOWN`] and the other an exposed object (or [`UNKNOWN`] too).
    pub fn may_alias(&self, a: &Objs, b: &Objs) -> bool {
        let exposed = |s: &Objs| s.iter().any(|o| self.exposed.contains(o));
        a.iter().any(|o| b.contains(o))
            || (a.contains(&UNKNOWN) && exposed(b))
            || (b.contains(&UNKNOWN) && exposed(a))
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
            if !llc::LLVMIsAGlobalAlias(v).is_null() {
                return self.of(llc::LLVMAliasGetAliasee(v));
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
                return Objs::from([self.calls.code_of(v)]);
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

    /// `objs` and what they point to, as the program stored it (a pointer stored through an
    /// unknown one not counted: a stream's or a string's own memory).
    pub fn own(&self, objs: &Objs) -> Objs {
        let mut out = objs.clone();
        for o in objs {
            out.extend(self.contents.get(o).into_iter().flatten());
        }
        out
    }

    /// `objs` and everything reachable from them through pointers.
    pub fn closure(&self, objs: &Objs) -> Objs {
        let mut out = objs.clone();
        let mut todo: Vec<Obj> = objs.iter().copied().collect();
        while let Some(o) = todo.pop() {
            for &p in self.loaded(&Objs::from([o])).iter() {
                if out.insert(p) {
                    todo.push(p);
                }
            }
        }
        out
    }

    /// The unit-state objects external I/O statement call `call` reads and writes (empty for
    /// other calls).
    pub fn unit_state(&self, call: V) -> Objs {
        self.units.get(&call).cloned().unwrap_or_default()
    }

    /// Where the unknown pointer `v` may hold came from (an instruction or a parameter).
    pub fn unknown_source(&self, v: V) -> Option<V> {
        self.unknown_from.get(&v).copied()
    }

    /// What a load through a pointer to `addr` may read as a pointer.
    fn loaded(&self, addr: &Objs) -> Objs {
        if addr.contains(&UNKNOWN) {
            return Objs::from([UNKNOWN]);
        }
        let mut out = Objs::new();
        if addr.iter().any(|o| self.exposed.contains(o)) {
            out.extend(self.escaped.iter().copied());
        }
        for o in addr {
            out.extend(self.contents.get(o).into_iter().flatten());
        }
        out
    }

    fn expose(&mut self, objs: &Objs) {
        let before = self.exposed.len();
        self.exposed.extend(objs.iter().copied());
        self.dirty |= self.exposed.len() != before;
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
            self.expose(add);
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

    /// [`PointsTo::store`], remembering `source` as where an unknown pointer stored came from.
    fn store_from(&mut self, into: &Objs, add: &Objs, source: Option<V>) {
        if let Some(s) = source.filter(|_| add.contains(&UNKNOWN)) {
            for &o in into {
                self.contents_unknown_from.entry(o).or_insert(s);
            }
        }
        self.store(into, add);
    }

    /// Gives every external I/O statement the state objects of the units it may work on: its
    /// unit's when that is a constant, every unit's otherwise.
    fn find_units(&mut self, ir: &Ir) {
        let mut statements: Vec<(V, Option<V>)> = Vec::new();
        for &i in ir.funcs.iter().flat_map(|f| f.insts.iter().flatten()) {
            let Some(callee) = ir::is_call(i).then(|| ir::direct_callee(i)).flatten() else {
                continue;
            };
            let args = ir::call_args(i);
            // SAFETY: reading the types of live values.
            let i32s: Vec<bool> = args
                .iter()
                .map(|&a| unsafe {
                    let ty = llc::LLVMTypeOf(a);
                    llc::LLVMGetTypeKind(ty) == llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind
                        && llc::LLVMGetIntTypeWidth(ty) == 32
                })
                .collect();
            if let Some(unit) = fortran::unit_argument(&ir::name_of(callee), &i32s) {
                // SAFETY: classifying a live value.
                let constant = unit
                    .map(|k| args[k])
                    .filter(|&a| !unsafe { llc::LLVMIsAConstantInt(a) }.is_null());
                statements.push((i, constant));
            }
        }
        // Units only known at run time share one more object.
        let others = self.fresh();
        let all: Objs = statements
            .iter()
            .filter_map(|&(_, unit)| unit)
            .map(|u| self.object(u))
            .chain(std::iter::once(others))
            .collect();
        for (call, unit) in statements {
            let objs = match unit {
                Some(u) => Objs::from([self.object(u)]),
                None => all.clone(),
            };
            self.units.insert(call, objs);
        }
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
        let open = self.calls.open(ir, fi, &self.exposed);
        let sites = self.calls.sites(ir, fi);
        for (i, &p) in params.iter().enumerate() {
            let add = if f.callers.is_empty() && !f.address_taken {
                let own = Objs::from([environment]);
                self.store(&own.clone(), &own);
                own
            } else {
                let mut passed: Objs = sites
                    .iter()
                    .filter_map(|&c| ir.actual(c, i))
                    .flat_map(|a| self.of(a))
                    .collect();
                if open {
                    // Called from code the analysis does not see: what its callers pass is
                    // exposed to it.
                    self.expose(&passed);
                    self.unknown_from.entry(p).or_insert(p);
                    passed.insert(UNKNOWN);
                }
                passed
            };
            changed |= Self::grow(&mut self.values, p, add);
        }
        if f.variadic {
            // `va_arg` reads what the callers pass beyond the fixed parameters.
            let extra: Objs = sites
                .iter()
                .flat_map(|&c| ir::call_args(c).into_iter().skip(params.len()))
                .flat_map(|a| self.of(a))
                .collect();
            self.expose(&extra);
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
            // atomics) keep their objects; an integer with none becomes an unknown pointer,
            // which may be any pointer ever turned into an integer.
            Op::LLVMPtrToInt => {
                let objs = self.of(ops[0]);
                if self.makes_pointers {
                    self.expose(&objs);
                }
                objs
            }
            Op::LLVMIntToPtr => match carried(ops[0]) {
                true => self.of(ops[0]),
                false => Objs::from([UNKNOWN]),
            },
            Op::LLVMVAArg => Objs::from([UNKNOWN]),
            // Both store their new value (last operand) and return the old one.
            Op::LLVMAtomicRMW | Op::LLVMAtomicCmpXchg => {
                let addr = self.of(ops[0]);
                let last = *ops.last().expect("operands");
                let new = self.of(last);
                self.store_from(&addr, &new, self.unknown_source(last));
                self.loaded(&addr)
            }
            Op::LLVMLoad => self.loaded(&self.of(ops[0])),
            Op::LLVMStore => {
                let (val, addr) = (self.of(ops[0]), self.of(ops[1]));
                let source = self.unknown_source(ops[0]).or(Some(i));
                self.store_from(&addr, &val, source);
                return false;
            }
            Op::LLVMCall | Op::LLVMInvoke | Op::LLVMCallBr => self.call(ir, i),
            _ => return false,
        };
        if value.contains(&UNKNOWN) && !self.unknown_from.contains_key(&i) {
            let source = self.source_among(i, &ops);
            self.unknown_from.insert(i, source);
        }
        Self::grow(&mut self.values, i, value)
    }

    /// Where the unknown pointer instruction `i` makes comes from: an operand's source, the
    /// source of what a load reads, or `i` itself.
    fn source_among(&self, i: V, ops: &[V]) -> V {
        if ir::opcode(i) == Op::LLVMLoad {
            let from_contents = self
                .of(ops[0])
                .iter()
                .find_map(|o| self.contents_unknown_from.get(o).copied());
            if let Some(s) = from_contents {
                return s;
            }
        }
        ops.iter()
            .find_map(|o| self.unknown_source(*o))
            .unwrap_or(i)
    }

    fn call(&mut self, ir: &Ir, call: V) -> Objs {
        let args = ir::call_args(call);
        let callee = ir::direct_callee(call).filter(|_| !ir::is_inline_asm(call));
        let Some(callee) = callee else {
            // SAFETY: `call` is a call; its last operand is the callee.
            let callee = self.of(unsafe { llc::LLVMGetCalledValue(call) });
            let (named, resolved) = self.calls.targets_now(&callee);
            self.dirty |= self.calls.bind(call, &named);
            let mut out: Objs = named.iter().flat_map(|&g| self.returned(ir, g)).collect();
            if !resolved {
                let reached = self.closure(&self.union_of(&args));
                self.expose(&reached);
                self.store_from(&reached, &Objs::from([UNKNOWN]), Some(call));
                out.insert(UNKNOWN);
            }
            return out;
        };
        if let Some(&g) = ir.index.get(&callee) {
            return self.returned(ir, g);
        }
        let name = ir::name_of(callee);
        if let Some(mpi) = mpi::MpiCall::new(&name) {
            // Handles, statuses, attribute values and allocated memory are MPI's own.
            let own = Objs::from([self.object(call)]);
            for (a, _) in mpi.outputs(&args) {
                let objs = self.of(a);
                self.store(&objs, &own);
            }
            if mpi.takes_user_function() {
                let reached = self.closure(&self.union_of(&args));
                self.expose(&reached);
            }
            return Objs::new();
        }
        let first = args.first().map(|&a| self.of(a)).unwrap_or_default();
        match externals::classify(&name) {
            External::Allocates => {
                let mut out = Objs::from([self.object(call)]);
                if name == "realloc" {
                    out.extend(first.clone());
                }
                out
            }
            External::IoStatement => Objs::from([self.object(call)]),
            External::FortranAssign => {
                let (dst, src) = (first.clone(), self.union_of(&args[1..]));
                // The result may be reallocated: its descriptor points to new memory, which
                // gets the pointers the other arguments' data holds.
                let fresh = Objs::from([self.object(call)]);
                self.store(&dst, &fresh);
                let copied = self.loaded(&self.loaded(&src));
                self.store(&self.loaded(&dst), &copied);
                Objs::new()
            }
            External::FortranAllocate => {
                let fresh = Objs::from([self.object(call)]);
                self.store(&first.clone(), &fresh);
                Objs::new()
            }
            External::FortranAssociate => {
                let target = args.get(1).map(|&a| self.of(a)).unwrap_or_default();
                let memory = self.reach(&target);
                self.store(&first.clone(), &memory);
                Objs::new()
            }
            External::Pure
            | External::Frees
            | External::Prints
            | External::Reads
            | External::FortranDescriptor
            | External::FortranWrites
            | External::Updates => Objs::new(),
            External::StreamOutput => {
                // A manipulator it is given (`std::endl`) is called back.
                let code = self.calls.code_objects(&self.union_of(&args));
                self.expose(&code);
                self.own(&first)
            }
            External::StringMember => {
                let mut new = Objs::from([self.object(call)]);
                new.extend(self.own(&self.union_of(&args[1..])));
                self.store(&first, &new);
                let mut out = self.own(&first);
                out.extend(new);
                out
            }
            External::Writes => {
                if name.contains("memcpy") || name.contains("memmove") {
                    let (dst, src) = (first.clone(), self.of(args[1]));
                    let copied = self.loaded(&src);
                    self.store(&dst, &copied);
                }
                Objs::new()
            }
            External::Unknown => {
                // It may write anything its pointers reach, pointers to that memory or to
                // its own included, and return such a pointer (`strchr`), but does not keep
                // the pointers (a function it calls back through a pointer sees unknown
                // parameters anyway).
                let own = self.object(call);
                self.calls.foreign(own);
                let mut reached = self.closure(&self.union_of(&args));
                self.expose(&reached);
                reached.insert(own);
                self.expose(&Objs::from([own]));
                self.store(&reached, &reached);
                reached
            }
        }
    }
}

impl PointsTo {
    /// Every defined global holds the pointers of its initializer (a vtable's without its
    /// type information).
    fn initializers(&mut self, ir: &Ir) {
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

    /// What function `g` may return.
    fn returned(&self, ir: &Ir, g: usize) -> Objs {
        let rets: Vec<V> = ir.funcs[g]
            .insts
            .iter()
            .flatten()
            .filter(|&&r| ir::opcode(r) == Op::LLVMRet)
            .filter_map(|&r| ir::operands(r).first().copied())
            .collect();
        self.union_of(&rets)
    }

    /// The functions call through a pointer `call` calls, when it is resolved
    /// ([`indirect`]).
    pub fn targets(&self, call: V) -> Option<&[usize]> {
        self.calls.targets(call)
    }

    /// The functions of the module call through a pointer `call` may call.
    pub fn may_call(&self, call: V) -> &[usize] {
        self.calls.may_call(call)
    }

    /// The calls through pointers that may call function `f`.
    pub fn indirect_callers(&self, f: usize) -> &[V] {
        self.calls.indirect_callers(f)
    }

    /// Whether function `f` may be called by code the analysis does not see.
    pub fn is_open(&self, f: usize) -> bool {
        self.calls.is_open(f)
    }
}
