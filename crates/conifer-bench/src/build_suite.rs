//! Untraced speed of programs built with `conifer cc/fc` against the same source built by the
//! plain LLVM compilers at the same `-O2` (CYPRESS: the structure hooks cost nothing
//! measurable): the Jacobi kernels of bench/apps, 2 ranks, runs interleaved.

use crate::measure::{repetitions, round};
use crate::report::Table;
use crate::runner::{median, Setup};
use serde_json::json;

/// The kernels compared: binary name and language.
const KERNELS: [(&str, &str); 2] = [
    ("jacobi_c", "C (clang-19)"),
    ("jacobi_f", "Fortran (flang-new-19)"),
];

/// One row per kernel: plain and `conifer cc/fc` medians and their ratio.
pub fn untraced_speed(setup: &Setup, quick: bool) -> Result<Table, String> {
    let sweeps = if quick { 200 } else { 600 };
    let mut table = Table::new(
        &format!("Untraced speed of conifer cc/fc builds ({})", setup.mpi),
        &format!(
            "bench/apps/jacobi.c and jacobi.f90 ({sweeps} sweeps of a 400x400 grid, one \
             MPI_Allreduce each), 2 ranks, not traced: built by the plain compiler through the \
             MPI's wrapper and by `conifer cc/fc`, both -O2; wall-time medians of interleaved runs."
        ),
        &["kernel", "plain s", "conifer build s", "ratio"],
    );
    for (binary, language) in KERNELS {
        let run = |dir: &std::path::Path| {
            let program = vec![dir.join(binary).display().to_string(), sweeps.to_string()];
            setup.command(2, false, false, &program)
        };
        let (plain_cmd, conifer_cmd) = (run(&setup.bench_apps), run(&setup.tree_bench_apps));
        let (mut plain, mut built) = (Vec::new(), Vec::new());
        for _ in 0..repetitions(quick) {
            plain.push(setup.run(&plain_cmd, false)?.seconds);
            built.push(setup.run(&conifer_cmd, false)?.seconds);
        }
        let (p, c) = (median(&plain), median(&built));
        table.push(
            vec![json!(language), round(p, 3), round(c, 3), round(c / p, 3)],
            setup.shown(&conifer_cmd),
        );
    }
    Ok(table)
}
