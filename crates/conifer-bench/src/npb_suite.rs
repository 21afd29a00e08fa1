//! The NAS Parallel Benchmarks 3.4 (MPI, class A) traced at two rank counts, when
//! `CONIFER_NPB_DIR` names a checkout's `NPB3.4-MPI` directory (not fetched by the set-up:
//! without it the table says so). Per program: the trace's bytes, its bytes without the
//! per-rank timing sections (`TIME`, `CLCK`, `RTOT`: exact per-rank figures, about 77 bytes a
//! rank), the distinct grammars and, for the larger run, the growth over the smaller one —
//! the flatness of real regular codes (issue 39: at most 1.2× from 16 to 64 ranks).

use crate::prediction_suite::run;
use crate::report::Table;
use crate::runner::Setup;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The programs traced (IS is left out: its keys decide its message sizes).
const PROGRAMS: [&str; 7] = ["ft", "cg", "mg", "sp", "bt", "lu", "ep"];

/// The sections holding per-rank timing figures.
const TIMING_SECTIONS: [&str; 3] = ["TIME", "CLCK", "RTOT"];

/// `config/make.def` for building with this MPI's own compilers.
fn make_def(mpi: &str) -> String {
    format!(
        "MPIFC = mpif90.{mpi}\nFLINK = $(MPIFC)\nFMPI_LIB =\nFMPI_INC =\n\
         FFLAGS = -O2 -fallow-argument-mismatch\nFLINKFLAGS = -O2\nMPICC = mpicc.{mpi}\n\
         CLINK = $(MPICC)\nCMPI_LIB =\nCMPI_INC =\nCFLAGS = -O2\nCLINKFLAGS = -O2\nCC = cc -g\n\
         BINDIR = ../bin\nCONVERTFLAG = -DFORTRAN_REC_SIZE=1\nRAND = randdp\n"
    )
}

/// Builds every program of [`PROGRAMS`] at class A in a copy of `source`; their directory.
fn build(setup: &Setup, source: &Path) -> Result<PathBuf, String> {
    let copy = setup.scratch.join("npb");
    let _ = std::fs::remove_dir_all(&copy);
    run(setup, Command::new("cp").arg("-r").arg(source).arg(&copy))?;
    std::fs::write(copy.join("config/make.def"), make_def(&setup.mpi))
        .map_err(|e| format!("cannot write make.def: {e}"))?;
    std::fs::create_dir_all(copy.join("bin")).map_err(|e| e.to_string())?;
    for program in PROGRAMS {
        run(
            setup,
            Command::new("make")
                .arg("-C")
                .arg(&copy)
                .arg(program)
                .arg("CLASS=A"),
        )?;
    }
    Ok(copy.join("bin"))
}

/// (bytes, bytes without the per-rank timing sections, distinct grammars) of the last
/// traced run.
fn sizes(setup: &Setup, bytes: u64) -> Result<(u64, u64, u64), String> {
    let stats = setup.traced_stats()?;
    let timing: u64 = TIMING_SECTIONS
        .iter()
        .filter_map(|s| stats["bytes_by_section"][s].as_u64())
        .sum();
    let grammars = stats["unique_grammars"]
        .as_u64()
        .ok_or("stats without unique_grammars")?;
    Ok((bytes, bytes - timing, grammars))
}

/// The table (Open MPI: 16 and 64 ranks, quick 4 and 16; MPICH, which busy-polls: none).
pub fn npb_flatness(setup: &Setup, quick: bool) -> Result<Table, String> {
    let counts: [u32; 2] = if quick { [4, 16] } else { [16, 64] };
    let mut table = Table::new(
        &format!("NPB flatness ({})", setup.mpi),
        "NAS Parallel Benchmarks 3.4, class A, default (aggregate) timing. Without timing: the \
         trace less TIME, CLCK and RTOT (exact per-rank figures). Growth: over the smaller \
         run. Target (issue 39): at most 1.2x from 16 to 64 ranks.",
        &[
            "program",
            "ranks",
            "bytes",
            "without timing",
            "distinct grammars",
            "growth",
            "growth without timing",
        ],
    );
    let Some(source) = std::env::var_os("CONIFER_NPB_DIR") else {
        table.note = "skipped: set CONIFER_NPB_DIR to a checkout's NPB3.4-MPI directory".into();
        return Ok(table);
    };
    if setup.mpi != "openmpi" {
        table.note = "skipped: MPICH busy-polls, and 16-64 oversubscribed ranks take hours".into();
        return Ok(table);
    }
    // Absolute: the copy is made from the scratch directory.
    let source = std::fs::canonicalize(&source)
        .map_err(|e| format!("CONIFER_NPB_DIR {}: {e}", Path::new(&source).display()))?;
    let bin = build(setup, &source)?;
    for program in PROGRAMS {
        let mut smaller: Option<(u64, u64)> = None;
        for n in counts {
            let binary = bin.join(format!("{program}.A.x")).display().to_string();
            let cmd = setup.command(n, true, false, &[binary]);
            let shown = setup.shown(&cmd);
            let row = setup
                .run(&cmd, true)
                .and_then(|r| sizes(setup, r.trace_bytes.unwrap_or(0)));
            let cells: Vec<Value> = match row {
                Ok((bytes, flat, grammars)) => {
                    let growth =
                        |now: u64, then: u64| json!(format!("{:.2}", now as f64 / then as f64));
                    let (g, gf) = match smaller {
                        Some((b, f)) => (growth(bytes, b), growth(flat, f)),
                        None => (json!(null), json!(null)),
                    };
                    smaller = Some((bytes, flat));
                    vec![
                        json!(program),
                        json!(n),
                        json!(bytes),
                        json!(flat),
                        json!(grammars),
                        g,
                        gf,
                    ]
                }
                Err(why) => vec![
                    json!(program),
                    json!(n),
                    json!("failed"),
                    json!(null),
                    json!(null),
                    json!(null),
                    json!(why),
                ],
            };
            table.push(cells, shown);
        }
    }
    Ok(table)
}
