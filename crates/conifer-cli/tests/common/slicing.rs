//! Helpers of the slicing tests: building a test app sliced and not, running it so that each
//! rank says what it skipped, comparing two runs' calls, reading what a slice keeps.

use super::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Ranks for this MPI: MPICH busy-polls, so it runs 2.
pub fn ranks() -> u32 {
    if is_mpich() {
        2
    } else {
        4
    }
}

/// Iterations of the apps' main loops on this MPI.
pub fn iterations() -> u32 {
    if is_mpich() {
        3
    } else {
        10
    }
}

/// `conifer cc` or, for a `.f90` or `.f` source, `conifer fc`, for a `.cpp` one `conifer cxx`
/// (with `--slice` when `slice`) of
/// `source` into `dir/<name>`, at `-O2`.
pub fn build(dir: &Path, source: &Path, name: &str, slice: bool) -> PathBuf {
    build_with(dir, source, name, slice, &[])
}

/// [`build`] with more compiler flags (after the source: libraries too).
pub fn build_with(dir: &Path, source: &Path, name: &str, slice: bool, flags: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let driver = match source.extension().and_then(|e| e.to_str()) {
        Some("f90" | "f") => "fc",
        Some("cpp") => "cxx",
        _ => "cc",
    };
    let mut cmd = Command::new(conifer());
    cmd.arg(driver).arg(format!("--mpi={}", mpi()));
    if slice {
        cmd.arg("--slice");
    }
    // In `dir`: flang writes the modules a Fortran source defines into the working directory.
    run_ok(
        cmd.arg("-O2")
            .arg(source)
            .arg("-o")
            .arg(&out)
            .args(flags)
            .current_dir(dir),
    );
    out
}

/// `conifer run` of `program args` on `ranks` ranks into `dir/<name>.cft` with
/// `CONIFER_VERBOSE` set (see [`traced_run_with`]).
pub fn run(dir: &Path, name: &str, ranks: u32, program: &Path, args: &[&str]) -> (PathBuf, Output) {
    traced_run_with(
        dir,
        name,
        ranks,
        &[],
        &[("CONIFER_VERBOSE", "1")],
        program,
        args,
    )
}

/// Per rank, the number of calls the run says it skipped (ranks that skipped none are absent).
pub fn skipped(out: &Output) -> BTreeMap<u32, u64> {
    lines_with(&out.stderr, "conifer: rank ")
        .iter()
        .filter_map(|line| {
            let rest = line.strip_prefix("conifer: rank ")?;
            let (rank, rest) = rest.split_once(": slicing skipped ")?;
            let n = rest.strip_suffix(" MPI calls")?;
            Some((rank.parse().ok()?, n.parse().ok()?))
        })
        .collect()
}

/// Asserts `conifer proxy --check full --against sliced` finds the same calls.
pub fn assert_same_calls(app: &str, full: &Path, sliced: &Path) {
    let out = Command::new(conifer())
        .args(["proxy", "--check"])
        .arg(full)
        .arg("--against")
        .arg(sliced)
        .output()
        .expect("conifer runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("proxy matches"),
        "{app}: the sliced run's trace differs from the full run's:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Per-rank counts of every function but the polling ones, whose number depends on timing.
pub fn settled_counts(trace: &Path) -> BTreeMap<(u32, String), u64> {
    let polling = ["MPI_Test", "MPI_Waitsome", "MPI_Iprobe"];
    traced_counts(&stats_json(trace))
        .into_iter()
        .filter(|((_, f), _)| !polling.iter().any(|p| f.starts_with(p)))
        .collect()
}

/// Builds `app` (`tests/apps/<app>.c`, or `<name>.f90` for an `app` named `<name>_f`) sliced
/// and not, runs both on `ranks` ranks, compares the traces and returns what the sliced run
/// said it skipped per rank.
pub fn check_app(app: &str, ranks: u32, args: &[&str]) -> BTreeMap<u32, u64> {
    check_app_with(app, ranks, args, &[])
}

/// [`check_app`] with more compiler flags.
pub fn check_app_with(app: &str, ranks: u32, args: &[&str], flags: &[&str]) -> BTreeMap<u32, u64> {
    let dir = scratch(&format!("slice-{app}"));
    let file = match app.strip_suffix("_f") {
        Some(name) => format!("{name}.f90"),
        None => format!("{app}.c"),
    };
    let source = repo_root().join("tests/apps").join(file);
    let sliced = build_with(&dir, &source, &format!("{app}-sliced"), true, flags);
    let full = build_with(&dir, &source, &format!("{app}-full"), false, flags);
    let (sliced_trace, sliced_out) = run(&dir, "sliced", ranks, &sliced, args);
    let (full_trace, full_out) = run(&dir, "full", ranks, &full, args);
    assert!(
        skipped(&full_out).is_empty(),
        "{app}: the full build skipped calls"
    );
    if app == "waitany" {
        // Completion order decides how often it polls: only the counts are compared.
        assert_eq!(
            settled_counts(&full_trace),
            settled_counts(&sliced_trace),
            "{app}"
        );
    } else {
        assert_same_calls(app, &full_trace, &sliced_trace);
    }
    skipped(&sliced_out)
}

/// (instructions kept, instructions in all) of a sliced binary, from `conifer tree --json`.
pub fn kept_instructions(sliced: &Path) -> (u64, u64) {
    let tree = run_ok(
        Command::new(conifer())
            .arg("tree")
            .arg(sliced)
            .arg("--json"),
    );
    let report: serde_json::Value = serde_json::from_slice(&tree.stdout).expect("JSON");
    let slice = &report["slice"];
    (
        slice["kept"].as_u64().expect("kept"),
        slice["instructions"].as_u64().expect("instructions"),
    )
}
