//! `conifer waits` on real runs of `tests/apps/delays.c`, whose waits are built in (its header
//! comment): Late Sender on rank 0 (100 × 2 ms), Late Receiver on rank 0 (50 × 1 ms, Ssend),
//! Wait at Barrier on every rank but the last (20 × 5 ms), Wait at N×N on ranks ≠ 0
//! (20 × 3 ms, Allreduce), Late Broadcast on non-roots (20 × 2 ms), Early Reduce on the
//! root (20 × 2 ms); repetitions scaled by the app's percent argument.
//!
//! Nothing is compared with the host's clock. On a busy host a rank descheduled at the wrong
//! moment changes the waits the run really had: a late rank descheduled past its deadline
//! computes longer (the app spins until a deadline), a waiting rank descheduled between calls
//! arrives late and waits less. So each built-in wait is checked against its nominal value
//! (±10% for Late Sender, ±15% for the others) when the trace shows the run went as built in
//! — the late rank computed its nominal time and the waiting ranks spent about that long in
//! their waiting calls (within 6%) — and the run is repeated up to three times for that.
//! Always checked, whatever the load: each wait is at most what the late rank's own timeline
//! allows (the sum of the times from the call before each delayed call to the delayed call)
//! and at least half its nominal value.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// `REPS(n)` of delays.c.
fn reps(n: u64, percent: u64) -> u64 {
    (n * percent / 100).max(1)
}

/// Which calls of a rank: a function, optionally one tag, optionally a range of its calls.
#[derive(Clone, Copy)]
struct Select {
    function: &'static str,
    tag: Option<&'static str>,
    range: Option<(usize, usize)>,
}

const fn only(function: &'static str) -> Select {
    Select {
        function,
        tag: None,
        range: None,
    }
}

const fn tagged(function: &'static str, tag: &'static str) -> Select {
    Select {
        function,
        tag: Some(tag),
        range: None,
    }
}

/// The selected calls of one rank's `calls`, with their positions.
fn select<'a>(calls: &[&'a Value], s: Select) -> Vec<(usize, &'a Value)> {
    calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c["function"] == s.function)
        .filter(|(_, c)| s.tag.is_none_or(|t| c["args"]["tag"] == t))
        .enumerate()
        .filter(|(n, _)| s.range.is_none_or(|(a, b)| (a..b).contains(n)))
        .map(|(_, (i, c))| (i, *c))
        .collect()
}

fn enter(c: &Value) -> i64 {
    c["run"]["enter_ns"].as_i64().expect("per-call timing")
}

fn exit(c: &Value) -> i64 {
    c["run"]["exit_ns"].as_i64().expect("per-call timing")
}

/// One built-in wait.
struct Builtin {
    pattern: &'static str,
    /// The ranks that wait, and their waiting calls.
    waiting: Vec<u32>,
    wait_calls: Select,
    /// The late rank, and its delayed calls.
    late: u32,
    late_calls: Select,
    /// Nominal wait per waiting rank, ns.
    nominal: f64,
}

fn builtins(ranks: u32, percent: u64) -> Vec<Builtin> {
    let ms = |each: f64, n: u64| each * 1e6 * reps(n, percent) as f64;
    let last = ranks - 1;
    // Barriers of the barrier phase: three phases end in one before it.
    let barrier = Select {
        function: "MPI_Barrier",
        tag: None,
        range: Some((3, 3 + reps(20, percent) as usize)),
    };
    vec![
        Builtin {
            pattern: "late_sender",
            waiting: vec![0],
            wait_calls: tagged("MPI_Recv", "2"),
            late: 1,
            late_calls: tagged("MPI_Send", "2"),
            nominal: ms(2.0, 100),
        },
        Builtin {
            pattern: "late_receiver",
            waiting: vec![0],
            wait_calls: only("MPI_Ssend"),
            late: 1,
            late_calls: tagged("MPI_Recv", "3"),
            nominal: ms(1.0, 50),
        },
        Builtin {
            pattern: "wait_at_barrier",
            waiting: (0..last).collect(),
            wait_calls: barrier,
            late: last,
            late_calls: barrier,
            nominal: ms(5.0, 20),
        },
        Builtin {
            pattern: "wait_at_nxn",
            waiting: (1..ranks).collect(),
            wait_calls: only("MPI_Allreduce"),
            late: 0,
            late_calls: only("MPI_Allreduce"),
            nominal: ms(3.0, 20),
        },
        Builtin {
            pattern: "late_broadcast",
            waiting: (1..ranks).collect(),
            wait_calls: only("MPI_Bcast"),
            late: 0,
            late_calls: only("MPI_Bcast"),
            nominal: ms(2.0, 20),
        },
        Builtin {
            pattern: "early_reduce",
            waiting: vec![0],
            wait_calls: only("MPI_Reduce"),
            late: 1,
            late_calls: only("MPI_Reduce"),
            nominal: ms(2.0, 20),
        },
    ]
}

