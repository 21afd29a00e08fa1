//! `conifer waits` on real runs of `tests/apps/delays.c`, whose waits are built in (its header
//! comment): Late Sender on rank 0 (100 × 2 ms), Late Receiver on rank 0 (50 × 1 ms, Ssend),
//! Wait at Barrier on every rank but the last (20 × 5 ms), Wait at N×N on ranks ≠ 0
//! (20 × 3 ms, Allreduce), Late Broadcast on non-roots (20 × 2 ms), Early Reduce on the
//! root (20 × 2 ms); repetitions scaled by the app's percent argument.
//!
//! Nothing is compared with what the host should have done. On a busy host a descheduled
//! rank changes the waits the run really had (a waiting rank that comes late to its call waits
//! less), so every wait `conifer waits` reports is checked against this file's own
//! computation from the same trace's calls as `conifer decode --json` prints them as run:
//! messages matched FIFO per (sender, receiver, communicator, tag), collectives by their
//! order on the communicator, and each call's wait by the definitions of
//! `conifer_analyze::waits` (Scalasca's, capped at the waiting call's return), to the
//! nanosecond. The built-in delays only say where a wait must be found at all: when the
//! trace shows a phase ran as built in (the late rank computed at least the delay, and the
//! waiting rank was in its call for at least half of it), its pattern must be
//! reported, non-zero, on the waiting rank at the waiting call's site. The critical path is
//! checked the same way, against the trace's own calls and the waits computed here.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `REPS(n)` of delays.c.
fn reps(n: u64, percent: u64) -> u64 {
    (n * percent / 100).max(1)
}

/// One call as `conifer decode --json` shows it: times as run, ns on the synchronised clock.
#[derive(Debug, Clone)]
struct Call {
    function: String,
    /// The call site: the caller's offset in the app (`--callsites`).
    site: u64,
    comm: String,
    /// `dest` of a send, `source` of a receive (world ranks: delays.c uses MPI_COMM_WORLD).
    peer: Option<u32>,
    tag: Option<i64>,
    root: Option<u32>,
    enter: i64,
    exit: i64,
}

impl Call {
    fn from_json(c: &Value) -> Call {
        let arg = |name: &str| c["args"][name].as_str().and_then(|v| v.parse::<i64>().ok());
        let run = &c["run"];
        let call = Call {
            function: c["function"].as_str().unwrap().to_string(),
            site: c["caller"]["offset"].as_u64().expect("--callsites"),
            comm: c["args"]["comm"].as_str().unwrap_or_default().to_string(),
            peer: arg("dest").or(arg("source")).map(|r| r as u32),
            tag: arg("tag"),
            root: arg("root").map(|r| r as u32),
            enter: run["enter_ns"].as_i64().expect("per-call timing"),
            exit: run["exit_ns"].as_i64().expect("per-call timing"),
        };
        assert!(
            call.exit >= call.enter,
            "a call returns before it is entered: {c}"
        );
        call
    }
}

/// Every rank's calls in order.
type Ranks = Vec<Vec<Call>>;

/// A call's wait: its pattern, how long (ns), and whether it waited until its return (the
/// cap of the definitions applied).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Wait {
    pattern: &'static str,
    ns: i64,
    capped: bool,
}

/// Per (rank, call index), the longest wait proposed for the call.
type Waits = BTreeMap<(u32, usize), Wait>;

/// Proposes that call `i` of `rank` waited from its enter until `until` (capped at its
/// return) in `pattern`; a call keeps its longest wait.
fn propose(
    ranks: &Ranks,
    waits: &mut Waits,
    (rank, i): (u32, usize),
    pattern: &'static str,
    until: i64,
) {
    let c = &ranks[rank as usize][i];
    let ns = until.min(c.exit) - c.enter;
    if ns <= 0 {
        return;
    }
    let wait = Wait {
        pattern,
        ns,
        capped: until >= c.exit,
    };
    let slot = waits.entry((rank, i)).or_insert(wait);
    if ns > slot.ns {
        *slot = wait;
    }
}

