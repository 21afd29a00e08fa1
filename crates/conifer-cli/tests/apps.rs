//! Every test app runs on the MPI this build targets, without and with Conifer: the traced run
//! prints the same results, and the per-rank, per-function counts in the trace equal the counts
//! the app kept itself (`COUNT` lines, made by the app's own `tally.h` / Fortran counters).

mod common;

use common::*;
use std::process::Command;

/// How a traced run is started.
#[derive(Clone, Copy, Debug)]
enum Launch {
    /// `conifer run -n N ./app`
    Run,
    /// `mpirun -n N conifer exec ./app`
    Exec,
}

fn check_app(app: &str, ranks: u32, iterations: u32, launch: Launch) {
    let apps = apps_dir();
    let program = apps.join(app);
    let dir = scratch(&format!("{app}-{ranks}-{launch:?}"));
    let trace = dir.join("trace.cft");
    let _lock = mpi_lock();

    let untraced = run_ok(
        mpirun(ranks)
            .arg(&program)
            .arg(iterations.to_string())
            .current_dir(&dir),
    );
    let traced = match launch {
        Launch::Run => run_ok(
            conifer_run_raw(ranks, &trace, &dir)
                .arg(&program)
                .arg(iterations.to_string()),
        ),
        Launch::Exec => run_ok(
            mpirun(ranks)
                .arg(conifer())
                .arg("exec")
                .arg("--raw")
                .arg("-o")
                .arg(&trace)
                .arg(&program)
                .arg(iterations.to_string())
                .current_dir(&dir),
        ),
    };

    let expected_results = lines_with(&untraced.stdout, "RESULT ");
    assert_eq!(
        expected_results.len(),
        ranks as usize,
        "{app}: one RESULT line per rank"
    );
    assert!(
        expected_results.iter().all(|l| !l.contains(" FAIL")),
        "{app}: {expected_results:?}"
    );
    assert_eq!(
        lines_with(&traced.stdout, "RESULT "),
        expected_results,
        "{app}: results change under Conifer"
    );

    let stats = stats_json(&trace);
    assert_eq!(stats["ranks"], ranks, "{app}: rank count in the trace");
    let app_counts = app_counts(&traced.stdout);
    assert!(!app_counts.is_empty(), "{app} printed no COUNT lines");
    assert_eq!(
        traced_counts(&stats),
        app_counts,
        "{app}: Conifer's counts differ from the app's own"
    );
    assert_eq!(
        stats["counters_agree"], true,
        "{app}: the wrappers' counters disagree with the grammars"
    );

    // Lossless: the compressed trace decodes to exactly the raw record, call by call.
    let verify = run_ok(Command::new(conifer()).arg("verify").arg(&trace));
    let total: u64 = app_counts.values().sum();
    assert_eq!(
        String::from_utf8_lossy(&verify.stdout).trim(),
        format!("identical: {total} calls on {ranks} ranks"),
        "{app}: verify"
    );
    let language = if app.ends_with("_f") { "fortran" } else { "c" };
    assert_eq!(
        stats["calls_by_language"][language], total,
        "{app}: calls recorded under the wrong binding"
    );
}

/// Ranks and iterations per MPI: MPICH busy-polls, so its runs are kept to a few iterations.
fn sizes() -> (&'static [u32], u32) {
    if is_mpich() {
        (&[4, 9], 5)
    } else {
        (&[4, 9], 20)
    }
}

macro_rules! app_tests {
    ($($test:ident => $app:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let (ranks, iterations) = sizes();
            for &n in ranks {
                check_app($app, n, iterations, Launch::Run);
            }
        }
    )*};
}

app_tests! {
    stencil2d_c => "stencil2d",
    stencil2d_fortran => "stencil2d_f",
    stencil3d_c => "stencil3d",
    mg_multigrid_c => "mg",
    ring_c => "ring",
    ring_fortran => "ring_f",
    waitany_testsome_c => "waitany",
    comms_split_dup_intercomm_c => "comms",
    derived_datatypes_c => "datatypes",
    persistent_requests_c => "persistent",
    onesided_fence_c => "onesided",
    mpiio_c => "mpiio",
    threads_multiple_c => "threads",
    heap_buffers_c => "heapbuf",
    in_place_fortran => "inplace_f",
    sections_fortran => "sections_f",
}

/// A program written against `use mpi_f08` (Open MPI: its F08 procedures call the wrapped
/// `ompi_<name>_f` entries; MPICH's call its internals and are not traced).
#[test]
fn stencil2d_fortran_2008() {
    if is_mpich() {
        return;
    }
    let (ranks, iterations) = sizes();
    for &n in ranks {
        check_app("stencil2d08_f", n, iterations, Launch::Run);
    }
}

#[test]
fn exec_works_under_a_plain_launcher() {
    let (_, iterations) = sizes();
    check_app("stencil2d", 4, iterations, Launch::Exec);
    check_app("ring_f", 4, iterations, Launch::Exec);
}

#[test]
fn open_mpi_larger_runs() {
    if is_mpich() {
        return; // oversubscribed MPICH is 100x slower; covered at 4 ranks above
    }
    check_app("stencil2d", 16, 20, Launch::Run);
    check_app("stencil3d", 27, 10, Launch::Run);
}