/// `conifer waits --json` of a trace.
fn waits_json(trace: &Path) -> Value {
    let out = run_ok(
        Command::new(conifer())
            .arg("waits")
            .arg("--json")
            .arg(trace),
    );
    serde_json::from_slice(&out.stdout).expect("waits --json prints JSON")
}

/// What one run of delays gave.
struct Run {
    trace: std::path::PathBuf,
    waits: Value,
    /// Per rank, its calls as `conifer decode --json` prints them.
    calls: Vec<Vec<Value>>,
}

impl Run {
    fn rank(&self, r: u32) -> Vec<&Value> {
        self.calls[r as usize].iter().collect()
    }

    /// The late rank's computation before its delayed calls (the recorder's own time
    /// excluded), ns.
    fn computed(&self, b: &Builtin) -> f64 {
        select(&self.rank(b.late), b.late_calls)
            .iter()
            .map(|(_, c)| c["interval_ns"].as_f64().unwrap())
            .sum()
    }

    /// The longest any rank can have waited for `b`'s late rank: the sum, over its delayed
    /// calls, of the time from its previous call's enter to their enter, ns.
    fn allowed(&self, b: &Builtin) -> f64 {
        let calls = self.rank(b.late);
        select(&calls, b.late_calls)
            .iter()
            .map(|&(i, c)| (enter(c) - enter(calls[i - 1])) as f64)
            .sum()
    }

    /// Time `rank` spent inside its waiting calls of `b`, ns.
    fn inside(&self, b: &Builtin, rank: u32) -> f64 {
        select(&self.rank(rank), b.wait_calls)
            .iter()
            .map(|(_, c)| (exit(c) - enter(c)) as f64)
            .sum()
    }

    /// True when the run went as built in for `b`: the late rank computed its nominal time
    /// and every waiting rank spent about that long in its waiting calls (neither was
    /// descheduled for long; within 6%).
    fn undisturbed(&self, b: &Builtin) -> bool {
        let near = |t: f64| (0.94 * b.nominal..=1.06 * b.nominal + 0.5e6).contains(&t);
        near(self.computed(b)) && b.waiting.iter().all(|&r| near(self.inside(b, r)))
    }

    /// The waiting time `conifer waits` found for `b` on `rank`, at the call sites of its
    /// waiting calls.
    fn found(&self, b: &Builtin, rank: u32) -> f64 {
        let sites: BTreeSet<u64> = select(&self.rank(rank), b.wait_calls)
            .iter()
            .map(|(_, c)| c["caller"]["offset"].as_u64().expect("--callsites"))
            .collect();
        assert_eq!(
            sites.len(),
            1,
            "{} on rank {rank}: one call site",
            b.pattern
        );
        self.waits["waits"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["pattern"] == b.pattern && e["rank"] == rank)
            .filter(|e| sites.contains(&e["site_id"]["id"]["offset"].as_u64().unwrap()))
            .map(|e| e["time_ns"].as_f64().unwrap())
            .sum()
    }
}

/// Traces delays (lossless timing, recorded callers) on `ranks` ranks at `percent`, until
/// the late ranks computed their nominal times (at most 3 runs).
fn run_delays(name: &str, ranks: u32, percent: u64) -> Run {
    let dir = scratch(name);
    let app = apps_dir().join("delays");
    let percent_arg = percent.to_string();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let trace = traced(
            &dir,
            &format!("delays{attempt}"),
            ranks,
            &["--timing", "lossless", "--callsites"],
            &app,
            &[&percent_arg],
        );
        let mut calls = vec![Vec::new(); ranks as usize];
        for c in decode_all(&trace) {
            calls[c["rank"].as_u64().unwrap() as usize].push(c);
        }
        let run = Run {
            waits: waits_json(&trace),
            trace,
            calls,
        };
        let busy: Vec<&str> = builtins(ranks, percent)
            .iter()
            .filter(|b| !run.undisturbed(b))
            .map(|b| b.pattern)
            .collect();
        if busy.is_empty() || attempt == 3 {
            if !busy.is_empty() {
                eprintln!("busy host: descheduled ranks changed the built-in waits: {busy:?}");
            }
            return run;
        }
    }
}