/// Late Sender and Late Receiver: sends and receives paired FIFO per (sender, receiver,
/// communicator, tag). A receive waits `send.enter − recv.enter`; an `MPI_Ssend`, or an
/// `MPI_Send` still in the call when its receive was posted (rendezvous), waits
/// `recv.enter − send.enter`.
fn point_to_point(ranks: &Ranks, waits: &mut Waits) {
    type Queues = BTreeMap<(u32, u32, String, i64), (Vec<usize>, Vec<usize>)>;
    let mut queues = Queues::new();
    for (rank, calls) in ranks.iter().enumerate() {
        let rank = rank as u32;
        for (i, c) in calls.iter().enumerate() {
            let (Some(peer), Some(tag)) = (c.peer, c.tag) else {
                continue;
            };
            match c.function.as_str() {
                "MPI_Send" | "MPI_Ssend" => {
                    let key = (rank, peer, c.comm.clone(), tag);
                    queues.entry(key).or_default().0.push(i);
                }
                "MPI_Recv" => {
                    let key = (peer, rank, c.comm.clone(), tag);
                    queues.entry(key).or_default().1.push(i);
                }
                other => panic!("delays.c makes no {other}"),
            }
        }
    }
    for ((from, to, _, tag), (sends, recvs)) in queues {
        assert_eq!(
            sends.len(),
            recvs.len(),
            "{from} → {to} tag {tag}: every message received"
        );
        for (&s, &r) in sends.iter().zip(&recvs) {
            let send = &ranks[from as usize][s];
            let recv = &ranks[to as usize][r];
            propose(ranks, waits, (to, r), "late_sender", send.enter);
            let blocked = match send.function.as_str() {
                "MPI_Ssend" => true,
                _ => send.exit > recv.enter,
            };
            if blocked {
                propose(ranks, waits, (from, s), "late_receiver", recv.enter);
            }
        }
    }
}

/// Wait at Barrier and at N×N (last entry − own entry), Late Broadcast (root's entry −
/// own entry, non-roots), Early Reduce (first non-root entry − root's entry): the n-th
/// collective of every rank on a communicator is one instance.
fn collectives(ranks: &Ranks, waits: &mut Waits) {
    let mut instances: BTreeMap<(String, usize), Vec<(u32, usize)>> = BTreeMap::new();
    for (rank, calls) in ranks.iter().enumerate() {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, c) in calls.iter().enumerate() {
            if ["MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce"]
                .contains(&c.function.as_str())
            {
                let n = counts.entry(&c.comm).or_default();
                instances
                    .entry((c.comm.clone(), *n))
                    .or_default()
                    .push((rank as u32, i));
                *n += 1;
            }
        }
    }
    for ((comm, n), members) in instances {
        assert_eq!(
            members.len(),
            ranks.len(),
            "{comm} collective {n}: every rank"
        );
        assert_eq!(comm, "MPI_COMM_WORLD");
        let call = |&(rank, i): &(u32, usize)| &ranks[rank as usize][i];
        let function = call(&members[0]).function.clone();
        assert!(
            members.iter().all(|m| call(m).function == function),
            "{comm} collective {n}"
        );
        let root = members.iter().find(|m| call(m).root == Some(m.0));
        match function.as_str() {
            "MPI_Barrier" | "MPI_Allreduce" => {
                let pattern = if function == "MPI_Barrier" {
                    "wait_at_barrier"
                } else {
                    "wait_at_nxn"
                };
                let last = members.iter().map(|m| call(m).enter).max().unwrap();
                for &m in &members {
                    propose(ranks, waits, m, pattern, last);
                }
            }
            "MPI_Bcast" => {
                let root = root.expect("a root");
                for &m in members.iter().filter(|m| m.0 != root.0) {
                    propose(ranks, waits, m, "late_broadcast", call(root).enter);
                }
            }
            _ => {
                let root = *root.expect("a root");
                let first = members
                    .iter()
                    .filter(|m| m.0 != root.0)
                    .map(|m| call(m).enter)
                    .min();
                propose(ranks, waits, root, "early_reduce", first.unwrap());
            }
        }
    }
}

/// Every call's wait in `ranks`, computed here from the calls alone.
fn computed_waits(ranks: &Ranks) -> Waits {
    let mut waits = Waits::new();
    point_to_point(ranks, &mut waits);
    collectives(ranks, &mut waits);
    waits
}

/// Per (pattern, rank, call site): total wait (ns) and calls that waited.
type Table = BTreeMap<(String, u32, u64), (u64, u64)>;

/// `waits` summed as `conifer waits` lists them.
fn table_of(ranks: &Ranks, waits: &Waits) -> Table {
    let mut table = Table::new();
    for (&(rank, i), w) in waits {
        let key = (w.pattern.to_string(), rank, ranks[rank as usize][i].site);
        let entry = table.entry(key).or_default();
        entry.0 += w.ns as u64;
        entry.1 += 1;
    }
    table
}

