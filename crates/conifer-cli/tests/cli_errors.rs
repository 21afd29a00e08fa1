//! Bad input gets one clear line on stderr and a non-zero exit, never a panic.

mod common;

use common::*;
use std::process::{Command, Output};

fn conifer_fails(args: &[&str]) -> String {
    let out: Output = Command::new(conifer()).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "conifer {args:?} succeeded");
    assert!(
        !stderr.contains("panicked"),
        "conifer {args:?} panicked:\n{stderr}"
    );
    assert!(
        !stderr.contains("RUST_BACKTRACE"),
        "conifer {args:?} printed a backtrace hint"
    );
    stderr
}

fn one_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got:\n{stderr}");
    lines[0]
}

#[test]
fn missing_trace_file() {
    let err = conifer_fails(&["stats", "/nonexistent/run.cft"]);
    assert!(
        one_line(&err).contains("cannot read /nonexistent/run.cft"),
        "{err}"
    );
}

#[test]
fn foreign_file() {
    let err = conifer_fails(&["stats", conifer().to_str().unwrap()]);
    assert!(one_line(&err).contains("not a Conifer trace"), "{err}");
}

#[test]
fn truncated_and_corrupted_traces() {
    let dir = scratch("cli-errors");
    let trace = traced(&dir, "ring", 2, &[], &apps_dir().join("ring"), &["3"]);
    let bytes = std::fs::read(&trace).unwrap();
    let cut = dir.join("cut.cft");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = conifer_fails(&["stats", cut.to_str().unwrap()]);
    assert!(one_line(&err).contains("truncated"), "{err}");

    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x20;
    let bad = dir.join("bad.cft");
    std::fs::write(&bad, &flipped).unwrap();
    let err = conifer_fails(&["stats", bad.to_str().unwrap()]);
    assert!(one_line(&err).contains("corrupted"), "{err}");
}

#[test]
fn program_that_does_not_exist() {
    let err = conifer_fails(&["exec", "/nonexistent/app"]);
    assert!(
        one_line(&err).contains("cannot run /nonexistent/app"),
        "{err}"
    );
}

#[test]
fn wrong_flag_is_named() {
    let err = conifer_fails(&["stats", "--frobnicate", "x.cft"]);
    assert!(err.contains("--frobnicate"), "{err}");
}

#[test]
fn unknown_timing_mode() {
    let err = conifer_fails(&["run", "-n", "2", "--timing", "foo", "./app"]);
    let line = one_line(&err);
    assert!(
        line.contains("--timing \"foo\"") && line.contains("lossy:REL"),
        "{err}"
    );
    let err = conifer_fails(&["exec", "--timing", "lossy:1.5", "./app"]);
    assert!(one_line(&err).contains("lossy:1.5"), "{err}");
}

#[test]
fn zero_ranks() {
    let err = conifer_fails(&["run", "-n", "0", "./app"]);
    assert!(one_line(&err).contains("-n must be at least 1"), "{err}");
}

#[test]
fn export_refuses_bad_input_and_outputs_in_one_line() {
    let dir = scratch("cli-errors-export");
    let trace = traced(&dir, "ring", 2, &[], &apps_dir().join("ring"), &["3"]);
    let t = trace.to_str().unwrap();
    let err = conifer_fails(&["export", "otf2", "/nonexistent/run.cft", "-o", "/tmp/x"]);
    assert!(
        one_line(&err).contains("cannot read /nonexistent/run.cft"),
        "{err}"
    );
    let err = conifer_fails(&[
        "export",
        "otf2",
        conifer().to_str().unwrap(),
        "-o",
        "/tmp/x",
    ]);
    assert!(one_line(&err).contains("not a Conifer trace"), "{err}");
    // An OTF2 archive goes to a new directory: a non-empty one is refused, not overwritten.
    let taken = dir.join("taken");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("keep.txt"), "mine").unwrap();
    let err = conifer_fails(&["export", "otf2", t, "-o", taken.to_str().unwrap()]);
    assert!(one_line(&err).contains("not empty"), "{err}");
    assert_eq!(
        std::fs::read_to_string(taken.join("keep.txt")).unwrap(),
        "mine"
    );
    let err = conifer_fails(&["export", "chrome", t, "-o", "/nonexistent/dir/run.json"]);
    assert!(
        one_line(&err).contains("cannot create /nonexistent/dir/run.json"),
        "{err}"
    );
    let err = conifer_fails(&["export", "vampir", t, "-o", "/tmp/x"]);
    assert!(err.contains("invalid value 'vampir'"), "{err}");
}

#[test]
fn read_commands_end_quietly_when_their_reader_goes() {
    let dir = scratch("cli-errors-pipe");
    let trace = traced(
        &dir,
        "stencil2d",
        2,
        &[],
        &apps_dir().join("stencil2d"),
        &["3"],
    );
    let t = trace.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["stats", t],
        vec!["stats", "--json", t],
        vec!["decode", t],
        vec!["decode", "--json", t],
        vec!["profile", t],
        vec!["profile", "--json", t],
        vec!["matrix", "--csv", t],
        vec!["matrix", "--json", t],
        vec!["diff", t, t],
        vec!["sim", t],
        vec!["sim", "--json", t],
        vec!["info"],
        vec!["info", "--json"],
    ];
    for args in commands {
        // The reader is gone before the command writes anything: every write fails (EPIPE).
        let mut child = Command::new(conifer())
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !stderr.contains("panicked"),
            "conifer {args:?} with its reader gone: {}\n{stderr}",
            out.status
        );
    }
}

#[test]
fn exclude_names_only_mpi_functions_that_may_be_left_out() {
    let err = conifer_fails(&[
        "run",
        "-n",
        "2",
        "--exclude",
        "MPI_Wtime,MPI_Nonsense",
        "true",
    ]);
    assert!(err.contains("MPI_Nonsense is not an MPI function"), "{err}");
    let err = conifer_fails(&["run", "-n", "2", "--exclude", "mpi_finalize", "true"]);
    assert!(err.contains("MPI_Finalize is always recorded"), "{err}");
}
