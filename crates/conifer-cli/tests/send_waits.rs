//! `conifer waits` on real runs of `tests/apps/sendwaits.c` (its header comment): rank 0's
//! `MPI_Wait`/`MPI_Waitall` over rendezvous-size `MPI_Isend`s whose receives rank 1 posts
//! late (Late Receiver), and its `MPI_Test` completing eager `MPI_Isend`s (Send Completion);
//! and the critical path's start-up shown apart.
//!
//! As in `waits.rs`, nothing is compared with what the host should have done: every wait is
//! recomputed here from the trace's own calls as `conifer decode --json` prints them as run —
//! each `MPI_Isend` completed by the first later `MPI_Wait`, `MPI_Waitall` or `MPI_Test`
//! that said done, paired FIFO per tag with rank 1's `MPI_Recv`s, sizes from the arguments —
//! by the definitions of `conifer_analyze::waits`, to the nanosecond.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// Bytes above which the analysis takes a message as sent by rendezvous (4 KiB: Open MPI's
/// shared-memory eager limit, the smallest of the two MPIs).
const RENDEZVOUS_BYTES: u64 = 4096;

/// One call as run.
struct Call {
    function: String,
    site: u64,
    tag: Option<i64>,
    bytes: u64,
    done: bool,
    enter: i64,
    exit: i64,
}

fn call_of(c: &Value) -> Call {
    let arg = |name: &str| c["args"][name].as_str().and_then(|v| v.parse::<i64>().ok());
    let function = c["function"].as_str().unwrap().to_string();
    Call {
        // Every datatype sendwaits.c sends is MPI_DOUBLE.
        bytes: arg("count").unwrap_or(0) as u64 * 8,
        done: function != "MPI_Test" || arg("flag") == Some(1),
        function,
        site: c["caller"]["offset"].as_u64().expect("--callsites"),
        tag: arg("tag"),
        enter: c["run"]["enter_ns"].as_i64().expect("per-call timing"),
        exit: c["run"]["exit_ns"].as_i64().expect("per-call timing"),
    }
}

/// Per (pattern, call site): ns and calls, of rank 0's send-completing calls, computed here.
type Table = BTreeMap<(String, u64), (u64, u64)>;

fn computed(rank0: &[Call], rank1: &[Call]) -> Table {
    // Rank 0's Isends with the call that completed each.
    let mut sends: Vec<(usize, usize)> = Vec::new();
    let mut pending: Vec<usize> = Vec::new();
    for (i, c) in rank0.iter().enumerate() {
        match c.function.as_str() {
            "MPI_Isend" => pending.push(i),
            "MPI_Wait" | "MPI_Waitall" | "MPI_Test" if c.done => {
                sends.extend(pending.drain(..).map(|s| (s, i)));
            }
            _ => {}
        }
    }
    assert!(pending.is_empty(), "every Isend completed");
    // Rank 1's receives per tag, in order.
    let mut recvs: BTreeMap<i64, Vec<&Call>> = BTreeMap::new();
    for c in rank1.iter().filter(|c| c.function == "MPI_Recv") {
        recvs.entry(c.tag.unwrap()).or_default().push(c);
    }
    let mut taken: BTreeMap<i64, usize> = BTreeMap::new();
    // Completing call → its longest Late Receiver wait (0: none).
    let mut late: BTreeMap<usize, i64> = BTreeMap::new();
    for &(s, done) in &sends {
        let tag = rank0[s].tag.unwrap();
        let n = taken.entry(tag).or_default();
        let recv = recvs[&tag][*n];
        *n += 1;
        let c = &rank0[done];
        let wait = recv.enter.min(c.exit) - c.enter;
        let slot = late.entry(done).or_default();
        if rank0[s].bytes > RENDEZVOUS_BYTES && c.exit > recv.enter && wait > *slot {
            *slot = wait;
        }
    }
    let mut table = Table::new();
    for (done, wait) in late {
        let c = &rank0[done];
        let (pattern, ns) = if wait > 0 {
            ("late_receiver", wait)
        } else {
            ("send_completion", c.exit - c.enter)
        };
        if ns > 0 {
            let e = table.entry((pattern.to_string(), c.site)).or_default();
            e.0 += ns as u64;
            e.1 += 1;
        }
    }
    table
}

/// Per (pattern, site) of rank 0 as `conifer waits --json` reports it, for the two send
/// patterns.
fn reported(w: &Value) -> Table {
    let mut table = Table::new();
    for e in w["waits"].as_array().unwrap() {
        let pattern = e["pattern"].as_str().unwrap();
        if !["late_receiver", "send_completion"].contains(&pattern) {
            continue;
        }
        assert_eq!(e["rank"], 0, "only rank 0 completes sends: {e}");
        let key = (
            pattern.to_string(),
            e["site_id"]["id"]["offset"].as_u64().unwrap(),
        );
        let value = (e["time_ns"].as_u64().unwrap(), e["calls"].as_u64().unwrap());
        assert!(table.insert(key, value).is_none(), "one entry per site");
    }
    table
}