/// The table `conifer waits --json` reports.
fn reported_table(w: &Value) -> Table {
    let mut table = Table::new();
    for e in w["waits"].as_array().expect("a list of waits") {
        let key = (
            e["pattern"].as_str().unwrap().to_string(),
            e["rank"].as_u64().unwrap() as u32,
            e["site_id"]["id"]["offset"]
                .as_u64()
                .expect("an address site"),
        );
        let value = (e["time_ns"].as_u64().unwrap(), e["calls"].as_u64().unwrap());
        assert!(
            table.insert(key, value).is_none(),
            "one entry per site: {e}"
        );
    }
    table
}

/// One built-in wait of delays.c: the `n`-th selected call of each waiting rank waits for
/// the `n`-th selected call of each late rank, which computes `delay_ns` before it.
struct Builtin {
    pattern: &'static str,
    waiting: Vec<u32>,
    late: Vec<u32>,
    /// The function of the waiting and of the delayed calls.
    wait_function: &'static str,
    late_function: &'static str,
    /// Only calls with this tag.
    tag: Option<i64>,
    /// Only this range of the selected calls (the barrier phase's barriers).
    range: Option<(usize, usize)>,
    delay_ns: i64,
}

impl Builtin {
    /// The indices of `rank`'s calls of `function` this wait selects.
    fn select(&self, calls: &[Call], function: &str) -> Vec<usize> {
        let (from, to) = self.range.unwrap_or((0, usize::MAX));
        calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.function == function && (self.tag.is_none() || c.tag == self.tag))
            .map(|(i, _)| i)
            .enumerate()
            .filter(|(n, _)| (from..to).contains(n))
            .map(|(_, i)| i)
            .collect()
    }
}

/// delays.c's built-in waits on `ranks` ranks at `percent`.
fn builtins(ranks: u32, percent: u64) -> Vec<Builtin> {
    let ms = |each: i64| each * 1_000_000;
    let last = ranks - 1;
    let others: Vec<u32> = (1..ranks).collect();
    // Barriers of the barrier phase: three phases end in one before it.
    let barriers = Some((3, 3 + reps(20, percent) as usize));
    let builtin =
        |pattern, waiting, late, functions: (&'static str, &'static str), tag, delay| Builtin {
            pattern,
            waiting,
            late,
            wait_function: functions.0,
            late_function: functions.1,
            tag,
            range: None,
            delay_ns: ms(delay),
        };
    vec![
        builtin(
            "late_sender",
            vec![0],
            vec![1],
            ("MPI_Recv", "MPI_Send"),
            Some(2),
            2,
        ),
        builtin(
            "late_receiver",
            vec![0],
            vec![1],
            ("MPI_Ssend", "MPI_Recv"),
            Some(3),
            1,
        ),
        Builtin {
            range: barriers,
            ..builtin(
                "wait_at_barrier",
                (0..last).collect(),
                vec![last],
                ("MPI_Barrier", "MPI_Barrier"),
                None,
                5,
            )
        },
        builtin(
            "wait_at_nxn",
            others.clone(),
            vec![0],
            ("MPI_Allreduce", "MPI_Allreduce"),
            None,
            3,
        ),
        builtin(
            "late_broadcast",
            others.clone(),
            vec![0],
            ("MPI_Bcast", "MPI_Bcast"),
            None,
            2,
        ),
        builtin(
            "early_reduce",
            vec![0],
            others,
            ("MPI_Reduce", "MPI_Reduce"),
            None,
            2,
        ),
    ]
}

/// Checks that every built-in wait whose phase ran as built in, by the trace, is reported on
/// its waiting rank at its waiting call's site. Instance n ran as built in for a waiting rank
/// when every late rank computed at least the delay before its n-th delayed call and the
/// waiting rank entered its n-th waiting call at least half the delay before every late
/// rank's delayed call (so it waited, by the definitions, at least that long).
fn check_builtins(ranks: &Ranks, reported: &Table, nranks: u32, percent: u64) {
    for b in builtins(nranks, percent) {
        // Per late rank, (start of the computation, enter of the delayed call).
        let late: Vec<Vec<(i64, i64)>> = b
            .late
            .iter()
            .map(|&l| {
                let calls = &ranks[l as usize];
                b.select(calls, b.late_function)
                    .iter()
                    .map(|&i| (calls[i - 1].exit, calls[i].enter))
                    .collect()
            })
            .collect();
        for &r in &b.waiting {
            let calls = &ranks[r as usize];
            let waiting = b.select(calls, b.wait_function);
            assert_eq!(
                waiting.len() as u64,
                late[0].len() as u64,
                "{}: instances",
                b.pattern
            );
            let as_built = waiting
                .iter()
                .enumerate()
                .filter(|&(n, &i)| {
                    late.iter().all(|l| {
                        let (computing, delayed) = l[n];
                        delayed - computing >= b.delay_ns
                            && calls[i].enter <= delayed - b.delay_ns / 2
                    })
                })
                .count();
            let site = calls[waiting[0]].site;
            assert!(
                waiting.iter().all(|&i| calls[i].site == site),
                "{}: one call site",
                b.pattern
            );
            let found = reported.get(&(b.pattern.to_string(), r, site)).copied();
            eprintln!(
                "{} on rank {r}: {as_built} of {} instances ran as built in; reported {found:?} \
                 (ns, calls)",
                b.pattern,
                waiting.len()
            );
            if as_built > 0 {
                let (ns, count) =
                    found.unwrap_or_else(|| panic!("{} not found on rank {r}", b.pattern));
                assert!(
                    ns > 0 && count >= as_built as u64,
                    "{} on rank {r}: {ns} ns in {count} calls",
                    b.pattern
                );
            }
        }
    }
}

