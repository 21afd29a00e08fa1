//! FACT's live propagation (Algorithms 1–3) on LLVM IR: a backward worklist over SSA def-use,
//! control dependence (post-dominance frontiers), memory (a store is live when it may write
//! an object a live load reads), and calls (a live parameter makes the arguments at every
//! call site live, a live call result makes the callee's returns live, a call is live when
//! its callee may write a live object: MOD summaries), iterated to a fixed point over the
//! whole program. Every MPI call is kept; its communication arguments are the criterion. An
//! MPI call is *marked* (executed at run time) when something it writes is read live, when
//! the runtime always executes it, or by communication dependence: one marked point-to-point
//! receive (or probe, or completion whose result is live) marks every point-to-point call and
//! every nonblocking collective, and one marked collective marks every collective of its name.

use super::externals::{self, External};
use super::ir::{self, Ir, V};
use super::mpi::MpiCall;
use super::pointsto::{may_alias, Objs, PointsTo, UNKNOWN};
use conifer_spec::slicing::{Role, Skip};
use llvm_sys::core as llc;
use llvm_sys::LLVMOpcode as Op;
use std::collections::{HashMap, HashSet};

/// The result: what is kept and which MPI calls execute.
pub struct Liveness {
    /// Live instructions (everything else is removed).
    pub live: HashSet<V>,
    /// Marked MPI calls.
    pub marked: HashSet<V>,
    /// MPI calls by instruction.
    pub mpi: HashMap<V, MpiCall>,
    /// Functions some live code runs in.
    pub active: Vec<bool>,
    /// Functions whose return value live code uses (others return zero when sliced).
    pub returns_used: Vec<bool>,
    /// Why the slice had to keep code it could not bound.
    pub caveats: Vec<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Writes {
    /// A store, a memory-writing library call, a call of a function that writes.
    Plain,
    /// An MPI call's results.
    Mpi,
}

struct Solver<'a> {
    ir: &'a Ir,
    pt: &'a PointsTo,
    out: Liveness,
    work: Vec<V>,
    ret_needed: Vec<bool>,
    formals: HashSet<(usize, usize)>,
    live_objs: Objs,
    writers: Vec<(V, Objs, Writes)>,
    p2p_marked: bool,
    collectives_marked: HashSet<String>,
    /// Calls after `MPI_Finalize` that never return (`exit`, Fortran's `STOP`): not roots, but
    /// kept once their block can still be reached ([`Solver::reached_exits`]).
    late_exits: Vec<V>,
}

/// Solves liveness for the module, rooted at `entry` (the program's entry function).
pub fn solve(ir: &Ir, pt: &PointsTo, entry: Option<usize>) -> Liveness {
    let mut mpi = HashMap::new();
    let mut caveats = Vec::new();
    for f in &ir.funcs {
        for &i in f.insts.iter().flatten() {
            if !ir::is_call(i) {
                continue;
            }
            match ir::direct_callee(i) {
                Some(c) if !ir.index.contains_key(&c) => {
                    if let Some(call) = MpiCall::new(&ir::name_of(c)) {
                        mpi.insert(i, call);
                    }
                }
                _ => {}
            }
        }
    }
    let mut s = Solver {
        ir,
        pt,
        out: Liveness {
            live: HashSet::new(),
            marked: HashSet::new(),
            mpi,
            active: vec![false; ir.funcs.len()],
            returns_used: Vec::new(),
            caveats: Vec::new(),
        },
        work: Vec::new(),
        ret_needed: vec![false; ir.funcs.len()],
        formals: HashSet::new(),
        live_objs: Objs::new(),
        writers: Vec::new(),
        p2p_marked: false,
        collectives_marked: HashSet::new(),
        late_exits: Vec::new(),
    };
    s.collect_writers();
    // The entry's result (the exit status) is not part of the criterion: a sliced `main`
    // returns 0.
    if let Some(e) = entry {
        s.activate(e);
    }
    // A function whose address is taken may be called back by library code (`qsort`'s
    // comparator): it is never emptied.
    for f in 0..ir.funcs.len() {
        if ir.funcs[f].address_taken {
            s.activate(f);
        }
    }
    for f in &ir.funcs {
        for &i in f.insts.iter().flatten() {
            if s.is_root(i, &mut caveats) {
                s.mark(i);
            } else if ir.after_finalize(i) && ir::is_call(i) && ir::followed_by_unreachable(i) {
                s.late_exits.push(i);
            }
        }
    }
    loop {
        while let Some(i) = s.work.pop() {
            s.process(i);
        }
        if !s.rescan() && !s.reached_exits() {
            break;
        }
    }
    if s.live_objs.contains(&UNKNOWN) {
        caveats.push(
            "a live value is read through a pointer the analysis cannot follow: every store kept"
                .into(),
        );
    }
    caveats.sort();
    caveats.dedup();
    s.out.caveats = caveats;
    s.out.returns_used = s.ret_needed;
    s.out
}