/// Every built-in wait of `run` within what the late rank's timeline allows; with `nominal`,
/// also at least half its nominal value, and within ±10% (Late Sender) or ±15% of it when
/// the run went as built in. Returns, per pattern, the total found over the
/// waiting ranks and the nominal total.
fn check_builtins(
    run: &Run,
    ranks: u32,
    percent: u64,
    nominal: bool,
) -> Vec<(&'static str, f64, f64)> {
    let mut totals = Vec::new();
    for b in builtins(ranks, percent) {
        let computed = run.computed(&b);
        let allowed = run.allowed(&b);
        let clean = run.undisturbed(&b);
        let tolerance = if b.pattern == "late_sender" {
            0.10
        } else {
            0.15
        };
        let mut total = 0.0;
        for &r in &b.waiting {
            let found = run.found(&b, r);
            total += found;
            eprintln!(
                "{} rank {r}: found {:.1} ms, built in {:.1} ms, late rank computed {:.1} ms, \
                 waiting calls {:.1} ms, allowed {:.1} ms{}",
                b.pattern,
                found / 1e6,
                b.nominal / 1e6,
                computed / 1e6,
                run.inside(&b, r) / 1e6,
                allowed / 1e6,
                if clean { "" } else { " (disturbed)" }
            );
            assert!(
                found <= allowed * 1.02 + 1e6,
                "{} on rank {r}: {found} ns is more than the late rank allows ({allowed} ns)",
                b.pattern
            );
            if nominal {
                assert!(
                    found >= 0.5 * b.nominal,
                    "{} on rank {r}: {found} ns, built in {} ns",
                    b.pattern,
                    b.nominal
                );
            }
            if nominal && clean {
                assert!(
                    (found - b.nominal).abs() <= tolerance * b.nominal,
                    "{} on rank {r}: {found} ns, built in {} ns ± {}%",
                    b.pattern,
                    b.nominal,
                    tolerance * 100.0
                );
            }
        }
        totals.push((b.pattern, total, b.nominal * b.waiting.len() as f64));
    }
    totals
}

/// Time of (`rank`, `activity`) on the critical path, ns.
fn on_path(w: &Value, rank: u32, activity: &str) -> f64 {
    w["critical_path"]["shares"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["rank"] == rank && s["activity"] == activity)
        .map(|s| s["time_ns"].as_f64().unwrap())
        .sum()
}

/// Time the critical path spends in (`rank`, `activity`, if given) within `[from, to)`, ns.
fn on_path_within(w: &Value, rank: u32, activity: Option<&str>, (from, to): (i64, i64)) -> f64 {
    w["critical_path"]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["rank"] == rank && activity.is_none_or(|a| s["activity"] == a))
        .map(|s| {
            let a = s["start_ns"].as_i64().unwrap().max(from);
            let b = s["end_ns"].as_i64().unwrap().min(to);
            (b - a).max(0) as f64
        })
        .sum()
}

/// Checks what every `--json` entry holds.
fn check_json_fields(w: &Value, ranks: u32) {
    let patterns = [
        "late_sender",
        "late_receiver",
        "wait_at_barrier",
        "wait_at_nxn",
        "late_broadcast",
        "early_reduce",
    ];
    let entries = w["waits"].as_array().expect("a list of waits");
    assert!(!entries.is_empty());
    for e in entries {
        assert!(patterns.contains(&e["pattern"].as_str().unwrap()), "{e}");
        assert!(e["rank"].as_u64().unwrap() < u64::from(ranks), "{e}");
        assert!(!e["site"].as_str().unwrap().is_empty(), "{e}");
        assert!(e["time_ns"].as_u64().unwrap() > 0, "{e}");
        assert!(e["calls"].as_u64().unwrap() > 0, "{e}");
    }
    assert_eq!(w["timing"], "lossless");
    assert_eq!(w["per_rank"].as_array().unwrap().len(), ranks as usize);
}

