//! The replay's computation, interval by interval (`conifer replay`, PHANTOM): a program that
//! calls MPI before `MPI_Init`, sleeps and reads a file between two calls, and does fixed
//! arithmetic between others (`tests/apps/intervals.c`) replays with the computation a
//! dedicated run recorded — also while a spinning process shares its core.
//!
//! The reference is the recorded trace: each rank's intervals as `conifer decode --json`
//! shows them, the least over three runs. The program reports the time it waited
//! for a CPU in its computation (the kernel's run-queue delay, read by the program itself
//! around each computation); on a loaded machine that is taken out of the recorded total, so
//! the reference is what a dedicated run would record. No figure is compared with the host's
//! wall time.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

const RANKS: u32 = 2;
/// Millions of arithmetic steps between the calls (about 60 ms, then half of it).
const UNITS: &str = "40";

/// The computation intervals rank `r` recorded, one per MPI call, ns.
fn recorded(trace: &Path, r: u32) -> Vec<u64> {
    let out = run_ok(
        Command::new(conifer())
            .args(["decode", "--json", "--rank", &r.to_string()])
            .arg(trace),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["interval_ns"].as_u64().unwrap()
        })
        .collect()
}

/// The replayed times of rank `r`: per call (computation, wall, CPU) in ns, and the header.
fn replayed(trace: &Path, r: u32) -> (Vec<[u64; 3]>, serde_json::Value) {
    let path = PathBuf::from(format!("{}.msglog/replay-{r}.times", trace.display()));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let at = bytes.iter().position(|&b| b == b'\n').expect("header line");
    let header = serde_json::from_slice(&bytes[..at]).unwrap();
    let rows = bytes[at + 1..]
        .chunks_exact(24)
        .map(|c| {
            let v = |k: usize| u64::from_le_bytes(c[8 * k..8 * k + 8].try_into().unwrap());
            [v(0), v(1), v(2)]
        })
        .collect();
    (rows, header)
}

/// The run-queue wait each rank reported, ns (the app prints it from its schedstat).
fn waits(out: &Output) -> Vec<u64> {
    lines_with(&out.stdout, "rank ")
        .iter()
        .map(|l| {
            l.split("waited for a CPU ")
                .nth(1)
                .and_then(|w| w.split_whitespace().next())
                .and_then(|w| w.parse().ok())
                .unwrap_or_else(|| panic!("no wait in {l:?}"))
        })
        .collect()
}

/// Three recordings of the app with a message log: the last one, and each rank's least
/// recorded computation over the three less the time the rank reported waiting for a CPU in
/// it (anything else that disturbs a run only adds time).
fn dedicated_recording(dir: &Path) -> (PathBuf, Vec<u64>) {
    let program = apps_dir().join("intervals");
    let mut dedicated = vec![u64::MAX; RANKS as usize];
    let mut last = PathBuf::new();
    for attempt in 0..3 {
        let name = format!("intervals{attempt}");
        let (trace, out) = traced_run(
            dir,
            &name,
            RANKS,
            &["--log-messages", "--timing", "lossless"],
            &program,
            &[UNITS],
        );
        for (r, wait) in waits(&out).into_iter().enumerate() {
            let computation: u64 = recorded(&trace, r as u32).iter().sum();
            dedicated[r] = dedicated[r].min(computation - wait);
        }
        last = trace;
    }
    (last, dedicated)
}

/// `conifer replay TRACE --rank R --repeat K -- intervals`, pinned to `core` when given.
fn replay(dir: &Path, trace: &Path, ranks: &str, repeat: u32, core: Option<u32>) -> Output {
    let _guard = mpi_lock();
    let mut cmd = Command::new("timeout");
    cmd.arg("300");
    if let Some(core) = core {
        cmd.args(["taskset", "-c", &core.to_string()]);
    }
    run_ok(
        cmd.arg(conifer())
            .arg("replay")
            .arg(trace)
            .args(["--rank", ranks, "--repeat", &repeat.to_string(), "--"])
            .arg(apps_dir().join("intervals"))
            .arg(UNITS)
            .current_dir(dir),
    )
}

