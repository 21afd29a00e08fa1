//! Guarded slices on a KBA wavefront transport code (`tests/apps/wavefront.c` and its
//! Fortran 77 twin `wavefront.f`): the iteration loop ends on
//! `(err > epsi && epsi >= 0) || (its < -epsi && epsi < 0)`, so with a negative tolerance the
//! sweep computing `err` decides nothing. The slice keeps a guarded version without it; the
//! input deck picks the version at run time, and the sliced run records the full run's calls
//! with either deck.

mod common;

use common::slicing::*;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The apps' default grid (24³ cells, 4 angles, z blocks of 4 planes) run for exactly 3
/// iterations.
const COUNTED: &str = "24 24 24\n4\n4\n-3\n50\n";

/// The same grid converged to a relative flux change below 1e-4 (13 iterations).
const CONVERGED: &str = "24 24 24\n4\n4\n1e-4\n50\n";

/// Calls a rank makes per iteration that the guarded version records without executing:
/// 8 octants × 6 z blocks × (2 `MPI_Recv` + 2 `MPI_Send`), and the `MPI_Allreduce` of the
/// flux change.
const SKIPPED_PER_ITERATION: u64 = 8 * 6 * 4 + 1;

/// The slicing report of a binary (`conifer tree --json`).
fn report(binary: &Path) -> serde_json::Value {
    let out = run_ok(
        Command::new(conifer())
            .arg("tree")
            .arg(binary)
            .arg("--json"),
    );
    let tree: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    tree["slice"].clone()
}

/// Builds `source` full and sliced, checks the sliced binary's one guard (a comparison ending
/// in `comparison`, taken when it is `when`), and runs both with each deck: the same calls,
/// and each rank skips what the version the deck picks leaves unexecuted.
fn check_wavefront(name: &str, source: &str, comparison: &str, when: bool) {
    let dir = scratch(&format!("slice-guard-{name}"));
    let source = repo_root().join("tests/apps").join(source);
    let full = build_with(&dir, &source, &format!("{name}-full"), false, &["-lm"]);
    let sliced = build_with(&dir, &source, &format!("{name}-sliced"), true, &["-lm"]);
    let slice = report(&sliced);
    let guards = slice["guards"].as_array().expect("guards");
    assert_eq!(guards.len(), 1, "{slice}");
    let guard = &guards[0];
    assert!(
        guard["comparison"].as_str().unwrap().ends_with(comparison),
        "{guard}"
    );
    assert_eq!(guard["when"], when, "{guard}");
    // The guarded version leaves out the sweep the full slice keeps.
    let all = slice["instructions"].as_f64().unwrap();
    let guarded = guard["kept"].as_f64().unwrap() / all;
    let unguarded = slice["kept"].as_f64().unwrap() / all;
    assert!(guarded < 0.5 && guarded < 0.7 * unguarded, "{slice}");
    for (deck, text, skipped_per_rank) in [
        ("counted", COUNTED, 3 * SKIPPED_PER_ITERATION + 1),
        ("converged", CONVERGED, 1),
    ] {
        let path = dir.join(deck);
        std::fs::write(&path, text).expect("write the deck");
        let deck_arg = path.to_str().unwrap();
        let (full_trace, full_out) =
            run(&dir, &format!("{deck}-full"), ranks(), &full, &[deck_arg]);
        let (sliced_trace, sliced_out) = run(
            &dir,
            &format!("{deck}-sliced"),
            ranks(),
            &sliced,
            &[deck_arg],
        );
        assert!(
            skipped(&full_out).is_empty(),
            "{name} {deck}: the full build skipped calls"
        );
        assert_same_calls(name, &full_trace, &sliced_trace);
        // Counted: every point-to-point call and the flux change's reduction go unexecuted,
        // with the final `MPI_Reduce` nobody reads. Converged: the full slice runs, which
        // leaves out that `MPI_Reduce` only.
        let expected: BTreeMap<u32, u64> = (0..ranks()).map(|r| (r, skipped_per_rank)).collect();
        assert_eq!(skipped(&sliced_out), expected, "{name} {deck}");
    }
}

#[test]
fn the_c_wavefront_code_runs_its_sweep_only_when_the_deck_asks_to_converge() {
    check_wavefront("wavefront", "wavefront.c", "] >= 0", false);
}

#[test]
fn the_fortran_77_wavefront_code_runs_its_sweep_only_when_the_deck_asks_to_converge() {
    check_wavefront("wavefront_f", "wavefront.f", "deck_ < 0", true);
}
