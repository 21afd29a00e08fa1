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
//! In a guarded slice these rules hold within each run ([`super::worlds`]): what the guarded
//! version stores is read only by the guarded version, and communication dependence marks
//! only the calls of the run that needs them.

use super::class::External;
use super::effects::Effects;
use super::fields::{self, LiveMemory};
use super::ir::{self, Ir, V};
use super::mpi::MpiCall;
use super::pointsto::{Obj, Objs, PointsTo, UNKNOWN};
use super::why;
use super::worlds::{Runs, Worlds, EACH};
use super::writers::{self, Writer, Writes};
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
    /// For every live instruction but the roots, the instruction that made it live.
    pub because: HashMap<V, V>,
}

/// Operands an instruction is known to need instead of all of them (an `and` with an operand
/// known false needs none), for a guarded version's assumption.
pub type Assumed = HashMap<V, Vec<V>>;

struct Solver<'a> {
    ir: &'a Ir,
    pt: &'a PointsTo,
    worlds: &'a Worlds,
    assumed: &'a Assumed,
    out: Liveness,
    work: Vec<V>,
    ret_needed: Vec<bool>,
    formals: HashSet<(usize, usize)>,
    /// What live code reads, in the full run and in the guarded one.
    memory: [LiveMemory; 2],
    /// Memory some MPI call is given a pointer to.
    mpi_memory: Objs,
    /// Memory MPI calls receive messages into.
    received: Objs,
    /// The send buffers of marked calls, needed once something live reads a received
    /// message (`None` from then on): the trace records no message contents.
    sent: Option<Objs>,
    /// For each live object, the instruction whose reading it made it live.
    readers: HashMap<Obj, V>,
    /// The instruction being processed (what [`Solver::mark`] records as the cause).
    current: Option<V>,
    writers: Vec<Writer>,
    /// Whether communication dependence marked the point-to-point calls of each run.
    p2p_marked: [bool; 2],
    /// Collectives marked by name, per run.
    collectives_marked: HashSet<(usize, String)>,
    /// Calls ending the program (`exit`, Fortran's `STOP`, `abort`, `MPI_Abort`) and the
    /// structure tree's hooks: not roots, but kept once their block can still be reached
    /// ([`Solver::reached_exits`]).
    exits: Vec<V>,
}

