//! Why the slice keeps something: every instruction liveness keeps remembers the instruction
//! that made it live (its use, the load of what it writes, the call of its function), back to
//! a root (an MPI call, a library call kept whatever it computes). [`Why::chain`] walks that
//! back and names each step by source line, function and, where one is known, variable.

use super::ir::{self, Ir, V};
use super::pointsto::PointsTo;
use llvm_sys::core as llc;
use llvm_sys::LLVMOpcode as Op;
use std::collections::{HashMap, HashSet};

/// Most steps a chain shows.
const STEPS: usize = 14;

/// How many of the functions keeping the most instructions [`largest`] explains.
const FUNCTIONS: usize = 5;

/// How many source lines per function [`largest`] explains.
const LINES: usize = 3;

/// The causes liveness recorded.
pub struct Why<'a> {
    ir: &'a Ir,
    because: &'a HashMap<V, V>,
}

impl<'a> Why<'a> {
    /// Explanations over `because` (instruction → what made it live).
    pub fn new(ir: &'a Ir, because: &'a HashMap<V, V>) -> Why<'a> {
        Why { ir, because }
    }

    /// `i` and what made it live, back to a root, as lines (`file:line in function: what`):
    /// the steps through memory and calls (loads, stores, calls), the first and the root;
    /// consecutive steps on one source line shown once.
    pub fn chain(&self, i: V) -> Vec<String> {
        let mut path = vec![i];
        let mut seen = HashSet::from([i]);
        while let Some(&next) = self.because.get(path.last().expect("a step")) {
            if !seen.insert(next) {
                break;
            }
            path.push(next);
        }
        let last = path.len() - 1;
        let shown: Vec<V> = path
            .iter()
            .enumerate()
            .filter(|&(k, &v)| {
                k == 0
                    || k == last
                    || matches!(
                        ir::opcode(v),
                        Op::LLVMLoad | Op::LLVMStore | Op::LLVMCall | Op::LLVMInvoke
                    )
            })
            .map(|(_, &v)| v)
            .collect();
        let mut out: Vec<String> = Vec::new();
        for (k, &v) in shown.iter().enumerate() {
            let step = self.describe(v);
            if out.last() == Some(&step) {
                continue;
            }
            if out.len() + 1 == STEPS && k + 1 < shown.len() {
                out.push("…".into());
                out.push(self.describe(*shown.last().expect("a root")));
                break;
            }
            out.push(step);
        }
        out
    }

    /// `file:line in function: what` for instruction `i`.
    pub fn describe(&self, i: V) -> String {
        let at = crate::ir::loc_of(i)
            .map(|l| format!("{}:{}", short(&l.file), l.line))
            .unwrap_or_else(|| "?".into());
        let function = self
            .ir
            .place
            .get(&i)
            .map(|&(f, _)| demangle(&self.ir.funcs[f].name))
            .unwrap_or_default();
        format!("{at} in {function}: {}", what(i))
    }
}

/// For the functions keeping the most of the `live` instructions, how many they keep and, for
/// the source lines keeping the most in each, the chain from one of their kept instructions (a
/// store where there is one) back to what made it live.
pub fn largest(ir: &Ir, live: &HashSet<V>, because: &HashMap<V, V>) -> Vec<String> {
    let why = Why::new(ir, because);
    let kept = |f: usize| -> Vec<V> {
        ir.funcs[f]
            .insts
            .iter()
            .flatten()
            .copied()
            .filter(|i| live.contains(i))
            .collect()
    };
    let mut counts: Vec<(usize, usize)> = (0..ir.funcs.len())
        .map(|f| (kept(f).len(), f))
        .filter(|&(n, _)| n > 0)
        .collect();
    counts.sort_by(|a, b| b.cmp(a));
    let mut out = Vec::new();
    for (n, f) in counts.into_iter().take(FUNCTIONS) {
        let total: usize = ir.funcs[f].insts.iter().map(Vec::len).sum();
        let mut text = format!(
            "{} keeps {n} of {total} instructions",
            demangle(&ir.funcs[f].name)
        );
        let mut lines: HashMap<u32, Vec<V>> = HashMap::new();
        for i in kept(f) {
            if let Some(l) = crate::ir::loc_of(i) {
                lines.entry(l.line).or_default().push(i);
            }
        }
        let mut lines: Vec<(u32, Vec<V>)> = lines.into_iter().collect();
        lines.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        for (line, insts) in lines.into_iter().take(LINES) {
            let pick = insts
                .iter()
                .find(|&&i| ir::opcode(i) == Op::LLVMStore)
                .unwrap_or(&insts[0]);
            text += &format!("\n  line {line} keeps {}:", insts.len());
            for step in why.chain(*pick) {
                text += &format!("\n    <- {step}");
            }
        }
        out.push(text);
    }
    out
}

/// The file name without its directories.
fn short(file: &str) -> &str {
    file.rsplit('/').next().unwrap_or(file)
}