impl Solver<'_> {
    /// What Fortran I/O call `call` reaches through its arguments `args`: what they point
    /// to, and behind a transferred array descriptor the data.
    fn io_objs(&self, call: V, args: &[V]) -> Objs {
        let name = ir::direct_callee(call).map(ir::name_of).unwrap_or_default();
        let reaches_data = externals::io_reaches_data(&name);
        args.iter()
            .flat_map(|&a| match reaches_data {
                true => self.pt.reach(&self.pt.of(a)),
                false => self.pt.of(a),
            })
            .collect()
    }

    /// What Fortran I/O call `call` may write: an output item only its statement, any other
    /// call everything its arguments reach but constants (formats, the source file's name).
    fn io_writes(&self, call: V, args: &[V]) -> Objs {
        let name = ir::direct_callee(call).map(ir::name_of).unwrap_or_default();
        let written = match externals::io_writes_only_statement(&name) {
            true => &args[..args.len().min(1)],
            false => args,
        };
        let written: Vec<V> = written
            .iter()
            .copied()
            .filter(|&a| !ir::is_constant_global(a))
            .collect();
        self.io_objs(call, &written)
    }

    fn callee_class(&self, call: V) -> Option<External> {
        let c = ir::direct_callee(call)?;
        if self.ir.index.contains_key(&c) || self.out.mpi.contains_key(&call) {
            return None;
        }
        Some(externals::classify(&ir::name_of(c)))
    }

    /// Instructions kept whatever they compute: MPI calls, calls the analysis cannot see into.
    fn is_root(&self, i: V, caveats: &mut Vec<String>) -> bool {
        if !ir::is_call(i) {
            return false;
        }
        if self.out.mpi.contains_key(&i) {
            return true;
        }
        // Nothing is recorded once MPI is finalised: what runs after (reporting, `exit`,
        // Fortran's `STOP`) cannot change the trace.
        if self.ir.after_finalize(i) {
            return false;
        }
        if ir::is_inline_asm(i) {
            caveats.push("inline assembly kept".into());
            return true;
        }
        if ir::opcode(i) == Op::LLVMCallBr {
            return true;
        }
        match ir::direct_callee(i) {
            None => {
                caveats.push(
                    "calls through pointers kept, with every function whose address is taken"
                        .into(),
                );
                true
            }
            Some(_) => matches!(
                self.callee_class(i),
                Some(External::Unknown | External::Frees)
            ),
        }
    }

    fn collect_writers(&mut self) {
        let ir = self.ir;
        let mut direct: Vec<Objs> = vec![Objs::new(); ir.funcs.len()];
        let mut user_calls: Vec<(usize, V, usize)> = Vec::new();
        for (fi, f) in ir.funcs.iter().enumerate() {
            for &i in f.insts.iter().flatten() {
                let (objs, kind) = match ir::opcode(i) {
                    Op::LLVMStore => (self.pt.of(ir::operands(i)[1]), Writes::Plain),
                    Op::LLVMAtomicRMW | Op::LLVMAtomicCmpXchg => {
                        (self.pt.of(ir::operands(i)[0]), Writes::Plain)
                    }
                    Op::LLVMCall | Op::LLVMInvoke => {
                        let args = ir::call_args(i);
                        if let Some(call) = self.out.mpi.get(&i) {
                            let objs: Objs = args
                                .iter()
                                .enumerate()
                                .filter(|(k, _)| {
                                    matches!(
                                        call.role(*k),
                                        Some(Role::Output | Role::RecvBuffer | Role::InoutBuffer)
                                    ) && !(call.fortran && *k + 1 == args.len())
                                })
                                .flat_map(|(_, &a)| self.pt.of(a))
                                .collect();
                            (objs, Writes::Mpi)
                        } else if let Some(g) =
                            ir::direct_callee(i).and_then(|c| ir.index.get(&c).copied())
                        {
                            user_calls.push((fi, i, g));
                            continue;
                        } else {
                            match self.callee_class(i) {
                                Some(External::Writes) => (self.pt.of(args[0]), Writes::Plain),
                                Some(External::IoStatement) => {
                                    (self.io_writes(i, &args), Writes::Plain)
                                }
                                Some(External::FortranAssign) => {
                                    (self.pt.reach(&self.pt.of(args[0])), Writes::Plain)
                                }
                                // Not a root once MPI is finalised ([`Solver::is_root`]), but
                                // kept when what it may write is read live.
                                Some(External::Unknown) if ir.after_finalize(i) => (
                                    args.iter()
                                        .filter(|&&a| !ir::is_constant_global(a))
                                        .flat_map(|&a| self.pt.reach(&self.pt.of(a)))
                                        .collect(),
                                    Writes::Plain,
                                ),
                                _ => continue,
                            }
                        }
                    }
                    _ => continue,
                };
                direct[fi].extend(objs.iter().copied());
                if !objs.is_empty() {
                    self.writers.push((i, objs, kind));
                }
            }
        }
        // MOD summaries: what a call of each function may write, callees included.
        let mut summary = direct;
        loop {
            let mut changed = false;
            for &(f, _, g) in &user_calls {
                if f != g {
                    let add: Vec<_> = summary[g].iter().copied().collect();
                    let before = summary[f].len();
                    summary[f].extend(add);
                    changed |= summary[f].len() != before;
                }
            }
            if !changed {
                break;
            }
        }
        for (_, call, g) in user_calls {
            if !summary[g].is_empty() {
                self.writers.push((call, summary[g].clone(), Writes::Plain));
            }
        }
    }

    /// Marks every late exit whose block the sliced program still reaches: its function runs
    /// and every branch deciding whether the block runs is kept (a removed branch jumps past
    /// it). Removing such an exit would run into its `unreachable`. Whether any was marked.
    fn reached_exits(&mut self) -> bool {
        let mut any = false;
        for i in std::mem::take(&mut self.late_exits) {
            let (f, b) = self.ir.place[&i];
            let reached = self.out.active[f]
                && self.ir.funcs[f].control[b]
                    .iter()
                    .all(|&a| self.out.live.contains(&self.ir.terminator(f, a)));
            if reached {
                self.mark(i);
                any = true;
            } else {
                self.late_exits.push(i);
            }
        }
        any
    }

    /// Marks writers of live objects; whether any became live.
    fn rescan(&mut self) -> bool {
        let mut any = false;
        let writers = std::mem::take(&mut self.writers);
        for (i, objs, kind) in &writers {
            if !may_alias(objs, &self.live_objs) {
                continue;
            }
            match kind {
                Writes::Plain if !self.out.live.contains(i) => {
                    self.mark(*i);
                    any = true;
                }
                Writes::Mpi if !self.out.marked.contains(i) => {
                    self.mark_mpi(*i);
                    any = true;
                }
                _ => {}
            }
        }
        self.writers = writers;
        any
    }

    fn mark(&mut self, i: V) {
        if self.out.live.insert(i) {
            self.work.push(i);
        }
    }

    fn activate(&mut self, f: usize) {
        if std::mem::replace(&mut self.out.active[f], true) {
            return;
        }
        let func = &self.ir.funcs[f];
        for (b, insts) in func.insts.iter().enumerate() {
            let term = *insts.last().expect("terminator");
            // An `unreachable` stays whatever happens (see `transform`): it is not live, so
            // the branches leading to it are live only when something before it is (an
            // `exit` before `MPI_Finalize`, not one after it).
            if ir::opcode(term) == Op::LLVMUnreachable {
                continue;
            }
            // A branch with no post-dominator to jump to instead is kept.
            let exit = ir::opcode(term) == Op::LLVMRet;
            if exit || func.ipdom[b].is_none() || ir::opcode(term) == Op::LLVMInvoke {
                self.mark(term);
            }
        }
        for &c in &func.callers {
            self.mark(c);
        }
        if func.address_taken {
            for &c in &self.ir.indirect_calls {
                self.mark(c);
            }
        }
    }

    fn add_objs(&mut self, objs: Objs) {
        self.live_objs.extend(objs);
    }

    /// `v` is used by live code.
    fn need(&mut self, v: V) {
        // SAFETY: classifying a live value.
        unsafe {
            if !llc::LLVMIsAInstruction(v).is_null() {
                self.mark(v);
                if !ir::is_call(v) {
                    return;
                }
                if let Some(g) = ir::direct_callee(v).and_then(|c| self.ir.index.get(&c).copied()) {
                    self.returns_needed(g);
                }
                if ir::is_call(v) && ir::direct_callee(v).is_none() {
                    for f in 0..self.ir.funcs.len() {
                        if self.ir.funcs[f].address_taken {
                            self.returns_needed(f);
                        }
                    }
                }
            } else if !llc::LLVMIsAArgument(v).is_null() {
                let f = llc::LLVMGetParamParent(v);
                let Some(&fi) = self.ir.index.get(&f) else {
                    return;
                };
                let k = (0..llc::LLVMCountParams(f))
                    .position(|k| llc::LLVMGetParam(f, k) == v)
                    .expect("a parameter of its function");
                self.formal_needed(fi, k);
            }
        }
    }

    fn returns_needed(&mut self, g: usize) {
        if std::mem::replace(&mut self.ret_needed[g], true) {
            return;
        }
        for &r in self.ir.funcs[g].insts.iter().flatten() {
            if ir::opcode(r) == Op::LLVMRet {
                if let Some(&v) = ir::operands(r).first() {
                    self.need(v);
                }
            }
        }
    }

    fn formal_needed(&mut self, f: usize, k: usize) {
        if !self.formals.insert((f, k)) {
            return;
        }
        let func = &self.ir.funcs[f];
        let mut sites: Vec<V> = func.callers.clone();
        if func.address_taken {
            sites.extend(self.ir.indirect_calls.iter().copied());
        }
        for c in sites {
            if let Some(&a) = ir::call_args(c).get(k) {
                self.need(a);
            }
        }
    }

    fn process(&mut self, i: V) {
        let (f, b) = self.ir.place[&i];
        self.activate(f);
        for a in self.ir.funcs[f].control[b].clone() {
            self.mark(self.ir.terminator(f, a));
        }
        let ops = ir::operands(i);
        match ir::opcode(i) {
            Op::LLVMPHI => {
                // SAFETY: `i` is a phi.
                let count = unsafe { llc::LLVMCountIncoming(i) };
                for k in 0..count {
                    // SAFETY: `k` is in range; every block ends with a terminator.
                    let (v, term) = unsafe {
                        let block = llc::LLVMGetIncomingBlock(i, k);
                        (
                            llc::LLVMGetIncomingValue(i, k),
                            llc::LLVMGetBasicBlockTerminator(block),
                        )
                    };
                    self.need(v);
                    self.mark(term);
                }
            }
            Op::LLVMLoad | Op::LLVMAtomicRMW | Op::LLVMAtomicCmpXchg => {
                self.add_objs(self.pt.of(ops[0]));
                ops.into_iter().for_each(|v| self.need(v));
            }
            Op::LLVMRet => {
                if self.ret_needed[f] {
                    if let Some(&v) = ops.first() {
                        self.need(v);
                    }
                }
            }
            Op::LLVMCall | Op::LLVMInvoke | Op::LLVMCallBr => self.call(i),
            _ => ops.into_iter().for_each(|v| self.need(v)),
        }
    }

    fn call(&mut self, i: V) {
        let args = ir::call_args(i);
        if let Some(call) = self.out.mpi.get(&i) {
            let mut objs = Objs::new();
            for (k, &a) in args.iter().enumerate() {
                if call.role(k) == Some(Role::Criterion) && call.by_address(k) {
                    objs.extend(self.pt.of(a));
                }
            }
            let always = call.skip().is_none() && !call.completes();
            for a in args {
                self.need(a);
            }
            self.add_objs(objs);
            if always {
                self.mark_mpi(i);
            }
            return;
        }
        if let Some(g) = ir::direct_callee(i).and_then(|c| self.ir.index.get(&c).copied()) {
            // The callee runs; its arguments are needed when its parameters are
            // (`formal_needed`).
            self.activate(g);
            return;
        }
        // SAFETY: `i` is a call; its last operand is the callee.
        let callee = unsafe { llc::LLVMGetCalledValue(i) };
        self.need(callee);
        let class = self.callee_class(i);
        for &a in &args {
            self.need(a);
        }
        // What a library function reads through its pointers must be computed; a copy's
        // destination is written, not read; Fortran runtime calls taking descriptors read
        // the data behind them too.
        let read = match class {
            Some(External::Pure | External::Frees) => Objs::new(),
            Some(External::Writes) => args.iter().skip(1).flat_map(|&a| self.pt.of(a)).collect(),
            Some(External::IoStatement) => self.io_objs(i, &args),
            Some(External::FortranAssign) => args
                .iter()
                .enumerate()
                .flat_map(|(k, &a)| match k < 2 {
                    true => self.pt.reach(&self.pt.of(a)),
                    false => self.pt.of(a),
                })
                .collect(),
            _ => args.iter().flat_map(|&a| self.pt.of(a)).collect(),
        };
        self.add_objs(read);
        if ir::direct_callee(i).is_none() {
            for f in 0..self.ir.funcs.len() {
                if self.ir.funcs[f].address_taken {
                    self.activate(f);
                }
            }
        }
    }

    /// The call executes at run time: everything it reads must be computed.
    fn mark_mpi(&mut self, i: V) {
        if !self.out.marked.insert(i) {
            return;
        }
        self.mark(i);
        let call = &self.out.mpi[&i];
        let args = ir::call_args(i);
        let mut objs = Objs::new();
        for (k, &a) in args.iter().enumerate() {
            let reads = matches!(
                call.role(k),
                Some(Role::Criterion | Role::SendBuffer | Role::InoutBuffer) | None
            );
            if reads && call.by_address(k) {
                objs.extend(self.pt.of(a));
            }
        }
        let skip = call.skip();
        let p2p = skip.is_some_and(Skip::point_to_point) && skip != Some(Skip::Send)
            || call.completes()
            || call.needs_messages();
        let collective = matches!(skip, Some(Skip::Collective | Skip::NonblockingCollective))
            .then(|| call.name.clone());
        self.add_objs(objs);
        if p2p && !std::mem::replace(&mut self.p2p_marked, true) {
            let all: Vec<V> = self
                .out
                .mpi
                .iter()
                .filter(|(_, c)| {
                    matches!(c.skip(), Some(s) if s.point_to_point() || s == Skip::NonblockingCollective)
                })
                .map(|(&v, _)| v)
                .collect();
            all.into_iter().for_each(|v| self.mark_mpi(v));
        }
        if let Some(name) = collective {
            if self.collectives_marked.insert(name.clone()) {
                let same: Vec<V> = self
                    .out
                    .mpi
                    .iter()
                    .filter(|(_, c)| c.name == name)
                    .map(|(&v, _)| v)
                    .collect();
                same.into_iter().for_each(|v| self.mark_mpi(v));
            }
        }
    }
}
