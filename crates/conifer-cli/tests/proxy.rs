//! `conifer proxy`: real test apps traced, their proxies generated, built, run and traced
//! again by `conifer proxy --check`, which must find the same calls; and `--check` must
//! report the differences when the proxy's trace is of another program.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// Ranks for this MPI: MPICH busy-polls, so it runs 2.
fn ranks() -> u32 {
    if is_mpich() {
        2
    } else {
        4
    }
}

/// Traces `app`, runs `conifer proxy --check` on the trace (proxy written to
/// `dir/<app>-proxy`) and asserts it matched; returns the trace and the proxy's trace.
fn check(dir: &Path, app: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let trace = traced(dir, app, ranks(), &[], &apps_dir().join(app), &[]);
    let out_dir = dir.join(format!("{app}-proxy"));
    let source = check_proxy(&trace, &out_dir);
    assert!(source.contains("int main("), "{app}: no main in the proxy");
    (trace, out_dir.join("proxy.cft"))
}

/// Runs `conifer proxy --check` on `trace` (proxy written to `out_dir`), asserts it matched
/// and returns the proxy's source.
fn check_proxy(trace: &Path, out_dir: &Path) -> String {
    let _guard = mpi_lock();
    let out = run_ok(
        Command::new(conifer())
            .args(["proxy", "--check"])
            .arg(trace)
            .arg("-o")
            .arg(out_dir),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("proxy matches"),
        "{}: {stdout}",
        trace.display()
    );
    std::fs::read_to_string(out_dir.join("proxy.c")).unwrap()
}

#[test]
fn c_apps_proxies_communicate_like_the_originals() {
    let dir = scratch("proxy_c_apps");
    let apps: &[&str] = if is_mpich() {
        &["ring", "stencil2d", "waitany", "datatypes"]
    } else {
        &[
            "ring",
            "stencil2d",
            "stencil3d",
            "reduce0",
            "butterfly",
            "persistent",
            "waitany",
            "datatypes",
            "comms",
            "cg",
            "mg",
            "torus",
            "heapbuf",
            "randpeers",
            "ep",
        ]
    };
    for app in apps {
        check(&dir, app);
    }
}

#[test]
fn fortran_apps_get_c_proxies() {
    let dir = scratch("proxy_fortran_apps");
    for app in ["ring_f", "stencil2d_f"] {
        check(&dir, app);
    }
}

#[test]
fn tree_mode_traces_get_proxies() {
    let dir = scratch("proxy_tree_apps");
    let apps: &[&str] = if is_mpich() {
        &["ring", "stencil2d"]
    } else {
        &[
            "ring",
            "stencil2d",
            "waitany",
            "mg",
            "onesided",
            "mpiio",
            "ring_f",
        ]
    };
    for app in apps {
        let trace = traced(&dir, app, ranks(), &[], &tree_apps_dir().join(app), &[]);
        let _guard = mpi_lock();
        let out = run_ok(
            Command::new(conifer())
                .args(["proxy", "--check"])
                .arg(&trace),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("proxy matches"), "{app}: {stdout}");
    }
}

#[test]
fn check_reports_a_proxy_of_another_program() {
    let dir = scratch("proxy_mismatch");
    let (ring, ring_proxy) = check(&dir, "ring");
    let (stencil, _) = check(&dir, "stencil2d");
    // Against its own proxy's trace, the ring matches; against the ring's proxy, the
    // stencil's calls differ and the exit status says so.
    let same = Command::new(conifer())
        .args(["proxy", "--check"])
        .arg(&ring)
        .arg("--against")
        .arg(&ring_proxy)
        .output()
        .unwrap();
    assert!(
        same.status.success(),
        "{}",
        String::from_utf8_lossy(&same.stdout)
    );
    let other = Command::new(conifer())
        .args(["proxy", "--check"])
        .arg(&stencil)
        .arg("--against")
        .arg(&ring_proxy)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&other.stdout);
    assert_eq!(other.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("rank 0 call"), "{stdout}");
    assert!(stdout.contains("proxy differs"), "{stdout}");
}

#[test]
fn proxy_writes_source_and_makefile_for_the_traced_mpi() {
    let dir = scratch("proxy_generate");
    let trace = traced(
        &dir,
        "stencil2d",
        ranks(),
        &[],
        &apps_dir().join("stencil2d"),
        &[],
    );
    let out_dir = dir.join("gen");
    run_ok(
        Command::new(conifer())
            .arg("proxy")
            .arg(&trace)
            .args(["-o"])
            .arg(&out_dir)
            .args(["--compute", "sleep"]),
    );
    let makefile = std::fs::read_to_string(out_dir.join("Makefile")).unwrap();
    assert!(makefile.contains(&format!("mpicc.{}", mpi())), "{makefile}");
    let source = std::fs::read_to_string(out_dir.join("proxy.c")).unwrap();
    assert!(source.contains("nanosleep"), "--compute sleep: no sleep");
    assert!(
        source.contains("for (long i = 0; i < "),
        "repetition not folded into loops"
    );
}

/// The proxy of mg, whose Allreduce moves through a buffer by 8 bytes an iteration, does not
/// grow with the iterations: its loops step the offset. Ten times the iterations, the same
/// lines, and both proxies still make the recorded calls.
#[test]
fn proxy_size_does_not_follow_the_iterations() {
    let dir = scratch("proxy_iterations");
    let mut sizes = Vec::new();
    for iterations in ["20", "200"] {
        let name = format!("mg{iterations}");
        let trace = traced(
            &dir,
            &name,
            ranks(),
            &[],
            &apps_dir().join("mg"),
            &[iterations],
        );
        let source = check_proxy(&trace, &dir.join(format!("{name}-proxy")));
        sizes.push(source.lines().count());
    }
    assert_eq!(
        sizes[0], sizes[1],
        "lines of the proxies of mg 20 and mg 200"
    );
}
