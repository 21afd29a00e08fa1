//! `make bench`: Conifer's measurements in one reproducible table.
//!
//! Usage: `conifer-bench [--quick] [--only WORDS] --mpi openmpi [--mpi mpich] --out bench/`
//! (`--only`: the suites whose title contains WORDS, any case). Needs the builds of
//! `make build MPI=<mpi>` (`target/<mpi>/release`).
//!
//! `conifer-bench --scale-trace PATTERN RANKS FILE` writes one trace of the scale suite
//! (`stencil2d`, `stencil2d-periodic`, …, `master-worker`) and nothing else: to profile
//! `conifer sim` on it.

mod alloc_count;
mod build_suite;
mod callsites_suite;
mod cost_suite;
mod measure;
mod npb_suite;
mod prediction_suite;
mod readers_suite;
mod replay_suite;
mod report;
mod runner;
mod scale_calls;
mod scale_merge;
mod scale_model;
mod scale_patterns;
mod scale_record;
mod scale_suite;
#[cfg(test)]
mod scale_tests;
mod size_suite;
mod slicing_suite;
mod suites;
mod tree_suite;

/// Counts each thread's allocations: the scale suite's merger memory.
#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;

use report::Report;
use runner::Setup;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

struct Options {
    quick: bool,
    only: Option<String>,
    mpis: Vec<String>,
    out: PathBuf,
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        quick: false,
        only: None,
        mpis: Vec::new(),
        out: PathBuf::from("bench"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--only" => {
                options.only = Some(
                    args.next()
                        .ok_or("--only needs words of a suite's title")?
                        .to_lowercase(),
                )
            }
            "--mpi" => options
                .mpis
                .push(args.next().ok_or("--mpi needs openmpi or mpich")?),
            "--out" => options.out = PathBuf::from(args.next().ok_or("--out needs a directory")?),
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: conifer-bench [--quick] [--only WORDS] --mpi MPI --out DIR"
                ))
            }
        }
    }
    if options.mpis.is_empty() {
        options.mpis.push("openmpi".into());
    }
    if let Some(bad) = options
        .mpis
        .iter()
        .find(|m| *m != "openmpi" && *m != "mpich")
    {
        return Err(format!("--mpi {bad}: use openmpi or mpich"));
    }
    Ok(options)
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Builds the programs of `dir` into `out` with the MPI's compiler wrappers or, given
/// `conifer`, with `conifer cc/fc` (structure trees for tree mode).
fn build_programs(
    mpi: &str,
    dir: &str,
    out: &std::path::Path,
    conifer: Option<&std::path::Path>,
) -> Result<(), String> {
    let mut make = Command::new("make");
    make.args(["-s", "-C"])
        .arg(repo_root().join(dir))
        .arg(format!("MPI={mpi}"))
        .arg(format!("OUT={}", out.display()));
    if let Some(conifer) = conifer {
        make.arg(format!("CONIFER={}", conifer.display()));
    }
    let status = make.status().map_err(|e| format!("cannot run make: {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("building {dir} for {mpi} failed"))
}

fn setup(mpi: &str) -> Result<Setup, String> {
    let bin = repo_root().join("target").join(mpi).join("release");
    if !bin.join("conifer").exists() || !bin.join("libconifer.so").exists() {
        return Err(format!(
            "no build for {mpi} in {}: run `make build MPI={mpi}` first",
            bin.display()
        ));
    }
    let apps = bin.join("apps");
    let bench_apps = bin.join("bench-apps");
    let scratch = bin.join("bench-scratch");
    build_programs(mpi, "tests/apps", &apps, None)?;
    build_programs(mpi, "bench/apps", &bench_apps, None)?;
    let conifer = bin.join("conifer");
    let tree_apps = bin.join("apps-tree");
    let tree_bench_apps = bin.join("bench-apps-tree");
    build_programs(mpi, "tests/apps", &tree_apps, Some(&conifer))?;
    build_programs(mpi, "bench/apps", &tree_bench_apps, Some(&conifer))?;
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    Ok(Setup {
        mpi: mpi.into(),
        bin,
        apps,
        bench_apps,
        tree_apps,
        tree_bench_apps,
        scratch,
        root: repo_root(),
    })
}

fn mpi_version(mpi: &str) -> String {
    let out = Command::new(format!("mpirun.{mpi}"))
        .arg("--version")
        .output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    // Open MPI prints its version on the first line, MPICH's Hydra on a "Version:" line.
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Version:"))
        .or_else(|| text.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .trim();
    format!("{mpi}: {line}")
}

fn utc_now() -> String {
    let out = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn run(options: &Options) -> Result<(), String> {
    let mut tables = Vec::new();
    let mut versions = Vec::new();
    for mpi in &options.mpis {
        eprintln!(
            "== benchmarks on {mpi}{}",
            if options.quick { " (QUICK)" } else { "" }
        );
        // `make bench` runs this harness from the Open MPI cargo build (CONIFER_MPI=openmpi),
        // and `conifer exec/run` take CONIFER_MPI for the MPI of the program they trace: every
        // command of this round must name the MPI it measures. No other thread runs yet.
        std::env::set_var("CONIFER_MPI", mpi);
        let setup = setup(mpi)?;
        versions.push(mpi_version(mpi));
        tables.extend(suites::all(&setup, options.quick, options.only.as_deref()));
    }
    let report = Report {
        date: utc_now(),
        cores: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        mpi_versions: versions,
        quick: options.quick,
        tables,
    };
    std::fs::create_dir_all(&options.out).map_err(|e| e.to_string())?;
    let md = options.out.join("results.md");
    let json = options.out.join("results.json");
    std::fs::write(&md, report.markdown())
        .map_err(|e| format!("cannot write {}: {e}", md.display()))?;
    let text = serde_json::to_string_pretty(&report).expect("report serialises");
    std::fs::write(&json, text).map_err(|e| format!("cannot write {}: {e}", json.display()))?;
    eprintln!("== wrote {} and {}", md.display(), json.display());
    Ok(())
}

/// `--scale-trace PATTERN RANKS FILE`: writes that generated trace.
fn scale_trace(args: &[String]) -> Result<(), String> {
    let [name, p, file] = args else {
        return Err("usage: conifer-bench --scale-trace PATTERN RANKS FILE".into());
    };
    let pattern = scale_patterns::ALL
        .into_iter()
        .find(|pat| pat.name().replace(' ', "-") == *name)
        .ok_or_else(|| format!("unknown pattern {name}"))?;
    let p: u32 = p
        .parse()
        .map_err(|_| format!("ranks must be a number, not {p}"))?;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let merged = scale_suite::merge_pattern(pattern, p, threads);
    let bytes = scale_suite::finish_trace(merged.record, p).to_bytes();
    std::fs::write(file, bytes).map_err(|e| format!("cannot write {file}: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("--scale-trace") => scale_trace(&args[1..]),
        _ => parse_args().and_then(|o| run(&o)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("conifer-bench: {message}");
            ExitCode::FAILURE
        }
    }
}