/// What one traced run of delays gave.
struct Run {
    trace: PathBuf,
    waits: Value,
    ranks: Ranks,
    /// Every call's wait, computed here.
    computed: Waits,
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

/// Traces delays (lossless timing, recorded callers) on `nranks` ranks at `percent` and reads
/// the trace back.
fn run_delays(name: &str, nranks: u32, percent: u64) -> Run {
    let dir = scratch(name);
    let app = apps_dir().join("delays");
    let trace = traced(
        &dir,
        "delays",
        nranks,
        &["--timing", "lossless", "--callsites"],
        &app,
        &[&percent.to_string()],
    );
    let mut ranks: Ranks = vec![Vec::new(); nranks as usize];
    for c in decode_all(&trace) {
        assert_eq!(c["thread"], 0, "delays.c is single-threaded");
        ranks[c["rank"].as_u64().unwrap() as usize].push(Call::from_json(&c));
    }
    let computed = computed_waits(&ranks);
    Run {
        waits: waits_json(&trace),
        trace,
        ranks,
        computed,
    }
}

/// `conifer waits` reports exactly the waits computed here: per (pattern, rank, site) the
/// same time to the nanosecond and the same number of calls, the same per-rank totals, and
/// nothing unmatched.
fn check_against_trace(run: &Run) {
    let computed = table_of(&run.ranks, &run.computed);
    let reported = reported_table(&run.waits);
    let capped = run.computed.values().filter(|w| w.capped).count();
    eprintln!(
        "{} calls waited, {capped} of them until they returned",
        run.computed.len()
    );
    for (key, value) in &computed {
        eprintln!(
            "computed {key:?}: {value:?}, reported {:?}",
            reported.get(key)
        );
    }
    assert_eq!(
        reported, computed,
        "conifer waits (left) against the trace's calls (right)"
    );
    for (rank, totals) in run.waits["per_rank"].as_array().unwrap().iter().enumerate() {
        for pattern in [
            "late_sender",
            "late_receiver",
            "wait_at_barrier",
            "wait_at_nxn",
            "late_broadcast",
            "early_reduce",
        ] {
            let own: u64 = computed
                .iter()
                .filter(|((p, r, _), _)| p == pattern && *r as usize == rank)
                .map(|(_, v)| v.0)
                .sum();
            assert_eq!(totals[pattern].as_u64(), Some(own), "rank {rank} {pattern}");
        }
    }
    for what in ["sends", "receives", "collectives", "other_threads"] {
        assert_eq!(run.waits["unmatched"][what], 0, "unmatched {what}");
    }
    assert_eq!(run.waits["timing"], "lossless");
    assert_eq!(run.waits["ranks"], run.ranks.len());
}

/// Time the critical path spends on `rank` (in `activity`, when given) within `[from, to)`, ns.
fn on_path_within(w: &Value, rank: u32, activity: Option<&str>, (from, to): (i64, i64)) -> i64 {
    w["critical_path"]["segments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["rank"] == rank && activity.is_none_or(|a| s["activity"] == a))
        .map(|s| {
            let a = s["start_ns"].as_i64().unwrap().max(from);
            let b = s["end_ns"].as_i64().unwrap().min(to);
            (b - a).max(0)
        })
        .sum()
}

/// The critical path against the trace's calls: it ends where the last rank entered
/// `MPI_Finalize`, starts at a rank's first call, covers its length once; and it never runs
/// through the waiting part of a call (a wait is charged to its cause), so each (rank,
/// function) has at most the calls' time less their waits on it (a wait that lasted until
/// its call returned aside: the path charges that call whole).
fn check_critical_path(run: &Run) {
    let p = &run.waits["critical_path"];
    assert_eq!(p["segments_truncated"], false);
    let finalize: Vec<i64> = run
        .ranks
        .iter()
        .map(|calls| {
            calls
                .iter()
                .find(|c| c.function == "MPI_Finalize")
                .expect("MPI_Finalize")
                .enter
        })
        .collect();
    let last = *finalize.iter().max().unwrap();
    assert_eq!(p["ends_at_finalize"], true);
    assert_eq!(p["end_ns"], last);
    assert_eq!(finalize[p["end_rank"].as_u64().unwrap() as usize], last);
    let start = p["start_ns"].as_i64().unwrap();
    assert!(
        run.ranks.iter().any(|calls| calls[0].enter == start),
        "the path starts at {start}"
    );
    let length = p["length_ns"].as_i64().unwrap();
    assert_eq!(length, last - start);
    let per_rank: i64 = p["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .sum();
    assert_eq!(per_rank, length);
    let segments: i64 = p["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["end_ns"].as_i64().unwrap() - s["start_ns"].as_i64().unwrap())
        .sum();
    assert_eq!(segments, length);

    // (rank, function) → time inside the calls, their waits (those cut at the return apart).
    let mut calls: BTreeMap<(u32, &str), (i64, i64)> = BTreeMap::new();
    for (rank, rank_calls) in run.ranks.iter().enumerate() {
        for (i, c) in rank_calls.iter().enumerate() {
            let entry = calls.entry((rank as u32, c.function.as_str())).or_default();
            entry.0 += c.exit - c.enter;
            if let Some(w) = run.computed.get(&(rank as u32, i)).filter(|w| !w.capped) {
                entry.1 += w.ns;
            }
        }
    }
    for share in p["shares"].as_array().unwrap() {
        let activity = share["activity"].as_str().unwrap();
        if activity == "computation" {
            continue;
        }
        let rank = share["rank"].as_u64().unwrap() as u32;
        let (inside, waited) = calls[&(rank, activity)];
        let on_path = share["time_ns"].as_i64().unwrap();
        assert!(
            on_path <= inside - waited,
            "rank {rank} {activity}: {on_path} ns on the path, {inside} ns inside, {waited} ns waiting"
        );
    }
}

/// Checks what every `--json` entry holds.
fn check_json_fields(w: &Value, ranks: u32) {
    let entries = w["waits"].as_array().expect("a list of waits");
    assert!(!entries.is_empty());
    for e in entries {
        assert!(e["rank"].as_u64().unwrap() < u64::from(ranks), "{e}");
        assert!(!e["site"].as_str().unwrap().is_empty(), "{e}");
        assert!(e["time_ns"].as_u64().unwrap() > 0, "{e}");
        assert!(e["calls"].as_u64().unwrap() > 0, "{e}");
    }
    assert_eq!(w["per_rank"].as_array().unwrap().len(), ranks as usize);
}

/// Two ranks (both MPIs): every wait against the trace's own calls, the built-in ones found,
/// the JSON fields, the critical path, the text output and the report's section. In the
/// late-sender phase, while rank 0 waits in MPI_Recv, the path is on rank 1.
#[test]
fn built_in_waits_on_two_ranks() {
    // MPICH busy-polls: a quarter of the repetitions.
    let percent = if is_mpich() { 25 } else { 100 };
    let run = run_delays("waits-2", 2, percent);
    check_against_trace(&run);
    check_builtins(&run.ranks, &reported_table(&run.waits), 2, percent);
    check_json_fields(&run.waits, 2);
    check_critical_path(&run);

    // Rank 0's Late Sender waits, computed here: the path is on rank 1 throughout them.
    let mut waiting = 0;
    let mut on_rank1 = 0;
    for (&(rank, i), w) in &run.computed {
        if rank == 0 && w.pattern == "late_sender" && !w.capped {
            let enter = run.ranks[0][i].enter;
            waiting += w.ns;
            on_rank1 += on_path_within(&run.waits, 1, None, (enter, enter + w.ns));
        }
    }
    eprintln!(
        "rank 0 waited {waiting} ns for late senders, the path on rank 1 {on_rank1} ns of it"
    );
    assert!(waiting > 0);
    assert_eq!(on_rank1, waiting);

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
/// deschedule one another for milliseconds, which changes the waits the run had, not how
/// they are computed: the same checks as on two ranks.
#[test]
fn built_in_waits_on_four_ranks() {
    if is_mpich() {
        eprintln!("four oversubscribed ranks are Open MPI's only");
        return;
    }
    let percent = 50;
    let run = run_delays("waits-4", 4, percent);
    check_against_trace(&run);
    check_builtins(&run.ranks, &reported_table(&run.waits), 4, percent);
    check_json_fields(&run.waits, 4);
    check_critical_path(&run);
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