/// Two ranks (both MPIs): every pattern against the built-in delays, the JSON fields, the
/// text output, the report's section, and the critical path: in the late-sender phase it
/// runs through rank 1's computation, not rank 0's receive.
#[test]
fn built_in_waits_on_two_ranks() {
    // MPICH busy-polls: a quarter of the repetitions.
    let percent = if is_mpich() { 25 } else { 100 };
    let run = run_delays("waits-2", 2, percent);
    let w = &run.waits;
    check_json_fields(w, 2);
    check_builtins(&run, 2, percent, true);

    // The critical path ends on a rank entering MPI_Finalize and covers the run from its
    // start; rank 0's late-sender receives begin and end within it.
    let p = &w["critical_path"];
    assert_eq!(p["ends_at_finalize"], true);
    let length = p["length_ns"].as_f64().unwrap();
    let per_rank: f64 = p["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert_eq!(per_rank, length);
    let recvs = select(&run.rank(0), tagged("MPI_Recv", "2"));
    let window = (enter(recvs[0].1), exit(recvs[recvs.len() - 1].1));
    let span = (window.1 - window.0) as f64;
    // In the late-sender phase the path is on rank 1, computing (all but the sends and the
    // ends of the receives when the phase went as built in; at least half of it when a
    // descheduled rank 0 came late to some receives).
    let all = builtins(2, percent);
    let share = if run.undisturbed(&all[0]) { 0.9 } else { 0.5 };
    let rank1_computing = on_path_within(w, 1, Some("computation"), window);
    eprintln!(
        "late-sender phase: {:.1} ms, the path on rank 1 computing {:.1} ms",
        span / 1e6,
        rank1_computing / 1e6
    );
    assert!(
        rank1_computing >= share * span,
        "{rank1_computing} of {span}"
    );
    // Rank 0's waiting is charged to rank 1, not to its receives or synchronous sends: the
    // path takes at most the part of those calls that was not waiting.
    for (function, pattern) in [("MPI_Recv", "late_sender"), ("MPI_Ssend", "late_receiver")] {
        let inside: i64 = select(&run.rank(0), only(function))
            .iter()
            .map(|(_, c)| exit(c) - enter(c))
            .sum();
        let waited = w["per_rank"][0][pattern].as_f64().unwrap();
        let path = on_path(w, 0, function);
        eprintln!(
            "rank 0 {function}: {:.1} ms inside, {:.1} ms waiting, {:.1} ms on the path",
            inside as f64 / 1e6,
            waited / 1e6,
            path / 1e6
        );
        assert!(path <= inside as f64 - waited + 1e6, "{function}");
    }
    // Over the run: rank 1's computation holds the late-sender, late-receiver, barrier and
    // reduce phases, rank 0's the allreduce and broadcast phases.
    let share = if all.iter().all(|b| run.undisturbed(b)) {
        0.9
    } else {
        0.5
    };
    let rank1_built_in: f64 = [0, 1, 2, 5].iter().map(|&i| all[i].nominal).sum();
    let rank0_built_in: f64 = [3, 4].iter().map(|&i| all[i].nominal).sum();
    assert!(on_path(w, 1, "computation") >= share * rank1_built_in);
    assert!(on_path(w, 0, "computation") >= share * rank0_built_in);

    // The text: both tables and the path.
    let text = run_ok(Command::new(conifer()).arg("waits").arg(&run.trace)).stdout;
    let text = String::from_utf8_lossy(&text);
    for needle in [
        "Late Sender",
        "Early Reduce",
        "top ",
        "critical path",
        "entering MPI_Finalize",
        "computation",
    ] {
        assert!(text.contains(needle), "{needle:?} in\n{text}");
    }
    // The report has the section.
    let html = run.trace.with_extension("html");
    run_ok(
        Command::new(conifer())
            .arg("report")
            .arg(&run.trace)
            .arg("-o")
            .arg(&html),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Wait states and critical path</h2>"));
    assert!(page.contains("Late Sender"));
}

/// Four ranks (Open MPI; MPICH busy-polls too hard for 4 ranks on this machine): the
/// collective patterns with more members (Open MPI's tree and recursive-doubling
/// algorithms), the barrier's on all but the last rank. Four busy-polling ranks on two cores
/// deschedule one another for milliseconds: a rank that runs late to its next call waits
/// less than built in, and Open MPI oversubscribed acknowledges a synchronous send only at
/// the receiver's next MPI call (the sender's wait then ends after the receive was posted,
/// which is no Late Receiver). So each wait is checked against what the late rank's timeline
/// allows, and the barrier phase's total over the waiting ranks against 70% of nominal.
#[test]
fn built_in_waits_on_four_ranks() {
    if is_mpich() {
        eprintln!("four oversubscribed ranks are Open MPI's only");
        return;
    }
    let percent = 50;
    let run = run_delays("waits-4", 4, percent);
    check_json_fields(&run.waits, 4);
    let totals = check_builtins(&run, 4, percent, false);
    let (_, found, nominal) = totals
        .iter()
        .find(|t| t.0 == "wait_at_barrier")
        .copied()
        .unwrap();
    assert!(
        found >= 0.7 * nominal,
        "wait at barrier {found} of {nominal}"
    );
    for (pattern, found, _) in &totals {
        if *pattern != "late_receiver" {
            assert!(*found > 0.0, "{pattern} found nowhere");
        }
    }
}

/// A trace with the default aggregate timing: one line saying what is needed, non-zero
/// exit; its report has no wait-state section.
#[test]
fn aggregate_timing_is_refused_in_one_line() {
    let dir = scratch("waits-aggregate");
    let trace = traced(&dir, "delays", 2, &[], &apps_dir().join("delays"), &["5"]);
    for json in [false, true] {
        let mut cmd = Command::new(conifer());
        cmd.arg("waits").arg(&trace);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("per-call timing"), "{err}");
        assert!(err.contains("--timing lossless"), "{err}");
        assert!(err.contains("lossy:REL"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty());
    }
    let html = dir.join("delays.html");
    run_ok(
        Command::new(conifer())
            .arg("report")
            .arg(&trace)
            .arg("-o")
            .arg(&html),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("Wait states"));
}
