//! FACT slicing (`conifer cc --slice`): keep only the code the communication depends on.
//!
//! [`run`] is applied to the linked, instrumented program: [`pointsto`] finds what every
//! pointer may point to, [`live`] propagates liveness backwards from every MPI call's
//! communication arguments, [`transform`] removes the rest and tags the MPI calls the runtime
//! may record without executing, and [`report`] says what was done, [`why`] what forced the
//! largest kept functions to stay.

mod class;
mod cxx;
mod effects;
mod externals;
mod fields;
mod fortran;
mod guard;
mod ir;
mod live;
mod mpi;
mod objects;
mod openmp;
mod pointsto;
pub mod report;
mod transform;
mod why;
mod writers;

use inkwell::module::Module;
use report::{Report, Site};
use std::collections::HashSet;

/// Slices `module` (whose entry function is `entry`) in place.
pub fn run(module: &Module, entry: Option<&str>) -> Report {
    let start = std::time::Instant::now();
    let raw = module.as_mut_ptr();
    cxx::declare_library_bodies(raw);
    let program = ir::Ir::new(raw);
    let instructions = program.instruction_count();
    let lines = lines_of(program.funcs.iter().flat_map(|f| f.insts.iter().flatten()));
    let pt = pointsto::PointsTo::solve(&program);
    let entry = entry.and_then(|e| program.funcs.iter().position(|f| f.name == e));
    let live = live::solve(&program, &pt, entry);
    let kept_lines = lines_of(live.live.iter());
    let mut sites: Vec<Site> = live
        .mpi
        .iter()
        .map(|(&call, m)| Site {
            at: crate::ir::loc_of(call)
                .map(|l| format!("{}:{}", l.file, l.line))
                .unwrap_or_else(|| "?".into()),
            function: m.name.clone(),
            marked: live.marked.contains(&call) || m.skip().is_none(),
        })
        .collect();
    sites.sort();
    let kept_because = why::largest(&program, &live.live, &live.because);
    let done = transform::apply(raw, &program, &live, entry);
    Report {
        instructions,
        kept: done.kept,
        lines: lines.len(),
        lines_removed: lines.difference(&kept_lines).count(),
        functions_emptied: done.emptied,
        sites,
        caveats: live.caveats,
        kept_because,
        seconds: start.elapsed().as_secs_f64(),
    }
}

fn lines_of<'a>(insts: impl Iterator<Item = &'a ir::V>) -> HashSet<(String, u32)> {
    insts
        .filter_map(|&i| crate::ir::loc_of(i))
        .map(|l| (l.file, l.line))
        .collect()
}
