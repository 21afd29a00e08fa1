//! Buffers are named the same way whichever compiler built the program. The Fortran test app
//! `sections_f` passes MPI array elements, array sections, module arrays, local scalars and
//! automatic arrays of routines called at several depths. gfortran allocates automatic
//! arrays on the heap (freed on return, so a segment id that comes back every call); flang
//! keeps them on the stack, at addresses that depend on the routines above (their own
//! automatic arrays included). Stack buffers are recorded as offsets from the caller's stack
//! pointer, so the gfortran build (`mpifort`) and the flang build (`conifer fc`) record the
//! same signatures of MPI calls. They differ only in `free` events: gfortran's binary frees
//! the automatic arrays MPI used, flang's has nothing to free.

mod common;

use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// What one traced run of `sections_f` gave: its `RESULT` lines, `stats --json`, and every
/// decoded call.
struct Run {
    results: Vec<String>,
    stats: serde_json::Value,
    calls: Vec<serde_json::Value>,
}

fn traced(program: &Path, trace: &Path, dir: &Path, ranks: u32, iterations: u32) -> Run {
    let out = {
        let _lock = mpi_lock();
        run_ok(
            conifer_run_raw(ranks, trace, dir)
                .arg(program)
                .arg(iterations.to_string()),
        )
    };
    let verify = run_ok(Command::new(conifer()).arg("verify").arg(trace));
    assert!(
        String::from_utf8_lossy(&verify.stdout).starts_with("identical: "),
        "{program:?}: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    Run {
        results: lines_with(&out.stdout, "RESULT "),
        stats: stats_json(trace),
        calls: decode_all(trace),
    }
}

/// Signatures per function, `free` events left out.
fn call_signatures(stats: &serde_json::Value) -> BTreeMap<String, u64> {
    stats["signatures_by_function"]
        .as_object()
        .expect("signatures_by_function")
        .iter()
        .filter(|(name, _)| name.as_str() != "free")
        .map(|(name, n)| (name.clone(), n.as_u64().unwrap()))
        .collect()
}

/// The (send, receive) buffers of every `MPI_Sendrecv`, per rank, tag and count: one
/// exchange of `sections_f` each (its level exchanges run at two depths).
fn sendrecv_buffers(calls: &[serde_json::Value]) -> BTreeMap<String, BTreeSet<String>> {
    let mut buffers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in calls.iter().filter(|c| c["function"] == "MPI_Sendrecv") {
        let args = &c["args"];
        let exchange = format!(
            "rank {} tag {} count {}",
            c["rank"], args["sendtag"], args["sendcount"]
        );
        let pair = format!("{} {}", args["sendbuf"], args["recvbuf"]);
        buffers.entry(exchange).or_default().insert(pair);
    }
    buffers
}

#[test]
fn gfortran_and_flang_builds_record_the_same_signatures() {
    let (ranks, iterations) = if is_mpich() { (4, 5) } else { (4, 20) };
    let dir = scratch("buffers-compilers");
    let gfortran = traced(
        &apps_dir().join("sections_f"),
        &dir.join("gfortran.cft"),
        &dir,
        ranks,
        iterations,
    );
    let flang = traced(
        &tree_apps_dir().join("sections_f"),
        &dir.join("flang.cft"),
        &dir,
        ranks,
        iterations,
    );

    assert_eq!(
        gfortran.results.len(),
        ranks as usize,
        "one RESULT per rank"
    );
    assert!(
        gfortran.results.iter().all(|l| !l.contains(" FAIL")),
        "{:?}",
        gfortran.results
    );
    assert_eq!(flang.results, gfortran.results, "the two builds disagree");
    assert_eq!(
        flang.stats["calls"], gfortran.stats["calls"],
        "the two builds made different calls"
    );

    // Every exchange names its buffers one way in every iteration and from every depth:
    // flang's automatic arrays are stack offsets, gfortran's a segment that comes back.
    for (build, run) in [("gfortran", &gfortran), ("flang", &flang)] {
        let buffers = sendrecv_buffers(&run.calls);
        assert!(!buffers.is_empty(), "{build}: no MPI_Sendrecv");
        for (exchange, pairs) in &buffers {
            assert_eq!(pairs.len(), 1, "{build}, {exchange}: buffers {pairs:?}");
        }
    }
    let level_exchange = |c: &&serde_json::Value| {
        c["function"] == "MPI_Sendrecv" && c["args"]["sendtag"].as_str() == Some("1")
    };
    for c in flang.calls.iter().filter(level_exchange) {
        for buffer in ["sendbuf", "recvbuf"] {
            let name = c["args"][buffer].as_str().unwrap_or_default();
            assert!(name.starts_with("stack+"), "flang: {c}");
        }
    }

    // So the signatures of MPI calls are the same, function by function.
    let (g, f) = (
        call_signatures(&gfortran.stats),
        call_signatures(&flang.stats),
    );
    eprintln!(
        "signatures: gfortran {} ({} free events), flang {} ({} free events)",
        gfortran.stats["signatures"],
        gfortran.stats["signatures_by_function"]["free"],
        flang.stats["signatures"],
        flang.stats["signatures_by_function"]["free"]
    );
    assert_eq!(f, g, "signatures of MPI calls, flang vs gfortran");
}
