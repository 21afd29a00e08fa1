//! FACT slicing (`conifer cc --slice`): keep only the code the communication depends on.
//!
//! [`run`] is applied to the linked, instrumented program: [`pointsto`] finds what every
//! pointer may point to, [`live`] propagates liveness backwards from every MPI call's
//! communication arguments, [`transform`] removes the rest and tags the MPI calls the runtime
//! may record without executing, and [`report`] says what was done, [`why`] what forced the
//! largest kept functions to stay. Where an input value can make the computation a
//! communication-deciding condition reads irrelevant, [`versions`] gives the program a second,
//! guarded version of the code after that value is known, sliced apart ([`worlds`]).

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
mod render;
pub mod report;
mod transform;
mod versions;
mod why;
mod worlds;
mod writers;

use inkwell::module::Module;
use report::{Report, Site};
use std::collections::HashSet;

/// Slices `module` (whose entry function is `entry`) in place.
pub fn run(module: &Module, entry: Option<&str>) -> Report {
    let start = std::time::Instant::now();
    let raw = module.as_mut_ptr();
    cxx::declare_library_bodies(raw);
    let unsliced = Unsliced::of(&ir::Ir::new(raw), start);
    let (s, pt) = Sliced::as_one_run(raw, entry);
    let Some(plan) = versions::plan(module, &s.program, &pt, &s.live, entry) else {
        return finish(raw, s, Vec::new(), &unsliced);
    };
    drop((s, pt));
    match versions::slice(module, entry, &plan) {
        Some(v) => {
            let s = Sliced {
                program: v.program,
                live: v.live,
                worlds: v.worlds,
                entry: v.entry,
            };
            finish(raw, s, vec![v.guard], &unsliced)
        }
        // The optimiser failed on the versioned module: it is sliced as one run.
        None => finish(raw, Sliced::as_one_run(raw, entry).0, Vec::new(), &unsliced),
    }
}

/// What the report says of the program before slicing.
struct Unsliced {
    start: std::time::Instant,
    instructions: usize,
    lines: HashSet<(String, u32)>,
}

impl Unsliced {
    fn of(program: &ir::Ir, start: std::time::Instant) -> Unsliced {
        Unsliced {
            start,
            instructions: program.instruction_count(),
            lines: lines_of(program.funcs.iter().flat_map(|f| f.insts.iter().flatten())),
        }
    }
}

/// A module indexed and its liveness solved.
struct Sliced {
    program: ir::Ir,
    live: live::Liveness,
    worlds: worlds::Worlds,
    entry: Option<usize>,
}

impl Sliced {
    /// The module `raw` sliced as one run (no guard), with its points-to.
    fn as_one_run(
        raw: llvm_sys::prelude::LLVMModuleRef,
        entry: Option<&str>,
    ) -> (Sliced, pointsto::PointsTo) {
        let program = ir::Ir::new(raw);
        let pt = pointsto::PointsTo::solve(&program);
        let entry = entry.and_then(|e| program.funcs.iter().position(|f| f.name == e));
        let worlds = worlds::Worlds::single(&program);
        let live = live::solve(&program, &pt, entry, &worlds, &Default::default());
        let s = Sliced {
            program,
            live,
            worlds,
            entry,
        };
        (s, pt)
    }
}

/// Applies the liveness of `s` and writes the report; `guards` get the guarded run's kept
/// count.
fn finish(
    raw: llvm_sys::prelude::LLVMModuleRef,
    s: Sliced,
    mut guards: Vec<report::Guard>,
    unsliced: &Unsliced,
) -> Report {
    let Sliced {
        program,
        live,
        worlds,
        entry,
        ..
    } = s;
    let (program, live, worlds) = (&program, &live, &worlds);
    let kept_lines = lines_of(live.live.iter());
    let mut sites: Vec<Site> = live
        .mpi
        .iter()
        .filter(|(call, _)| worlds.of(program, **call) & worlds::FULL != 0)
        .map(|(&call, m)| Site {
            at: crate::ir::loc_of(call)
                .map(|l| format!("{}:{}", l.file, l.line))
                .unwrap_or_else(|| "?".into()),
            function: m.name.clone(),
            marked: live.marked.contains(&call) || m.skip().is_none(),
        })
        .collect();
    sites.sort();
    let kept_because = why::largest(program, &live.live, &live.because);
    let done = transform::apply(raw, program, live, entry, worlds);
    for g in &mut guards {
        g.kept = done.kept[1];
    }
    Report {
        instructions: unsliced.instructions,
        kept: done.kept[0],
        lines: unsliced.lines.len(),
        lines_removed: unsliced.lines.difference(&kept_lines).count(),
        functions_emptied: done.emptied,
        sites,
        caveats: live.caveats.clone(),
        kept_because,
        seconds: unsliced.start.elapsed().as_secs_f64(),
        guards,
    }
}

fn lines_of<'a>(insts: impl Iterator<Item = &'a ir::V>) -> HashSet<(String, u32)> {
    insts
        .filter_map(|&i| crate::ir::loc_of(i))
        .map(|l| (l.file, l.line))
        .collect()
}
