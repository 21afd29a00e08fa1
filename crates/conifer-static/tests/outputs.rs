//! Instrumented binaries print what the plain builds print, under Open MPI and MPICH, with
//! and without libconifer preloaded (hooks live), and bad input fails with one clear line.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Builds `sources` plainly (the MPI's own wrapper) and with the static pass, runs both on
/// `ranks` ranks of every MPI, and compares their output.
fn same_output(test: &str, lang: &str, sources: &[String], ranks: u32, args: &[&str]) {
    let dir = scratch(test);
    for mpi in MPIS {
        let wrapper = if lang == "fc" {
            format!("mpifort.{mpi}")
        } else {
            format!("mpicc.{mpi}")
        };
        let plain = format!("plain_{mpi}");
        let inst = format!("inst_{mpi}");
        let mut plain_args: Vec<&str> = vec!["-O2"];
        plain_args.extend(sources.iter().map(String::as_str));
        plain_args.extend(["-o", &plain]);
        ok(&dir, &wrapper, &plain_args);
        let mpi_flag = format!("--mpi={mpi}");
        let mut inst_args: Vec<&str> = vec![lang, &mpi_flag, "-O2"];
        inst_args.extend(sources.iter().map(String::as_str));
        inst_args.extend(["-o", &inst]);
        build(&dir, &inst_args);
        let expected = mpirun(&dir, mpi, ranks, &format!("./{plain}"), args);
        let got = mpirun(&dir, mpi, ranks, &format!("./{inst}"), args);
        assert_eq!(got, expected, "{test} under {mpi}");
    }
}

#[test]
fn figure_5_same_output() {
    same_output("out_fig5", "cc", &[program("fig5.c")], 4, &[]);
}

#[test]
fn figure_8_same_output() {
    same_output("out_fig8", "cc", &[program("fig8.c")], 2, &[]);
}

#[test]
fn jacobi_same_output() {
    same_output("out_jacobi", "cc", &[program("jacobi.c")], 4, &[]);
}

#[test]
fn fortran_ring_same_output() {
    same_output("out_ring_f", "fc", &[program("ring.f90")], 3, &[]);
}

#[test]
fn two_file_same_output() {
    same_output(
        "out_two",
        "cc",
        &[program("main2.c"), program("halo2.c")],
        3,
        &[],
    );
}

#[test]
fn short_circuit_same_output() {
    same_output("out_sc", "cc", &[program("shortcircuit.c")], 2, &[]);
}

#[test]
fn test_apps_c_same_output() {
    same_output("out_stencil2d", "cc", &[app("stencil2d.c")], 4, &["5"]);
    same_output("out_ring", "cc", &[app("ring.c")], 3, &["5"]);
}

#[test]
fn test_apps_fortran_same_output() {
    same_output("out_stencil2d_f", "fc", &[app("stencil2d.f90")], 4, &["5"]);
    same_output("out_ring_f_app", "fc", &[app("ring.f90")], 2, &["5"]);
}

#[test]
fn hooks_live_under_libconifer_keep_output_and_trace() {
    let exe = Path::new(env!("CARGO_BIN_EXE_conifer-static"));
    let lib = exe.with_file_name("libconifer.so");
    assert!(
        lib.is_file(),
        "{} missing: build the workspace first",
        lib.display()
    );
    let dir = scratch("preloaded");
    build(
        &dir,
        &["cc", "--mpi=openmpi", &program("fig5.c"), "-o", "fig5"],
    );
    let plain = mpirun(&dir, "openmpi", 4, "./fig5", &[]);
    let out = Command::new("timeout")
        .args(["120", "mpirun.openmpi", "--oversubscribe", "-n", "4", "-x"])
        .arg(format!("LD_PRELOAD={}", lib.display()))
        .args(["-x", "CONIFER_OUT=fig5.cft", "./fig5"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut traced: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    traced.sort();
    assert_eq!(traced, plain);
    assert!(dir.join("fig5.cft").is_file(), "traced run wrote no trace");
}

fn fails_with_one_line(args: &[&str], expect: &str) {
    let dir = scratch(&format!(
        "err_{}",
        args.join("_").replace(['/', '.', '-'], "")
    ));
    let out = conifer_static(&dir, args);
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(expect), "{args:?}: {err}");
}

#[test]
fn bad_input_fails_with_one_clear_line() {
    fails_with_one_line(&["cc", "missing.c", "-o", "x"], "missing.c: no such file");
    fails_with_one_line(
        &["cc", "--bogus-flag", &program("fig5.c")],
        "unknown argument",
    );
    fails_with_one_line(
        &["cc", "--mpi=lam", &program("fig5.c")],
        "unknown MPI 'lam'",
    );
    fails_with_one_line(&["tree", "/bin/true"], "has no structure tree");
    fails_with_one_line(&["tree", "no-such-binary"], "cannot read no-such-binary");
    fails_with_one_line(&["tree", &program("fig5.c")], "is not an executable");
    fails_with_one_line(&["tree", "--color", "x"], "unknown flag '--color'");
    fails_with_one_line(&["frobnicate"], "unknown command 'frobnicate'");
}

#[test]
fn non_mpi_program_builds_with_an_empty_tree() {
    let dir = scratch("non_mpi");
    std::fs::write(
        dir.join("hello.c"),
        "#include <stdio.h>\nint main(void){puts(\"hi\");return 0;}\n",
    )
    .unwrap();
    build(&dir, &["cc", "hello.c", "-o", "hello"]);
    let out = Command::new(dir.join("hello")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
    assert_eq!(shape(&tree(&dir, "hello")), "root");
}

#[test]
fn conifer_cli_forwards_cc_and_tree() {
    let conifer = Path::new(env!("CARGO_BIN_EXE_conifer-static")).with_file_name("conifer");
    assert!(
        conifer.is_file(),
        "{} missing: build the workspace first",
        conifer.display()
    );
    let dir = scratch("cli");
    let run = |args: &[&str]| {
        Command::new(&conifer)
            .args(args)
            .current_dir(&dir)
            .env_remove("CONIFER_MPI")
            .output()
            .unwrap()
    };
    let built = run(&["cc", "-O2", &program("fig8.c"), "-o", "fig8"]);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let text = String::from_utf8(run(&["tree", "fig8"]).stdout).unwrap();
    assert!(text.starts_with("0 root\n  1 mpi MPI_Init "), "{text}");
    let json: serde_json::Value =
        serde_json::from_slice(&run(&["tree", "fig8", "--json"]).stdout).unwrap();
    assert_eq!(json["children"][2]["name"], "foo");
    let missing = run(&["tree", "no-such-binary"]);
    assert!(!missing.status.success());
    assert_eq!(String::from_utf8_lossy(&missing.stderr).lines().count(), 1);
}