/// How far a replay may be from the recording in these tests: twice the 5% target,
/// so that a busy CI host (steal time, caches shared with other jobs) cannot fail them; the
/// target itself is measured, not asserted here.
const TOLERANCE: f64 = 0.10;

/// How far two replays beside a spinner may be apart: twice the 3% target, as above.
const REPEATABLE: f64 = 0.06;

/// Relative difference of `a` from `b`.
fn off(a: u64, b: u64) -> f64 {
    (a as f64 - b as f64).abs() / b as f64
}

#[test]
fn each_interval_replays_with_the_computation_a_dedicated_run_recorded() {
    let dir = scratch("replay_intervals");
    let (trace, dedicated) = dedicated_recording(&dir);
    let out = replay(&dir, &trace, "0-1", 3, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for r in 0..RANKS {
        let want = recorded(&trace, r);
        let (rows, header) = replayed(&trace, r);
        assert_eq!(rows.len(), want.len(), "rank {r}: one interval per call");
        assert_eq!(header["clock"], "wall less run-queue wait", "{header}");
        assert_eq!(header["repeats"], 3, "{header}");
        assert!(
            stderr.contains(&format!("replayed rank {r}: {} calls", want.len()))
                && stderr.contains("as wall less run-queue wait")
                && stderr.contains("the median of 3 replays"),
            "{stderr}"
        );
        // Calls 0 and 1 are MPI_Initialized and MPI_Init: nothing before MPI_Init returns
        // is the program's computation.
        assert_eq!((rows[0][0], rows[1][0]), (0, 0), "rank {r}: {rows:?}");
        // Call 4 follows a 50 ms sleep and a file read: wall time the thread spent off a
        // CPU by its own doing, which the computation keeps and the CPU time lacks.
        assert!(rows[4][0] >= 50_000_000, "rank {r}: {:?}", rows[4]);
        assert!(rows[4][2] < 25_000_000, "rank {r}: {:?}", rows[4]);
        let total: u64 = rows.iter().map(|row| row[0]).sum();
        let reference = dedicated[r as usize];
        assert!(
            off(total, reference) <= TOLERANCE,
            "rank {r}: replayed {total} ns, recorded {reference} ns dedicated ({want:?} against {rows:?})"
        );
    }
    // `stats` on the trace with replayed computation says how it was measured.
    let stats = stats_json(&dir.join(format!(
        "{}.replayed.cft",
        trace.file_stem().unwrap().to_string_lossy()
    )));
    assert_eq!(
        stats["replayed_computation"],
        "wall less run-queue wait, each interval the median of 3 replays"
    );
}

/// A process that spins on one core until dropped.
struct Spinner(Child);

impl Spinner {
    fn on(core: u32) -> Spinner {
        Spinner(
            Command::new("taskset")
                .args(["-c", &core.to_string(), "sh", "-c", "while :; do :; done"])
                .spawn()
                .expect("taskset starts"),
        )
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_replay_sharing_its_core_with_a_spinner_measures_what_a_dedicated_run_recorded() {
    let dir = scratch("replay_spinner");
    let (trace, dedicated) = dedicated_recording(&dir);
    let reference = dedicated[0];
    let spinner = Spinner::on(0);
    let mut totals = Vec::new();
    for _ in 0..2 {
        replay(&dir, &trace, "0", 5, Some(0));
        let (rows, _) = replayed(&trace, 0);
        let total: u64 = rows.iter().map(|row| row[0]).sum();
        let wall: u64 = rows.iter().map(|row| row[1]).sum();
        // The spinner took a share of the core: the intervals' wall time grew by more than
        // a quarter (a replay with the core to itself has wall within a few % of this total).
        assert!(
            wall as f64 > 1.25 * total as f64,
            "the spinner did not share the core: wall {wall} ns, computation {total} ns"
        );
        assert!(
            off(total, reference) <= TOLERANCE,
            "replayed {total} ns beside a spinner, recorded {reference} ns"
        );
        totals.push(total);
    }
    drop(spinner);
    assert!(
        off(totals[0], totals[1]) <= REPEATABLE,
        "two replays beside a spinner: {totals:?}"
    );
}
