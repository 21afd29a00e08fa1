//! Which versions of a guarded program an instruction can run in.
//!
//! A guarded slice ([`super::versions`]) holds two versions of the code after its dispatch
//! point: the full one and the one that runs when the guard holds (the *guarded* version).
//! Every instruction runs in the full run, the guarded run, or both (code before the dispatch,
//! and functions called from both). Liveness ([`super::live`]) keeps the two runs apart: a
//! store the guarded version makes is never read by code of the full run, and an MPI call
//! marked in one run marks by communication dependence only the calls that run in that run
//! (all ranks take the same version: the guard is a value every rank holds alike).

use super::ir::{Ir, V};
use llvm_sys::prelude::LLVMBasicBlockRef;
use std::collections::HashSet;

/// A set of runs, as bits.
pub type Runs = u8;
/// The full program's run.
pub const FULL: Runs = 1;
/// The guarded version's run.
pub const GUARDED: Runs = 2;
/// Both (no guard, or code shared by both versions).
pub const BOTH: Runs = FULL | GUARDED;
/// The runs, one bit each, with their index.
pub const EACH: [(usize, Runs); 2] = [(0, FULL), (1, GUARDED)];

/// The runs of every block of every function of an [`Ir`].
pub struct Worlds {
    blocks: Vec<Vec<Runs>>,
}

impl Worlds {
    /// No guard: everything runs in both.
    pub fn single(ir: &Ir) -> Worlds {
        Worlds {
            blocks: ir
                .funcs
                .iter()
                .map(|f| vec![BOTH; f.blocks.len()])
                .collect(),
        }
    }

    /// The runs of a versioned program: blocks after a dispatch point run in one run
    /// (`full_blocks`, `guarded_blocks`), every other function in the runs of the calls that
    /// reach it (functions called through pointers, or not at all, in both).
    pub fn versioned(
        ir: &Ir,
        full_blocks: &HashSet<LLVMBasicBlockRef>,
        guarded_blocks: &HashSet<LLVMBasicBlockRef>,
        guarded_funcs: &HashSet<V>,
    ) -> Worlds {
        let own = |f: usize, b: usize| -> Option<Runs> {
            let block = ir.funcs[f].blocks[b];
            if full_blocks.contains(&block) {
                Some(FULL)
            } else if guarded_blocks.contains(&block) {
                Some(GUARDED)
            } else {
                None
            }
        };
        let mut func: Vec<Runs> = ir
            .funcs
            .iter()
            .map(|f| match f.address_taken || f.callers.is_empty() {
                true => BOTH,
                false => 0,
            })
            .collect();
        for (fi, f) in ir.funcs.iter().enumerate() {
            if guarded_funcs.contains(&f.value) {
                func[fi] = GUARDED;
            }
        }
        loop {
            let mut changed = false;
            for (g, f) in ir.funcs.iter().enumerate() {
                if guarded_funcs.contains(&f.value) {
                    continue;
                }
                let mut runs = func[g];
                for &call in &f.callers {
                    let (cf, cb) = ir.place[&call];
                    runs |= own(cf, cb).unwrap_or(func[cf]);
                }
                if runs != func[g] {
                    func[g] = runs;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let blocks = ir
            .funcs
            .iter()
            .enumerate()
            .map(|(fi, f)| {
                (0..f.blocks.len())
                    .map(|b| own(fi, b).unwrap_or(if func[fi] == 0 { BOTH } else { func[fi] }))
                    .collect()
            })
            .collect();
        Worlds { blocks }
    }

    /// The runs instruction `i` of `ir` can execute in.
    pub fn of(&self, ir: &Ir, i: V) -> Runs {
        let (f, b) = ir.place[&i];
        self.blocks[f][b]
    }

    /// The runs of block `b` of function `f`.
    pub fn of_block(&self, f: usize, b: usize) -> Runs {
        self.blocks[f][b]
    }
}