/// Solves liveness for the module, rooted at `entry` (the program's entry function), with the
/// runs of `worlds` kept apart and the operands `assumed` instructions need.
pub fn solve(
    ir: &Ir,
    pt: &PointsTo,
    entry: Option<usize>,
    worlds: &Worlds,
    assumed: &Assumed,
) -> Liveness {
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
        worlds,
        assumed,
        out: Liveness {
            live: HashSet::new(),
            marked: HashSet::new(),
            mpi,
            active: vec![false; ir.funcs.len()],
            returns_used: Vec::new(),
            caveats: Vec::new(),
            because: HashMap::new(),
        },
        work: Vec::new(),
        ret_needed: vec![false; ir.funcs.len()],
        formals: HashSet::new(),
        memory: Default::default(),
        mpi_memory: Objs::new(),
        received: Objs::new(),
        sent: Some(Objs::new()),
        readers: HashMap::new(),
        current: None,
        writers: Vec::new(),
        p2p_marked: [false; 2],
        collectives_marked: HashSet::new(),
        exits: Vec::new(),
    };
    s.writers = writers::collect(ir, pt, &s.out.mpi);
    s.mpi_memory = s
        .out
        .mpi
        .keys()
        .flat_map(|&c| ir::call_args(c))
        .flat_map(|a| pt.of(a))
        .collect();
    s.received = s
        .out
        .mpi
        .iter()
        .flat_map(|(&c, m)| {
            let args = ir::call_args(c);
            (0..args.len())
                .filter(|&k| matches!(m.role(k), Some(Role::RecvBuffer | Role::InoutBuffer)))
                .flat_map(|k| pt.of(args[k]))
                .collect::<Vec<_>>()
        })
        .collect();
    // The entry's result (the exit status) is not part of the criterion: a sliced `main`
    // returns 0.
    if let Some(e) = entry {
        s.activate(e);
    }
    // A function whose address is taken may be called back by library code (`qsort`'s
    // comparator): it is never emptied.
    for f in 0..ir.funcs.len() {
        if pt.is_open(f) {
            s.activate(f);
        }
    }
    // Static constructors run whatever the slice keeps: never emptied.
    for f in ir.static_constructors() {
        s.activate(f);
    }
    // A function nothing calls (inlined everywhere) never runs, unless it is the entry or
    // called through a pointer: nothing in it is a root or a writer.
    let runs: Vec<bool> = (0..ir.funcs.len())
        .map(|f| {
            entry.is_none_or(|e| e == f)
                || !ir.funcs[f].callers.is_empty()
                || ir.funcs[f].address_taken
        })
        .collect();
    s.writers.retain(|w| runs[ir.place[&w.inst].0]);
    for (_, f) in ir.funcs.iter().enumerate().filter(|&(f, _)| runs[f]) {
        for &i in f.insts.iter().flatten() {
            if s.ends_program(i) || is_hook(i) {
                s.exits.push(i);
            } else if s.is_root(i, &mut caveats) {
                s.mark(i);
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
    if let Some(&reader) = s.readers.get(&UNKNOWN) {
        caveats.push(why::unknown_caveat(ir, pt, &s.out.because, reader));
    }
    caveats.sort();
    caveats.dedup();
    s.out.caveats = caveats;
    s.out.returns_used = s.ret_needed;
    s.out
}

/// Whether `i` calls one of the structure tree's hooks (`conifer.hook.X`, the weak
/// `conifer_X` it calls).
fn is_hook(i: V) -> bool {
    ir::is_call(i)
        && ir::direct_callee(i).is_some_and(|c| {
            let name = ir::name_of(c);
            name.starts_with("conifer.hook.") || name.starts_with("conifer_")
        })
}

impl Solver<'_> {
    fn callee_class(&self, call: V) -> Option<External> {
        writers::external_class(self.ir, &self.out.mpi, call)
    }

    /// Whether `i` ends the program: a call that never returns (`exit`, `STOP`, `abort`,
    /// a C++ `throw`) or `MPI_Abort`. A run that succeeds reaches `MPI_Finalize`, so before
    /// it these end only failed runs (an MPI program exiting unfinalised is erroneous), after
    /// it nothing more is recorded: such a call is no root, and the checks deciding it are
    /// not kept for its sake. It stays where the sliced program still reaches it.
    fn ends_program(&self, i: V) -> bool {
        ir::is_call(i)
            && (ir::followed_by_unreachable(i)
                || self.out.mpi.get(&i).is_some_and(|m| m.name == "MPI_Abort"))
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
            // A call through a pointer the points-to resolves calls functions of the module.
            None if self.pt.targets(i).is_some() => false,
            None => {
                caveats.push(
                    "calls through pointers kept, with every function whose address is taken"
                        .into(),
                );
                true
            }
            Some(_) => match self.callee_class(i) {
                Some(External::Unknown) => true,
                // The recorder traces the release of memory MPI was given; other frees go
                // with the code that allocated the memory.
                Some(External::Frees) => ir::call_args(i)
                    .first()
                    .is_some_and(|&p| self.pt.may_alias(&self.pt.of(p), &self.mpi_memory)),
                _ => false,
            },
        }
    }

    /// Marks every exit and hook whose block the sliced program still reaches: its function
    /// runs and every branch deciding whether the block runs is kept (a removed branch jumps
    /// past it); a hook's own target runs whenever its wrapper does. Removing such an exit
    /// would run into its `unreachable`; a hook reports the structure tree's position of
    /// what is kept. Whether any was marked.
    fn reached_exits(&mut self) -> bool {
        self.current = None;
        let mut any = false;
        for i in std::mem::take(&mut self.exits) {
            let (f, b) = self.ir.place[&i];
            let target =
                ir::direct_callee(i).is_some_and(|c| ir::name_of(c).starts_with("conifer_"));
            let reached = self.out.active[f]
                && (target
                    || self.ir.funcs[f].control[b]
                        .iter()
                        .all(|&a| self.out.live.contains(&self.ir.terminator(f, a))));
            if reached {
                self.mark(i);
                any = true;
            } else {
                self.exits.push(i);
            }
        }
        any
    }

    /// Marks writers of live objects; whether any became live.
    fn rescan(&mut self) -> bool {
        let mut any = false;
        let received_read = self
            .memory
            .iter()
            .any(|m| m.is_read(self.pt, &self.received, None));
        if self.sent.is_some() && received_read {
            let sent = self.sent.take().unwrap_or_default();
            any |= !sent.is_empty();
            self.current = None;
            self.add_objs(sent, super::worlds::BOTH);
        }
        let writers = std::mem::take(&mut self.writers);
        for w in &writers {
            let runs = self.runs(w.inst);
            let read = EACH.iter().any(|&(k, run)| {
                runs & run != 0 && self.memory[k].is_read(self.pt, &w.objs, w.exact)
            });
            if !read {
                continue;
            }
            let fresh = match w.kind {
                Writes::Plain => !self.out.live.contains(&w.inst),
                Writes::Mpi => !self.out.marked.contains(&w.inst),
            };
            if !fresh {
                continue;
            }
            self.current = self.reader_of(&w.objs);
            match w.kind {
                Writes::Plain => self.mark(w.inst),
                Writes::Mpi => self.mark_mpi(w.inst),
            }
            any = true;
        }
        self.current = None;
        self.writers = writers;
        any
    }

    /// The instruction whose reading made one of `objs` (or what they may alias) live.
    fn reader_of(&self, objs: &Objs) -> Option<V> {
        objs.iter()
            .find_map(|o| self.readers.get(o))
            .or_else(|| self.readers.get(&UNKNOWN))
            .or_else(|| self.readers.values().next())
            .copied()
    }

    fn mark(&mut self, i: V) {
        if self.out.live.insert(i) {
            if let Some(c) = self.current.filter(|&c| c != i) {
                self.out.because.insert(i, c);
            }
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
        // A hook's calls are kept where they are reached ([`Solver::reached_exits`]).
        if !func.name.starts_with("conifer.hook.") {
            for &c in &func.callers {
                self.mark(c);
            }
        }
        let pt = self.pt;
        for &c in pt.indirect_callers(f) {
            self.mark(c);
        }
        // Calls ordering OpenMP threads stay wherever code of their function does.
        let orders: Vec<V> = func
            .insts
            .iter()
            .flatten()
            .copied()
            .filter(|&i| {
                ir::is_call(i)
                    && ir::direct_callee(i).is_some_and(|c| super::openmp::orders(&ir::name_of(c)))
            })
            .collect();
        orders.into_iter().for_each(|i| self.mark(i));
    }

    /// The runs instruction `i` executes in.
    fn runs(&self, i: V) -> Runs {
        self.worlds.of(self.ir, i)
    }

    /// Live code running in `runs` reads all of `objs`.
    fn add_objs(&mut self, objs: Objs, runs: Runs) {
        for o in objs {
            let mut fresh = false;
            for (k, run) in EACH {
                if runs & run != 0 {
                    fresh |= self.memory[k].read_whole(o);
                }
            }
            self.note_reader(o, fresh);
        }
    }

    /// Remembers the instruction being processed as what made `o` live, when `fresh`.
    fn note_reader(&mut self, o: Obj, fresh: bool) {
        if let Some(c) = self.current.filter(|_| fresh) {
            self.readers.insert(o, c);
        }
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
                    let pt = self.pt;
                    for &f in pt.may_call(v) {
                        self.returns_needed(f);
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
        sites.extend(self.pt.indirect_callers(f).iter().copied());
        for c in sites {
            if let Some(a) = self.ir.actual(c, k) {
                self.need(a);
            }
        }
    }

    fn process(&mut self, i: V) {
        self.current = Some(i);
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
                match fields::access(self.ir, self.pt, i).filter(|_| ir::opcode(i) == Op::LLVMLoad)
                {
                    Some(a) => {
                        let runs = self.runs(i);
                        let mut fresh = false;
                        for (k, run) in EACH {
                            if runs & run != 0 {
                                fresh |= self.memory[k].read_part(a);
                            }
                        }
                        self.note_reader(a.obj, fresh);
                    }
                    None => self.add_objs(self.pt.of(ops[0]), self.runs(i)),
                }
                ops.into_iter().for_each(|v| self.need(v));
            }
            Op::LLVMRet => {
                if self.ret_needed[f] {
                    if let Some(&v) = ops.first() {
                        self.need(v);
                    }
                }
            }
            Op::LLVMCall | Op::LLVMInvoke | Op::LLVMCallBr => {
                let va_start = ir::direct_callee(i)
                    .is_some_and(|c| ir::name_of(c).starts_with("llvm.va_start"));
                if va_start {
                    self.variadic_needed(f);
                }
                if let Some(pad) = ir::landing_pad(i) {
                    // Where a kept invoke unwinds to must still start with its landing pad.
                    self.mark(pad);
                }
                self.call(i)
            }
            Op::LLVMVAArg => {
                self.variadic_needed(f);
                ops.into_iter().for_each(|v| self.need(v));
            }
            _ => match self.assumed.get(&i) {
                Some(needed) => needed.clone().into_iter().for_each(|v| self.need(v)),
                None => ops.into_iter().for_each(|v| self.need(v)),
            },
        }
    }

    /// Variadic function `f` reads its variable arguments (`va_start`, `va_arg`): what every
    /// call passes beyond its fixed parameters is needed.
    fn variadic_needed(&mut self, f: usize) {
        let func = &self.ir.funcs[f];
        // SAFETY: counting the parameters of a live function.
        let fixed = unsafe { llc::LLVMCountParams(func.value) } as usize;
        let passed: Vec<V> = func
            .callers
            .iter()
            .chain(self.pt.indirect_callers(f))
            .flat_map(|&c| ir::call_args(c).into_iter().skip(fixed))
            .collect();
        passed.into_iter().for_each(|a| self.need(a));
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
            self.add_objs(objs, self.runs(i));
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
        if let Some(&g) = self.ir.callbacks.get(&i) {
            // The library runs the function it calls back with what it is given; the rest
            // of its arguments the library itself needs.
            self.activate(g);
            let passed: Vec<V> = (0..args.len())
                .filter_map(|k| self.ir.actual(i, k))
                .collect();
            for a in args.into_iter().filter(|a| !passed.contains(a)) {
                self.need(a);
            }
            return;
        }
        // SAFETY: `i` is a call; its last operand is the callee.
        let callee = unsafe { llc::LLVMGetCalledValue(i) };
        self.need(callee);
        let pt = self.pt;
        if let Some(targets) = pt.targets(i) {
            // Resolved: like a direct call of each function it may call.
            targets.iter().for_each(|&g| self.activate(g));
            return;
        }
        let class = self.callee_class(i);
        for &a in &args {
            self.need(a);
        }
        // What a library function reads through its pointers must be computed.
        let read = match class {
            Some(class) => Effects::new(self.pt, i, class).reads(),
            None => args.iter().flat_map(|&a| self.pt.of(a)).collect(),
        };
        self.add_objs(read, self.runs(i));
        if ir::direct_callee(i).is_none() {
            pt.may_call(i).iter().for_each(|&g| self.activate(g));
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
        let mut sent = Objs::new();
        for (k, &a) in args.iter().enumerate() {
            let reads = matches!(
                call.role(k),
                Some(Role::Criterion | Role::InoutBuffer) | None
            );
            if reads && call.by_address(k) {
                objs.extend(self.pt.of(a));
            } else if call.role(k) == Some(Role::SendBuffer) {
                sent.extend(self.pt.of(a));
            }
        }
        match &mut self.sent {
            Some(pending) => pending.extend(sent),
            None => objs.extend(sent),
        }
        let skip = call.skip();
        let p2p = skip.is_some_and(Skip::point_to_point) && skip != Some(Skip::Send)
            || call.completes()
            || call.needs_messages();
        let collective = matches!(skip, Some(Skip::Collective | Skip::NonblockingCollective))
            .then(|| call.name.clone());
        let runs = self.runs(i);
        self.add_objs(objs, runs);
        for (k, run) in EACH.into_iter().filter(|&(_, run)| runs & run != 0) {
            if p2p && !std::mem::replace(&mut self.p2p_marked[k], true) {
                let all: Vec<V> = self
                    .out
                    .mpi
                    .iter()
                    .filter(|&(&v, c)| {
                        self.runs(v) & run != 0
                            && matches!(c.skip(), Some(s) if s.point_to_point() || s == Skip::NonblockingCollective)
                    })
                    .map(|(&v, _)| v)
                    .collect();
                all.into_iter().for_each(|v| self.mark_mpi(v));
            }
            if let Some(name) = &collective {
                if self.collectives_marked.insert((k, name.clone())) {
                    let same: Vec<V> = self
                        .out
                        .mpi
                        .iter()
                        .filter(|&(&v, c)| self.runs(v) & run != 0 && &c.name == name)
                        .map(|(&v, _)| v)
                        .collect();
                    same.into_iter().for_each(|v| self.mark_mpi(v));
                }
            }
        }
    }
}
