//! The NAS Parallel Benchmarks 3.4 (MPI), when `CONIFER_NPB_DIR` names a checkout's
//! `NPB3.4-MPI` directory (it is not fetched by the set-up: without it the test says it
//! skipped and passes). All eight programs are built in a copy of it with `conifer fc/cc`, with
//! and without `--slice`, at the class `CONIFER_NPB_CLASS` names (`S` if unset), run on 4 ranks
//! and compared call by call (`conifer proxy --check FULL --against SLICED`); each slice may
//! keep no more of its instructions than it does today.

mod common;

use common::slicing::*;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// (program, most instructions its slice may keep). The issue's target is 20% for all but
/// IS; what keeps more today (class W/A, `conifer fc -v --slice` says why): CG's and EP's
/// timers, whose `MPI_Wtime` calls run only if the environment's `NPB_TIMER_FLAG` says so,
/// and the argument set-up of every MPI call of small programs; FT's transposes' index
/// arithmetic; LU's SSOR loop, which ends early when the residual norm is small enough, so the
/// whole solver decides how many iterations communicate; IS's ranking, whose bucket sizes
/// (the keys) are its `MPI_Alltoallv` counts.
const PROGRAMS: [(&str, f64); 8] = [
    ("cg", 0.34),
    ("mg", 0.23),
    ("ep", 0.32),
    ("ft", 0.21),
    ("is", 0.75),
    ("lu", 0.96),
    ("bt", 0.08),
    ("sp", 0.07),
];

/// The `config/make.def` building with this build's `conifer` for this MPI; `SLICE=--slice`
/// on make's command line slices.
fn make_def() -> String {
    let driver = format!("{} {{}} --mpi={} $(SLICE)", conifer().display(), mpi());
    format!(
        "SLICE =\nMPIFC = {}\nFLINK = $(MPIFC)\nFMPI_LIB =\nFMPI_INC =\nFFLAGS = -O2\n\
         FLINKFLAGS = -O2\nMPICC = {}\nCLINK = $(MPICC)\nCMPI_LIB =\nCMPI_INC =\nCFLAGS = -O2\n\
         CLINKFLAGS = -O2\nCC = cc -g\nBINDIR = ../bin\nCONVERTFLAG = -DFORTRAN_REC_SIZE=1\n\
         RAND = randi8\n",
        driver.replace("{}", "fc"),
        driver.replace("{}", "cc"),
    )
}

/// Builds `program` at `class` in the copy `npb`, sliced or not, and returns the binary.
fn build_npb(npb: &Path, program: &str, class: &str, slice: bool) -> PathBuf {
    let upper = program.to_uppercase();
    run_ok(
        Command::new("make")
            .arg("clean")
            .current_dir(npb.join(&upper)),
    );
    for entry in std::fs::read_dir(npb.join("common")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "o") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    let mut make = Command::new("make");
    make.arg(program)
        .arg(format!("CLASS={class}"))
        .current_dir(npb);
    if slice {
        make.arg("SLICE=--slice");
    }
    run_ok(&mut make);
    let tag = if slice { "sliced" } else { "full" };
    let binary = npb.join("bin").join(format!("{program}.{class}.{tag}"));
    std::fs::rename(
        npb.join("bin").join(format!("{program}.{class}.x")),
        &binary,
    )
    .expect("make built the benchmark");
    binary
}

#[test]
fn npb_sliced_runs_record_the_full_runs_calls() {
    let Some(source) = std::env::var_os("CONIFER_NPB_DIR") else {
        println!("skipped: CONIFER_NPB_DIR names no NPB3.4-MPI checkout");
        eprintln!("skipped: CONIFER_NPB_DIR names no NPB3.4-MPI checkout");
        return;
    };
    let class = std::env::var("CONIFER_NPB_CLASS").unwrap_or_else(|_| "S".into());
    let dir = scratch("npb");
    let npb = dir.join("NPB3.4-MPI");
    run_ok(Command::new("cp").arg("-r").arg(&source).arg(&npb));
    std::fs::write(npb.join("config/make.def"), make_def()).unwrap();
    std::fs::create_dir_all(npb.join("bin")).unwrap();
    for (program, bar) in PROGRAMS {
        let full = build_npb(&npb, program, &class, false);
        let sliced = build_npb(&npb, program, &class, true);
        let (kept, all) = kept_instructions(&sliced);
        let fraction = kept as f64 / all as f64;
        println!("{program}.{class}: keeps {kept} of {all} instructions ({fraction:.3})");
        assert!(fraction <= bar, "{program}: keeps {kept} of {all}");
        let env = [("CONIFER_VERBOSE", "1")];
        let name = |tag: &str| format!("{program}-{tag}");
        let (full_trace, _) = traced_run_with(&dir, &name("full"), 4, &[], &env, &full, &[]);
        let (sliced_trace, out) =
            traced_run_with(&dir, &name("sliced"), 4, &[], &env, &sliced, &[]);
        assert_same_calls(program, &full_trace, &sliced_trace);
        println!("{program}.{class}: skipped per rank {:?}", skipped(&out));
    }
}
