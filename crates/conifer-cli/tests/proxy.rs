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
        &["ring", "stencil2d", "waitany", "datatypes", "threads"]
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
            "ft",
            "phases",
            "onesided",
            "mpiio",
            "threads",
        ]
    };
    for app in apps {
        check(&dir, app);
    }
}

#[test]
fn fortran_apps_get_c_proxies() {
    let dir = scratch("proxy_fortran_apps");
    for app in [
        "ring_f",
        "stencil2d_f",
        "sections_f",
        "inplace_f",
        "stencil2d08_f",
    ] {
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
            "threads",
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
    // Every difference says which side had what.
    for line in stdout.lines().filter(|l| l.starts_with("rank ")) {
        assert!(
            line.contains("original: ") && line.contains("proxy: "),
            "{line}"
        );
    }
}

/// waitnull.c passes request arrays with `MPI_REQUEST_NULL` in the slots of missing
/// neighbours to `MPI_Waitall`, `MPI_Waitany`, `MPI_Testall` and `MPI_Waitsome`, and makes
/// one `MPI_Testany` that cannot succeed (its index is `MPI_UNDEFINED`): the proxy must
/// compile (no result written back into the constant), pass the poll an index to write
/// (not NULL, which the MPI rejects) and match.
#[test]
fn request_arrays_holding_request_null_build_and_match() {
    let dir = scratch("proxy_waitnull");
    check(&dir, "waitnull");
}

/// A trace of a run that ended early has nothing a proxy run could be compared with:
/// `--check` says so in one line and fails, without building or running anything.
#[test]
fn check_refuses_a_partial_trace_in_one_line() {
    let dir = scratch("proxy_partial");
    let trace = dir.join("run.cft");
    {
        let _lock = mpi_lock();
        // crash.c: rank 1 dereferences a null pointer in round 2 of 4.
        let out = conifer_run_raw(4, &trace, &dir)
            .arg(apps_dir().join("crash"))
            .args(["segv", "4", "2"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "the run should fail");
    }
    let merged = dir.join("merged.cft");
    run_ok(
        Command::new(conifer())
            .arg("merge")
            .arg(dir.join("run.cft.partial"))
            .arg("-o")
            .arg(&merged),
    );
    let out = Command::new("timeout")
        .arg("120")
        .arg(conifer())
        .args(["proxy", "--check"])
        .arg(&merged)
        .arg("-o")
        .arg(dir.join("proxy"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("partial trace"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
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

/// Lines of a proxy's code, the data tables left out: the initialiser of `R_`, whose lines
/// start with a digit or a minus sign.
fn code_lines(source: &str) -> usize {
    source
        .lines()
        .filter(|l| !l.starts_with(|c: char| c.is_ascii_digit() || c == '-'))
        .count()
}

/// The numbers of a proxy's data table `R_`, in order (its lines wrap wherever the records
/// before them end).
fn table_numbers(source: &str) -> Vec<i64> {
    source
        .lines()
        .skip_while(|l| !l.contains("R_[] = {"))
        .skip(1)
        .take_while(|l| l.starts_with(|c: char| c.is_ascii_digit() || c == '-'))
        .flat_map(|l| l.split(',').filter_map(|n| n.trim().parse().ok()))
        .collect()
}

/// The proxies of mg and stencil2d do not grow with the iterations: ten times the iterations,
/// the same lines of code, and both proxies still make the recorded calls. mg's Allreduce
/// moves through a buffer by 8 bytes an iteration (mg.c), so its offsets are one table record
/// `iterations, 8, 0` (count, stride, start) whatever the iterations.
#[test]
fn proxy_size_does_not_follow_the_iterations() {
    let dir = scratch("proxy_iterations");
    for app in ["mg", "stencil2d"] {
        let mut sizes = Vec::new();
        for iterations in ["20", "200"] {
            let name = format!("{app}{iterations}");
            let trace = traced(
                &dir,
                &name,
                ranks(),
                &[],
                &apps_dir().join(app),
                &[iterations],
            );
            let source = check_proxy(&trace, &dir.join(format!("{name}-proxy")));
            if app == "mg" {
                let run: Vec<i64> = vec![iterations.parse().unwrap(), 8, 0];
                let table = table_numbers(&source);
                assert!(
                    table.windows(3).any(|w| w == run.as_slice()),
                    "{name}: no run {run:?} in the table {table:?} of\n{source}"
                );
            }
            sizes.push((code_lines(&source), source.lines().count()));
        }
        assert_eq!(
            sizes[0], sizes[1],
            "{app}: lines (code, all) of the proxies for 20 and 200 iterations"
        );
    }
}

/// The proxy has one C function per rule of the grammars it follows and one behaviour class
/// per distinct grammar, counted in the source against `conifer stats --json`; the ring's
/// ranks all behave alike, so every rank runs the one class.
#[test]
fn proxy_functions_follow_the_grammar_rules() {
    let dir = scratch("proxy_rules");
    for app in ["ring", "stencil2d", "mg"] {
        let trace = traced(&dir, app, ranks(), &[], &apps_dir().join(app), &[]);
        let out_dir = dir.join(format!("{app}-proxy"));
        run_ok(
            Command::new(conifer())
                .arg("proxy")
                .arg(&trace)
                .arg("-o")
                .arg(&out_dir),
        );
        let source = std::fs::read_to_string(out_dir.join("proxy.c")).unwrap();
        let functions = source
            .lines()
            .filter(|l| l.starts_with("static void c") && l.ends_with("(void) {"))
            .count();
        let mut classes: Vec<&str> = source
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with('c') && l.ends_with("_r0();"))
            .collect();
        classes.sort_unstable();
        classes.dedup();
        let stats = stats_json(&trace);
        let rules = stats["grammar_rules"].as_u64().unwrap() as usize;
        let grammars = stats["unique_grammars"].as_u64().unwrap() as usize;
        assert!(
            (1..=rules).contains(&functions),
            "{app}: {functions} functions for {rules} grammar rules"
        );
        assert_eq!(classes.len(), grammars, "{app}: classes {classes:?}");
        let cases = source
            .lines()
            .filter(|l| l.trim().starts_with("case ") && l.ends_with(':'))
            .count();
        assert_eq!(cases, ranks() as usize, "{app}: a case per rank");
        if app == "ring" {
            assert_eq!(classes, ["c0_r0();"], "ring: one class for every rank");
        }
    }
}

/// In tree mode the proxy does not grow with the iterations either: mg's proxy is the same
/// for 20 and 200 iterations, with one function per loop or branch vertex of the structure
/// tree the run visited — fewer than its vertices, call sites included (`conifer stats
/// --json`).
#[test]
fn tree_mode_proxy_size_does_not_follow_the_iterations() {
    let dir = scratch("proxy_tree_iterations");
    let mut sizes = Vec::new();
    for iterations in ["20", "200"] {
        let name = format!("mg{iterations}");
        let trace = traced(
            &dir,
            &name,
            ranks(),
            &[],
            &tree_apps_dir().join("mg"),
            &[iterations],
        );
        let source = check_proxy(&trace, &dir.join(format!("{name}-proxy")));
        let stats = stats_json(&trace);
        let vertices = stats["trace_tree"]["vertices"].as_u64().unwrap() as usize;
        let functions = source
            .lines()
            .filter(|l| l.starts_with("static void c") && l.ends_with("(void) {"))
            .count();
        assert!(
            (1..vertices).contains(&functions),
            "{name}: {functions} functions, {vertices} vertices"
        );
        sizes.push(source.lines().count());
    }
    assert_eq!(
        sizes[0], sizes[1],
        "tree-mode mg: lines at 20 and 200 iterations"
    );
}

/// irregular.c sends a message of a pseudo-random size every iteration: the recorder streams
/// the counts, and the proxy reads them from its data tables, so its code is the same for 20
/// and 200 iterations while the tables grow with the sizes it has to make (and `--check`
/// finds every size reproduced).
#[test]
fn irregular_sizes_go_to_data_tables() {
    let dir = scratch("proxy_irregular");
    let mut sizes = Vec::new();
    for iterations in ["20", "200"] {
        let name = format!("irregular{iterations}");
        let trace = traced(
            &dir,
            &name,
            ranks(),
            &[],
            &apps_dir().join("irregular"),
            &[iterations],
        );
        let source = check_proxy(&trace, &dir.join(format!("{name}-proxy")));
        let total = source.lines().count();
        sizes.push((code_lines(&source), total - code_lines(&source)));
    }
    assert_eq!(
        sizes[0].0, sizes[1].0,
        "code lines at 20 and 200 iterations"
    );
    assert!(
        sizes[1].1 > sizes[0].1,
        "table lines at 20 and 200 iterations: {sizes:?}"
    );
}
