//! Every instruction that may write memory, with the objects it may write: stores, atomics,
//! MPI calls (their outputs and receive buffers), library calls that are removable unless what
//! they write is live, and calls of the program's own functions with their MOD summaries
//! (what the callee and everything it calls may write).

use super::class::External;
use super::effects::Effects;
use super::fields::{self, Access};
use super::ir::{self, Ir, V};
use super::mpi::MpiCall;
use super::pointsto::{Objs, PointsTo};
use conifer_spec::slicing::Role;
use llvm_sys::LLVMOpcode as Op;
use std::collections::HashMap;

/// How a writer becomes live.
#[derive(Clone, Copy, PartialEq)]
pub enum Writes {
    /// A store, a memory-writing library call, a call of a function that writes: kept.
    Plain,
    /// An MPI call's results: the call is marked (executed).
    Mpi,
}

/// One instruction that may write memory.
pub struct Writer {
    /// The instruction.
    pub inst: V,
    /// What it may write.
    pub objs: Objs,
    /// The bytes it writes, when they are known exactly (a store or `memset` at a constant
    /// offset into a global or `alloca`).
    pub exact: Option<Access>,
    /// What its being live means.
    pub kind: Writes,
}

/// The class of an external, non-MPI callee of `call`, if it has one.
pub fn external_class(ir: &Ir, mpi: &HashMap<V, MpiCall>, call: V) -> Option<External> {
    let c = ir::direct_callee(call)?;
    if ir.index.contains_key(&c) || mpi.contains_key(&call) {
        return None;
    }
    Some(super::externals::classify(&ir::name_of(c)))
}

/// Every writer of the module.
pub fn collect(ir: &Ir, pt: &PointsTo, mpi: &HashMap<V, MpiCall>) -> Vec<Writer> {
    let mut writers = Vec::new();
    let mut direct: Vec<Objs> = vec![Objs::new(); ir.funcs.len()];
    let mut user_calls: Vec<(usize, V, usize)> = Vec::new();
    for (fi, f) in ir.funcs.iter().enumerate() {
        for &i in f.insts.iter().flatten() {
            let (objs, kind) = match ir::opcode(i) {
                Op::LLVMStore => (pt.of(ir::operands(i)[1]), Writes::Plain),
                Op::LLVMAtomicRMW | Op::LLVMAtomicCmpXchg => {
                    (pt.of(ir::operands(i)[0]), Writes::Plain)
                }
                Op::LLVMCall | Op::LLVMInvoke => {
                    if let Some(call) = mpi.get(&i) {
                        (mpi_writes(pt, call, &ir::call_args(i)), Writes::Mpi)
                    } else if let Some(g) = ir::direct_callee(i)
                        .and_then(|c| ir.index.get(&c).copied())
                        .or_else(|| ir.callbacks.get(&i).copied())
                    {
                        user_calls.push((fi, i, g));
                        continue;
                    } else if let Some(targets) = pt.targets(i) {
                        user_calls.extend(targets.iter().map(|&g| (fi, i, g)));
                        continue;
                    } else {
                        let Some(class) = external_class(ir, mpi, i) else {
                            continue;
                        };
                        match Effects::new(pt, i, class).writes(ir.after_finalize(i)) {
                            Some(objs) => (objs, Writes::Plain),
                            None => continue,
                        }
                    }
                }
                _ => continue,
            };
            direct[fi].extend(objs.iter().copied());
            if !objs.is_empty() {
                writers.push(Writer {
                    inst: i,
                    objs,
                    exact: fields::access(ir, pt, i),
                    kind,
                });
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
            writers.push(Writer {
                inst: call,
                objs: summary[g].clone(),
                exact: None,
                kind: Writes::Plain,
            });
        }
    }
    writers
}

/// What an MPI call writes: its outputs and receive buffers (a Fortran call's `ierror`, its
/// last argument, left out).
fn mpi_writes(pt: &PointsTo, call: &MpiCall, args: &[V]) -> Objs {
    args.iter()
        .enumerate()
        .filter(|(k, _)| {
            matches!(
                call.role(*k),
                Some(Role::Output | Role::RecvBuffer | Role::InoutBuffer)
            ) && !(call.fortran && *k + 1 == args.len())
        })
        .flat_map(|(_, &a)| pt.of(a))
        .collect()
}
