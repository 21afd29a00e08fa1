//! Slicing (FACT): the project's own apps built with `conifer cc|fc` full and with `--slice`,
//! both traced: instructions kept (the full slice, and the guarded version a deck can pick),
//! analysis time, wall time (median of interleaved runs) and peak memory per rank, and
//! whether the two traces are equal (`conifer diff`). A second table holds the wavefront app
//! at three grid sizes: a sliced rank's memory stays at the MPI + recorder floor.

use crate::report::Table;
use crate::runner::{median, Setup};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// FACT's published factors, for comparison (Zhai et al., SC'09, Section V).
const FACT: &str = "FACT (SC'09): NPB class D and a 150^3 wavefront transport code on 32 \
cores: e.g. 0.13 GB instead of 26.61 GB of memory per 64 processes, runs 4-100x faster.";

/// One case: an app, its compiler, an input deck (or arguments) and the rank counts.
struct Case {
    name: &'static str,
    source: &'static str,
    deck: Option<String>,
    args: Vec<String>,
}

/// A wavefront input deck: `n`³ cells, 4 angles per octant, z blocks of 8, tolerance `epsi`.
fn deck(n: u32, epsi: &str) -> String {
    format!("{n} {n} {n}\n4\n8\n{epsi}\n50\n")
}

fn cases(quick: bool) -> Vec<Case> {
    let n = if quick { 48 } else { 64 };
    let iterations = if quick { "20" } else { "200" };
    vec![
        Case {
            name: "wavefront (C), 12 iterations",
            source: "wavefront.c",
            deck: Some(deck(n, "-12")),
            args: Vec::new(),
        },
        Case {
            name: "wavefront (C), converged to 1e-4",
            source: "wavefront.c",
            deck: Some(deck(n, "1e-4")),
            args: Vec::new(),
        },
        Case {
            name: "wavefront (Fortran 77), 12 iterations",
            source: "wavefront.f",
            deck: Some(deck(n, "-12")),
            args: Vec::new(),
        },
        Case {
            name: "npbstyle (C)",
            source: "npbstyle.c",
            deck: None,
            args: vec![iterations.into()],
        },
        Case {
            name: "npbstyle (Fortran)",
            source: "npbstyle.f90",
            deck: None,
            args: vec![iterations.into()],
        },
    ]
}

