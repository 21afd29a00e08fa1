//! The trace's size follows the number of distinct behaviours, not the number of ranks or
//! iterations: sizes of runs of the same build are compared with each other (never with fixed
//! byte counts). Bytes that legitimately grow — varint rank counts and exponents, timing
//! values, the per-rank timing column — stay within [`assert_flat`]'s allowance; each rank's
//! exact timing figures and clock (`CLCK`, `RTOT`) are bounded per rank and left out.

mod common;

use common::*;
use std::path::PathBuf;
use std::process::Command;

/// Traces `app` on `ranks` ranks for `iterations`, checks the trace is lossless, and returns
/// its size in bytes without each rank's own timing figures ([`flat_bytes`]).
fn traced_size(app: &str, ranks: u32, iterations: u32) -> u64 {
    let program = apps_dir().join(app);
    let dir = scratch(&format!("size-{app}-{ranks}-{iterations}"));
    let trace: PathBuf = dir.join("trace.cft");
    let _lock = mpi_lock();
    run_ok(
        conifer_run_raw(ranks, &trace, &dir)
            .arg(&program)
            .arg(iterations.to_string()),
    );
    let verify = run_ok(Command::new(conifer()).arg("verify").arg(&trace));
    assert!(
        String::from_utf8_lossy(&verify.stdout).starts_with("identical: "),
        "{app} on {ranks} ranks: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    flat_bytes(&trace)
}

#[test]
fn stencil2d_with_proc_null_edges_is_flat_from_9_to_64_ranks() {
    if is_mpich() {
        return; // 64 oversubscribed MPICH ranks take minutes; Open MPI runs it
    }
    // 3x3 and 8x8 grids have the same nine behaviours: four corners, four edges, interior.
    let nine = traced_size("stencil2d", 9, 20);
    let sixty_four = traced_size("stencil2d", 64, 20);
    assert_flat("stencil2d", (9, nine), (64, sixty_four));
}

#[test]
fn periodic_stencil3d_is_flat_from_27_to_64_ranks() {
    if is_mpich() {
        return; // as above
    }
    let small = traced_size("stencil3d", 27, 10);
    let large = traced_size("stencil3d", 64, 10);
    assert_flat("stencil3d", (27, small), (64, large));
}

#[test]
fn stencils_are_flat_from_100_to_10000_iterations() {
    // MPICH busy-polls: two ranks keep 10,000 iterations to seconds.
    let ranks = if is_mpich() { 2 } else { 4 };
    for app in ["stencil2d", "stencil3d"] {
        let small = traced_size(app, ranks, 100);
        let large = traced_size(app, ranks, 10_000);
        assert_flat(
            &format!("{app} 100 -> 10,000 iterations"),
            (ranks, small),
            (ranks, large),
        );
    }
}