#[test]
fn waits_that_complete_sends_are_named_and_startup_is_apart() {
    // MPICH busy-polls: half the repetitions.
    let percent = if is_mpich() { "50" } else { "100" };
    let dir = scratch("send-waits");
    let app = apps_dir().join("sendwaits");
    let trace = traced(
        &dir,
        "sendwaits",
        2,
        &["--timing", "lossless", "--callsites"],
        &app,
        &[percent],
    );
    let mut ranks: Vec<Vec<Call>> = vec![Vec::new(), Vec::new()];
    // Conifer's own buffer-release (`free`) records are no MPI calls.
    for c in decode_all(&trace)
        .iter()
        .filter(|c| c["function"] != "free")
    {
        ranks[c["rank"].as_u64().unwrap() as usize].push(call_of(c));
    }
    let out = run_ok(
        Command::new(conifer())
            .args(["waits", "--json"])
            .arg(&trace),
    );
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = computed(&ranks[0], &ranks[1]);
    let got = reported(&w);
    for (k, v) in &want {
        eprintln!("computed {k:?}: {v:?}, reported {:?}", got.get(k));
    }
    assert_eq!(
        got, want,
        "conifer waits (left) against the trace's calls (right)"
    );
    let pattern_total = |p: &str| -> u64 {
        want.iter()
            .filter(|(k, _)| k.0 == p)
            .map(|(_, v)| v.0)
            .sum()
    };
    assert_eq!(w["totals"]["late_receiver"], pattern_total("late_receiver"));
    assert_eq!(
        w["totals"]["send_completion"],
        pattern_total("send_completion")
    );
    // The eager Isends (tag 2) are completed by MPI_Test: Send Completion, never a Late
    // Receiver; the 1 MiB Isends' MPI_Wait was, whenever rank 1 was still computing when it
    // was entered (by the trace: its receive came at least 1 ms after the wait began).
    let test_site = ranks[0]
        .iter()
        .find(|c| c.function == "MPI_Test")
        .unwrap()
        .site;
    assert!(want.contains_key(&("send_completion".to_string(), test_site)));
    assert!(!want.contains_key(&("late_receiver".to_string(), test_site)));
    let waits: Vec<&Call> = ranks[0]
        .iter()
        .filter(|c| c.function == "MPI_Wait")
        .collect();
    let recvs: Vec<&Call> = ranks[1].iter().filter(|c| c.tag == Some(1)).collect();
    let as_built = waits
        .iter()
        .zip(&recvs)
        .filter(|(w, r)| r.enter - w.enter >= 1_000_000)
        .count() as u64;
    eprintln!(
        "{as_built} of {} MPI_Waits entered 1 ms before their receive",
        waits.len()
    );
    if as_built > 0 {
        let (ns, calls) = got[&("late_receiver".to_string(), waits[0].site)];
        assert!(ns > 0 && calls >= as_built, "{ns} ns in {calls} calls");
    }

    // The critical path: start-up (MPI_Init) counted apart, equal to its segments; the
    // text lists no MPI_Init row and says so, unless asked.
    let p = &w["critical_path"];
    let init_on_path: i64 = p["segments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["activity"] == "MPI_Init")
        .map(|s| s["end_ns"].as_i64().unwrap() - s["start_ns"].as_i64().unwrap())
        .sum();
    assert_eq!(p["segments_truncated"], false);
    assert!(init_on_path > 0, "the path starts in MPI_Init");
    assert_eq!(p["startup_ns"], init_on_path);
    assert_eq!(
        p["steady_ns"].as_i64().unwrap(),
        p["length_ns"].as_i64().unwrap() - init_on_path
    );
    let text = run_ok(Command::new(conifer()).arg("waits").arg(&trace)).stdout;
    let text = String::from_utf8_lossy(&text);
    assert!(text.contains("Send Completion"), "{text}");
    assert!(text.contains("shown apart"), "{text}");
    let path_part = text.split("@--- critical path ---").nth(1).unwrap();
    assert!(!path_part.contains("\nMPI_Init "), "{path_part}");
    let with = run_ok(
        Command::new(conifer())
            .args(["waits", "--with-startup"])
            .arg(&trace),
    )
    .stdout;
    let with = String::from_utf8_lossy(&with);
    let path_part = with.split("@--- critical path ---").nth(1).unwrap();
    assert!(path_part.contains("\nMPI_Init "), "{path_part}");
}
