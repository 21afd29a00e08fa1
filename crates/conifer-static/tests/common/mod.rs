//! Helpers for the static-pass tests: build with `conifer-static` (real clang-19/flang-new-19)
//! and with the plain MPI wrappers, run under the real launchers, read trees.

#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The two MPIs every program is built and run with.
pub const MPIS: [&str; 2] = ["openmpi", "mpich"];

/// Repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `tests/static/NAME`.
pub fn program(name: &str) -> String {
    root().join("tests/static").join(name).display().to_string()
}

/// `tests/apps/NAME`.
pub fn app(name: &str) -> String {
    root().join("tests/apps").join(name).display().to_string()
}

/// A fresh scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("static")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `conifer-static ARGS` in `dir`.
pub fn conifer_static(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_conifer-static"))
        .args(args)
        .current_dir(dir)
        .env_remove("CONIFER_MPI")
        .output()
        .expect("run conifer-static")
}

/// Runs a command in `dir`, asserting success.
pub fn ok(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .expect(program);
    assert!(
        out.status.success(),
        "{program} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `conifer-static SUBCOMMAND ARGS` must succeed.
pub fn build(dir: &Path, args: &[&str]) {
    let out = conifer_static(dir, args);
    assert!(
        out.status.success(),
        "conifer-static {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The tree of `binary` as JSON.
pub fn tree(dir: &Path, binary: &str) -> Value {
    let out = conifer_static(dir, &["tree", binary, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Compact form: `name-or-kind{children,...}`.
pub fn shape(v: &Value) -> String {
    let head = v
        .get("name")
        .and_then(Value::as_str)
        .filter(|_| v["kind"] == "mpi")
        .unwrap_or_else(|| v["kind"].as_str().unwrap())
        .to_string();
    match v.get("children").and_then(Value::as_array) {
        Some(children) if !children.is_empty() => {
            let inner: Vec<String> = children.iter().map(shape).collect();
            format!("{head}{{{}}}", inner.join(","))
        }
        _ => head,
    }
}

/// Every vertex in pre-order: (id, kind or MPI name, line).
pub fn preorder(v: &Value) -> Vec<(u64, String, u64)> {
    let mut out = Vec::new();
    walk(v, &mut out);
    out
}

fn walk(v: &Value, out: &mut Vec<(u64, String, u64)>) {
    let label = if v["kind"] == "mpi" {
        v["name"].as_str().unwrap().to_string()
    } else {
        v["kind"].as_str().unwrap().to_string()
    };
    let line = v
        .get("loc")
        .map(|l| l["line"].as_u64().unwrap())
        .unwrap_or(0);
    out.push((v["id"].as_u64().unwrap(), label, line));
    for c in v
        .get("children")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        walk(c, out);
    }
}

/// Runs `binary ARGS` on `ranks` ranks of `mpi` (with a timeout); it must exit 0. Its
/// standard output.
pub fn mpirun_output(dir: &Path, mpi: &str, ranks: u32, binary: &str, args: &[&str]) -> String {
    let mut cmd = Command::new("timeout");
    cmd.arg("120").arg(format!("mpirun.{mpi}"));
    if mpi == "openmpi" {
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_btl", "self,vader")
            .arg("--oversubscribe");
    }
    let out = cmd
        .arg("-n")
        .arg(ranks.to_string())
        .arg(binary)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("mpirun");
    assert!(
        out.status.success(),
        "mpirun.{mpi} -n {ranks} {binary} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// [`mpirun_output`]: stdout lines, sorted, without the apps' `INFO` lines (timings).
pub fn mpirun(dir: &Path, mpi: &str, ranks: u32, binary: &str, args: &[&str]) -> Vec<String> {
    let mut lines: Vec<String> = mpirun_output(dir, mpi, ranks, binary, args)
        .lines()
        .filter(|l| !l.starts_with("INFO "))
        .map(String::from)
        .collect();
    lines.sort();
    assert!(!lines.is_empty(), "{binary} printed nothing");
    lines
}