/// Builds `source` into the scratch directory, sliced or not; the binary.
fn build(setup: &Setup, source: &str, slice: bool) -> Result<PathBuf, String> {
    let fortran = source.ends_with(".f") || source.ends_with(".f90");
    let stem = source.replace('.', "_");
    let out = setup
        .scratch
        .join(format!("{stem}-{}", if slice { "sliced" } else { "full" }));
    let mut cmd = Command::new(setup.bin.join("conifer"));
    cmd.arg(if fortran { "fc" } else { "cc" })
        .arg(format!("--mpi={}", setup.mpi))
        .args(slice.then_some("--slice"))
        .arg("-O2")
        .arg(setup.root.join("tests/apps").join(source))
        .arg("-o")
        .arg(&out)
        .current_dir(&setup.scratch);
    if !fortran {
        cmd.arg("-lm");
    }
    let done = cmd
        .output()
        .map_err(|e| format!("cannot run conifer: {e}"))?;
    if !done.status.success() {
        return Err(format!(
            "building {source}{} failed: {}",
            if slice { " --slice" } else { "" },
            String::from_utf8_lossy(&done.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    Ok(out)
}

/// The slicing report of a sliced binary (`conifer tree --json`).
fn report(setup: &Setup, binary: &Path) -> Result<Value, String> {
    let out = Command::new(setup.bin.join("conifer"))
        .arg("tree")
        .arg(binary)
        .arg("--json")
        .output()
        .map_err(|e| e.to_string())?;
    let tree: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    Ok(tree["slice"].clone())
}

/// Percent `part` of `all`, one decimal.
fn percent(part: &Value, all: &Value) -> Value {
    match (part.as_f64(), all.as_f64()) {
        (Some(p), Some(a)) if a > 0.0 => json!(format!("{:.1}", 100.0 * p / a)),
        _ => json!(null),
    }
}

/// Median over ranks of the peak resident set, MiB.
fn median_mib(kib: &[u64]) -> Value {
    let v: Vec<f64> = kib.iter().map(|&k| k as f64 / 1024.0).collect();
    match v.is_empty() {
        true => json!(null),
        false => json!(format!("{:.1}", median(&v))),
    }
}

/// A full and a sliced program run alike.
struct Comparison {
    /// Median seconds of the full runs.
    full_s: f64,
    /// Median seconds of the sliced runs.
    sliced_s: f64,
    /// The last full run's peak memory per rank (KiB).
    full_kib: Vec<u64>,
    /// The last sliced run's peak memory per rank (KiB).
    sliced_kib: Vec<u64>,
    /// Whether the traces are equal (`conifer diff`, buffer placement aside).
    equal: bool,
}

/// Runs `full` and `sliced` traced on `ranks` ranks, `repeats` times each, interleaved.
fn compare(
    setup: &Setup,
    ranks: u32,
    full: &[String],
    sliced: &[String],
    repeats: usize,
) -> Result<Comparison, String> {
    let (mut tf, mut ts) = (Vec::new(), Vec::new());
    let (mut mf, mut ms) = (Vec::new(), Vec::new());
    let kept_full = setup.scratch.join("slicing-full.cft");
    for _ in 0..repeats {
        let r = setup.run(&setup.command(ranks, true, true, full), true)?;
        tf.push(r.seconds);
        mf = r.peak_kib;
        std::fs::rename(setup.scratch.join("bench.cft"), &kept_full).map_err(|e| e.to_string())?;
        let r = setup.run(&setup.command(ranks, true, true, sliced), true)?;
        ts.push(r.seconds);
        ms = r.peak_kib;
    }
    let diff = Command::new(setup.bin.join("conifer"))
        .arg("diff")
        .arg(&kept_full)
        .arg(setup.scratch.join("bench.cft"))
        .output()
        .map_err(|e| e.to_string())?;
    Ok(Comparison {
        full_s: median(&tf),
        sliced_s: median(&ts),
        full_kib: mf,
        sliced_kib: ms,
        equal: diff.status.success(),
    })
}

/// The two tables: apps full against sliced, and memory against grid size.
pub fn slicing_tables(setup: &Setup, quick: bool) -> Result<Vec<Table>, String> {
    let mut apps = Table::new(
        &format!("Slicing ({})", setup.mpi),
        &format!(
            "Own apps built with conifer cc/fc -O2, full and --slice, both traced (default \
             timing); seconds: median of {} interleaved runs, as run (wall time of mpirun, \
             recorder included); memory: median over ranks of each rank's peak RSS. Kept: \
             instructions of the full slice, and of the guarded version the deck picks when \
             the slice has one. Equal: conifer diff of the two traces (buffer placement \
             aside). Load average before the row's runs. {FACT}",
            if quick { 1 } else { 3 }
        ),
        &[
            "app",
            "ranks",
            "kept %",
            "guarded kept %",
            "analysis s",
            "full s",
            "sliced s",
            "speed-up",
            "full MiB/rank",
            "sliced MiB/rank",
            "equal",
            "load",
        ],
    );
    let counts: &[u32] = if quick || setup.mpi == "mpich" {
        &[4]
    } else {
        &[4, 16]
    };
    let repeats = if quick { 1 } else { 3 };
    for case in cases(quick) {
        let full = build(setup, case.source, false)?;
        let sliced = build(setup, case.source, true)?;
        let slice = report(setup, &sliced)?;
        let all = &slice["instructions"];
        let guarded = slice["guards"]
            .get(0)
            .map(|g| percent(&g["kept"], all))
            .unwrap_or(json!("-"));
        let mut args = case.args.clone();
        if let Some(text) = &case.deck {
            let path = setup.scratch.join(format!("{}.deck", case.source));
            std::fs::write(&path, text).map_err(|e| e.to_string())?;
            args.push(path.display().to_string());
        }
        for &ranks in counts {
            let load = crate::runner::load_average();
            let with = |b: &Path| {
                let mut v = vec![b.display().to_string()];
                v.extend(args.iter().cloned());
                v
            };
            let (full_run, sliced_run) = (with(&full), with(&sliced));
            let shown = setup.shown(&setup.command(ranks, true, true, &sliced_run));
            let row = match compare(setup, ranks, &full_run, &sliced_run, repeats) {
                Ok(Comparison {
                    full_s: tf,
                    sliced_s: ts,
                    full_kib: mf,
                    sliced_kib: ms,
                    equal,
                }) => vec![
                    json!(case.name),
                    json!(ranks),
                    percent(&slice["kept"], all),
                    guarded.clone(),
                    json!(format!("{:.2}", slice["seconds"].as_f64().unwrap_or(0.0))),
                    json!(format!("{tf:.2}")),
                    json!(format!("{ts:.2}")),
                    json!(format!("{:.1}", tf / ts)),
                    median_mib(&mf),
                    median_mib(&ms),
                    json!(if equal { "yes" } else { "NO" }),
                    json!(load),
                ],
                Err(why) => vec![
                    json!(case.name),
                    json!(ranks),
                    json!(format!("failed: {why}")),
                ],
            };
            apps.push(row, shown);
        }
    }
    Ok(vec![apps, memory_table(setup, quick)?])
}

/// The wavefront app (C, 12 iterations) at three grid sizes on 4 ranks: peak memory per rank
/// full and sliced.
fn memory_table(setup: &Setup, quick: bool) -> Result<Table, String> {
    let mut table = Table::new(
        &format!("Slicing: memory against grid size ({})", setup.mpi),
        "wavefront.c, 12 iterations, 4 ranks, traced: median over ranks of each rank's peak \
         RSS (MiB). The sliced run never touches the flux arrays, so it stays at the MPI + \
         recorder floor whatever the grid.",
        &["cells", "full MiB/rank", "sliced MiB/rank", "equal"],
    );
    let full = setup.scratch.join("wavefront_c-full");
    let sliced = setup.scratch.join("wavefront_c-sliced");
    let sizes: &[u32] = if quick { &[32, 48] } else { &[48, 96, 144] };
    for &n in sizes {
        let path = setup.scratch.join(format!("wavefront-{n}.deck"));
        std::fs::write(&path, deck(n, "-12")).map_err(|e| e.to_string())?;
        let arg = path.display().to_string();
        let f = vec![full.display().to_string(), arg.clone()];
        let s = vec![sliced.display().to_string(), arg];
        let shown = setup.shown(&setup.command(4, true, true, &s));
        let c = compare(setup, 4, &f, &s, 1)?;
        table.push(
            vec![
                json!(format!("{n}^3")),
                median_mib(&c.full_kib),
                median_mib(&c.sliced_kib),
                json!(if c.equal { "yes" } else { "NO" }),
            ],
            shown,
        );
    }
    Ok(table)
}