/// What instruction `i` does, with the variable it reads or writes where one is named.
fn what(i: V) -> String {
    let ops = ir::operands(i);
    match ir::opcode(i) {
        Op::LLVMLoad => format!("reads {}", variable(ops[0])),
        Op::LLVMStore => format!("writes {}", variable(ops[1])),
        Op::LLVMCall | Op::LLVMInvoke => match ir::direct_callee(i) {
            Some(c) => format!("calls {}", demangle(&ir::name_of(c))),
            None => "calls through a pointer".into(),
        },
        Op::LLVMBr | Op::LLVMSwitch => "branches".into(),
        Op::LLVMRet => "returns".into(),
        Op::LLVMPHI => "joins values".into(),
        Op::LLVMICmp | Op::LLVMFCmp => "compares".into(),
        Op::LLVMGetElementPtr => format!("addresses {}", variable(ops[0])),
        _ => "computes".into(),
    }
}

/// The variable `address` points into, as the source names it where it can be told (a global
/// or a parameter), else what kind of memory it is.
pub fn variable(address: V) -> String {
    let mut v = address;
    // SAFETY: classifying and walking live values.
    unsafe {
        loop {
            if !llc::LLVMIsAGlobalVariable(v).is_null() {
                return demangle(&ir::name_of(v));
            }
            if !llc::LLVMIsAArgument(v).is_null() {
                let f = llc::LLVMGetParamParent(v);
                let k = (0..llc::LLVMCountParams(f))
                    .position(|k| llc::LLVMGetParam(f, k) == v)
                    .unwrap_or(0);
                return format!(
                    "what argument {} of {} points to",
                    k + 1,
                    demangle(&ir::name_of(f))
                );
            }
            let step = !llc::LLVMIsAConstantExpr(v).is_null()
                || (!llc::LLVMIsAInstruction(v).is_null()
                    && matches!(
                        ir::opcode(v),
                        Op::LLVMGetElementPtr | Op::LLVMBitCast | Op::LLVMAddrSpaceCast
                    ));
            if step && llc::LLVMGetNumOperands(v) > 0 {
                v = llc::LLVMGetOperand(v, 0);
                continue;
            }
            if !llc::LLVMIsAInstruction(v).is_null() {
                return match ir::opcode(v) {
                    Op::LLVMAlloca => "a local variable".into(),
                    Op::LLVMLoad => format!(
                        "memory a pointer in {} points to",
                        variable(ir::operands(v)[0])
                    ),
                    Op::LLVMCall | Op::LLVMInvoke => match ir::direct_callee(v) {
                        Some(c) => format!("memory {} returned", demangle(&ir::name_of(c))),
                        None => "memory a call through a pointer returned".into(),
                    },
                    _ => "memory".into(),
                };
            }
            return "memory".into();
        }
    }
}

/// A symbol as the source spells it: flang's `_QMmodEname` is `mod::name`, `_QFprocEname`
/// `proc::name`, `_QQmain` the main program, a Fortran procedure or `COMMON` block `name_`
/// is `name`; other symbols are returned as they are.
pub fn demangle(symbol: &str) -> String {
    if symbol == "_QQmain" {
        return "the main program".into();
    }
    if let Some(rest) = symbol.strip_prefix("_Q") {
        let mut parts: Vec<String> = Vec::new();
        let mut current = String::new();
        for c in rest.chars() {
            if c.is_ascii_uppercase() {
                if !current.is_empty() {
                    parts.push(std::mem::take(&mut current));
                }
            } else {
                current.push(c);
            }
        }
        if !current.is_empty() {
            parts.push(current);
        }
        if !parts.is_empty() {
            return parts.join("::");
        }
    }
    match symbol.strip_suffix('_') {
        Some(name) if !name.is_empty() && !name.contains("__") => name.into(),
        _ => symbol.into(),
    }
}

/// The caveat for a live read through a pointer the analysis cannot follow, by `reader`:
/// where, where the pointer came from, what made the read live.
pub fn unknown_caveat(ir: &Ir, pt: &PointsTo, because: &HashMap<V, V>, reader: V) -> String {
    let why = Why::new(ir, because);
    let address = match ir::opcode(reader) {
        Op::LLVMLoad | Op::LLVMAtomicRMW | Op::LLVMAtomicCmpXchg => Some(ir::operands(reader)[0]),
        _ => ir::call_args(reader)
            .into_iter()
            .find(|&a| pt.unknown_source(a).is_some()),
    };
    let source = address.and_then(|a| pt.unknown_source(a));
    let from = match source {
        // SAFETY: classifying a live value.
        Some(s) if !unsafe { llc::LLVMIsAArgument(s) }.is_null() => {
            format!(
                "it is {}, whose function is called through a pointer",
                variable(s)
            )
        }
        Some(s) => format!("it comes from {}", why.describe(s)),
        None => "its origin is not recorded".into(),
    };
    let mut text = format!(
        "a live value is read through a pointer the analysis cannot follow ({from}): every \
         store to memory that code it does not see can reach is kept"
    );
    for step in why.chain(reader) {
        text += &format!("\n    <- {step}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn flang_symbols() {
        assert_eq!(demangle("_QMcg_dataEnaa"), "cg_data::naa");
        assert_eq!(demangle("_QFconj_gradEsum"), "conj_grad::sum");
        assert_eq!(demangle("_QQmain"), "the main program");
        assert_eq!(demangle("params_"), "params");
        assert_eq!(demangle("conj_grad_"), "conj_grad");
        assert_eq!(demangle("main"), "main");
    }
}
