//! Tree mode: every test app built with `conifer cc` / `conifer fc` (so its binary carries a
//! structure tree) and traced on the MPI this build targets, once filling trace trees and once
//! with `CONIFER_TREE=0` (grammar path only). Both traces must decode to exactly their raw
//! records (`conifer verify`), and to the same calls as each other: the two runs get the same
//! ranks and input, with address randomisation off (`setarch -R`) so stack addresses repeat.
//! Two apps are nondeterministic by design — `waitany` (completion order, so even how often
//! `MPI_Testsome` runs) and `threads` (interleaving of threads) — and are compared by their
//! per-rank counts of every function but the polling ones (`MPI_Test*`).

mod common;

use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `conifer run --raw` of `program args` with address randomisation off, in tree mode or not.
fn traced(ranks: u32, trace: &Path, dir: &Path, tree: bool, program: &[&str]) {
    let mut cmd = Command::new("setarch");
    cmd.args([std::env::consts::ARCH, "-R"])
        .arg("timeout")
        .arg("300")
        .arg(conifer())
        .args(["run", "--raw", "-n", &ranks.to_string(), "-o"])
        .arg(trace)
        .args(program)
        .current_dir(dir);
    // Set either way: the environment's size moves the stack, and stack addresses are
    // recorded (`MPI_Get_address`).
    cmd.env("CONIFER_TREE", if tree { "1" } else { "0" });
    run_ok(&mut cmd);
    let verify = run_ok(Command::new(conifer()).arg("verify").arg(trace));
    assert!(
        String::from_utf8_lossy(&verify.stdout).starts_with("identical: "),
        "{trace:?}: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

/// Every call of a trace as `conifer decode --json` prints it, with the run's process id
/// taken out of `mpiio`'s file name.
fn decoded(trace: &Path) -> Vec<serde_json::Value> {
    let mut calls = decode_all(trace);
    for call in &mut calls {
        if let Some(name) = call.pointer_mut("/args/filename") {
            let text = name.as_str().unwrap_or_default();
            let stem = text.split('_').take(2).collect::<Vec<_>>().join("_");
            *name = serde_json::Value::String(stem);
        }
    }
    calls
}

/// [`decoded`] calls without what only one recorder knows or two runs may differ in: timing,
/// and the call site (trace trees only).
fn calls(trace: &Path) -> Vec<serde_json::Value> {
    let mut calls = decoded(trace);
    for call in &mut calls {
        let fields = call.as_object_mut().expect("object");
        for field in [
            "duration_ns",
            "mean_ns",
            "mean_interval_ns",
            "start_ns",
            "site",
            "source",
        ] {
            fields.remove(field);
        }
    }
    calls
}

/// Calls per rank and function, polling functions (`MPI_Test*`) left out.
fn counts(calls: &[serde_json::Value]) -> BTreeMap<(u64, String), u64> {
    let mut counts = BTreeMap::new();
    let polling = |c: &&serde_json::Value| {
        c["function"]
            .as_str()
            .is_some_and(|f| f.starts_with("MPI_Test"))
    };
    for c in calls.iter().filter(|c| !polling(c)) {
        let key = (c["rank"].as_u64().unwrap(), c["function"].to_string());
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

/// Traces `app` both ways and compares; returns the tree-mode trace's `stats --json`.
fn check(app: &str, ranks: u32, iterations: u32) -> serde_json::Value {
    let program = tree_apps_dir().join(app);
    let program = program.to_str().unwrap();
    let dir = scratch(&format!("tree-{app}-{ranks}"));
    // Names of one length: the trace's path is in the environment, which moves the stack.
    let (tree, grammar) = (dir.join("tree.cft"), dir.join("gram.cft"));
    let _lock = mpi_lock();
    let args = [program, &iterations.to_string()];
    traced(ranks, &tree, &dir, true, &args);
    traced(ranks, &grammar, &dir, false, &args);
    let stats = stats_json(&tree);
    let trees = &stats["trace_tree"];
    assert!(
        trees.is_object(),
        "{app}: the tree-mode trace has no trace tree"
    );
    assert!(
        trees["calls_in_tree"].as_u64().unwrap() > 0,
        "{app}: no call went into the tree: {trees}"
    );
    // The tree and the grammar path hold the MPI calls and the buffer-release records (which
    // `stats` names apart): the two add up to both, as the text line says.
    let records = |key: &str| trees[key].as_u64().unwrap();
    let (calls_made, frees) = (
        stats["calls"].as_u64().unwrap(),
        stats["segment_frees"].as_u64().unwrap(),
    );
    assert_eq!(
        records("calls_in_tree") + records("calls_outside_tree"),
        calls_made + frees,
        "{app}: {trees}"
    );
    let text =
        String::from_utf8(run_ok(Command::new(conifer()).arg("stats").arg(&tree)).stdout).unwrap();
    let of_records = if frees > 0 {
        format!(
            "of its {} records ({calls_made} MPI calls + {frees} buffer-release records)",
            calls_made + frees
        )
    } else {
        format!("of its {calls_made} calls")
    };
    assert!(text.contains(&of_records), "{app}: {text}");
    assert!(
        stats_json(&grammar)["trace_tree"].is_null(),
        "{app}: CONIFER_TREE=0 still filled trees"
    );
    let (from_tree, from_grammar) = (calls(&tree), calls(&grammar));
    if matches!(app, "waitany" | "threads") {
        assert_eq!(counts(&from_tree), counts(&from_grammar), "{app}");
    } else {
        assert_eq!(from_tree.len(), from_grammar.len(), "{app}: calls");
        for (t, g) in from_tree.iter().zip(&from_grammar) {
            assert_eq!(t, g, "{app}: first differing call");
        }
    }
    stats
}

/// Ranks and iterations: MPICH busy-polls, so it gets few of both.
fn size() -> (u32, u32) {
    if is_mpich() {
        (4, 3)
    } else {
        (4, 10)
    }
}

macro_rules! tree_tests {
    ($($test:ident => $app:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let (ranks, iterations) = size();
            check($app, ranks, iterations);
        }
    )*};
}

tree_tests! {
    stencil2d_c => "stencil2d",
    stencil2d_fortran => "stencil2d_f",
    stencil3d_c => "stencil3d",
    ring_c => "ring",
    ring_fortran => "ring_f",
    waitany_testsome_c => "waitany",
    comms_c => "comms",
    datatypes_c => "datatypes",
    persistent_c => "persistent",
    onesided_c => "onesided",
    mpiio_c => "mpiio",
    threads_c => "threads",
    heapbuf_c => "heapbuf",
    in_place_fortran => "inplace_f",
    sections_fortran => "sections_f",
}

/// The pool part of a request id (`req3.1` → `3`).
fn pool(request: &serde_json::Value) -> Option<String> {
    let id = request.as_str()?.strip_prefix("req")?;
    Some(id.split('.').next()?.to_string())
}

/// The NAS-MG-like app at several sizes (its nested branches are what the tree is for): all
/// of its calls go into the tree, and decode names each call's site (an `Irecv` line of
/// mg.c for receives). Requests are linked to the call site that created them: no request
/// pool is shared by two sites (mg's five copies of its exchange post receives of equal
/// signatures, which signature pools alone would share), and every `MPI_Wait` completes a
/// request of a receive pool.
#[test]
fn mg_multigrid_c() {
    let stats = check("mg", 4, if is_mpich() { 3 } else { 10 });
    let trees = &stats["trace_tree"];
    assert_eq!(trees["calls_outside_tree"], 0, "{trees}");
    assert_eq!(trees["calls_in_tree"], stats["calls"], "{trees}");
    let source = std::fs::read_to_string(repo_root().join("tests/apps/mg.c")).unwrap();
    let calls = decoded(&scratch_trace("tree-mg-4"));
    for rank in 0..4u64 {
        let mut sites_of_pool: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
        let mut waits = BTreeSet::new();
        for c in calls.iter().filter(|c| c["rank"] == rank) {
            let pool = pool(&c["args"]["request"]);
            match (c["function"].as_str(), pool) {
                (Some("MPI_Irecv"), Some(pool)) => {
                    let at = c["source"].as_str().expect("receives have a source line");
                    let line: usize = at.trim_start_matches("mg.c:").parse().unwrap();
                    let text = source.lines().nth(line - 1).unwrap_or_default();
                    assert!(text.contains("Irecv"), "{at}: {text}");
                    let site = c["site"].as_u64().expect("receives have a site");
                    sites_of_pool.entry(pool).or_default().insert(site);
                }
                (Some("MPI_Wait"), Some(pool)) => {
                    waits.insert(pool);
                }
                _ => {}
            }
        }
        let sites: BTreeSet<u64> = sites_of_pool.values().flatten().copied().collect();
        assert!(sites.len() >= 2, "rank {rank}: receive sites {sites:?}");
        for (pool, sites) in &sites_of_pool {
            assert_eq!(sites.len(), 1, "rank {rank}: pool {pool} made at {sites:?}");
        }
        let receives: BTreeSet<String> = sites_of_pool.into_keys().collect();
        assert!(
            waits.is_subset(&receives),
            "rank {rank}: {waits:?} vs {receives:?}"
        );
    }
    if !is_mpich() {
        check("mg", 16, 10);
    }
}

/// The tree-mode trace [`check`] left in scratch directory `name`.
fn scratch_trace(name: &str) -> PathBuf {
    conifer()
        .parent()
        .unwrap()
        .join("test-scratch")
        .join(name)
        .join("tree.cft")
}

/// A program whose exchange routine comes from an object built without Conifer (plain
/// `mpicc -c`): its calls are outside the structure tree, arrive in the middle of the tree's
/// loop, and must decode in their place. Hand-derived per rank: Init, Comm_rank, Comm_size,
/// three Sendrecv (outside the tree), Allreduce, Finalize.
#[test]
fn calls_from_code_built_without_conifer_keep_their_place() {
    let dir = scratch("tree-foreign-object");
    let statics = repo_root().join("tests/static");
    mpi_compile(
        "mpicc",
        &["-O2", "-c"],
        &dir.join("halo2.o"),
        &statics.join("halo2.c"),
    );
    run_ok(
        Command::new(conifer())
            .args(["cc", &format!("--mpi={}", mpi()), "-O2", "-o"])
            .arg(dir.join("main2"))
            .arg(statics.join("main2.c"))
            .arg(dir.join("halo2.o")),
    );
    let trace = dir.join("tree.cft");
    let _lock = mpi_lock();
    traced(
        3,
        &trace,
        &dir,
        true,
        &[dir.join("main2").to_str().unwrap()],
    );
    let stats = stats_json(&trace);
    assert_eq!(stats["trace_tree"]["calls_outside_tree"], 9, "{stats}");
    assert_eq!(stats["trace_tree"]["calls_in_tree"], 15, "{stats}");
    let expected = [
        "MPI_Init",
        "MPI_Comm_rank",
        "MPI_Comm_size",
        "MPI_Sendrecv",
        "MPI_Sendrecv",
        "MPI_Sendrecv",
        "MPI_Allreduce",
        "MPI_Finalize",
    ];
    let decoded = calls(&trace);
    for rank in 0..3u64 {
        let functions: Vec<&str> = decoded
            .iter()
            .filter(|c| c["rank"] == rank)
            .map(|c| c["function"].as_str().unwrap())
            .collect();
        assert_eq!(functions, expected, "rank {rank}");
    }
}
