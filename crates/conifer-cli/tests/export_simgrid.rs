//! `conifer export simgrid` on traces of the test apps, replayed by SimGrid's SMPI
//! (`smpirun -replay`):
//! - the replay ends without error (no deadlock, every line parsed) and reports a simulated
//!   time;
//! - rank by rank, the files hold as many actions of each kind as the traced calls imply,
//!   derived here from `conifer decode --json` by MPI's rules (not from the exporter);
//! - the bytes of the sends equal the calls' counts times their datatypes' sizes;
//! - SMPI's log of the actions it replayed (`--log=smpi_replay.thres:verbose`) counts the
//!   same actions as the files.
//!
//! Skipped, saying why, when `smpirun` is not installed.

mod common;

use common::*;
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Ranks of every run (butterfly and cg need a power of two / a square).
const RANKS: u32 = 4;

/// Actions per (rank, action name).
type Counts = BTreeMap<(u32, String), u64>;

/// True when SimGrid's `smpirun` is on the PATH (else prints why the test is skipped).
fn have_smpirun() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("smpirun").is_file()));
    if !found {
        eprintln!("skipped: smpirun not found (SimGrid's SMPI: apt-get install libsimgrid-dev)");
    }
    found
}

/// Traces `app` (10 iterations) on [`RANKS`] ranks in `dir`.
fn trace(app: &str, dir: &Path) -> PathBuf {
    traced(dir, app, RANKS, &[], &apps_dir().join(app), &["10"])
}

/// A 16-node cluster (1 Gflop/s hosts, 10 GB/s links, 1 µs latency) and a hostfile naming
/// its first [`RANKS`] nodes.
fn platform(dir: &Path) -> (PathBuf, PathBuf) {
    let xml = dir.join("platform.xml");
    std::fs::write(
        &xml,
        r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" suffix="" radical="0-15" speed="1Gf"
           bw="10GBps" lat="1us" bb_bw="40GBps" bb_lat="1us"/>
</platform>
"#,
    )
    .unwrap();
    let hosts = dir.join("hostfile");
    let names: Vec<String> = (0..RANKS).map(|r| format!("node-{r}\n")).collect();
    std::fs::write(&hosts, names.concat()).unwrap();
    (xml, hosts)
}

/// Actions and bytes sent (`send` and `isend` sizes) per rank in the exported files.
fn file_counts(dir: &Path) -> (Counts, BTreeMap<u32, u64>) {
    let list = std::fs::read_to_string(dir.join("traces.txt")).unwrap();
    let files: Vec<&str> = list.lines().collect();
    assert_eq!(files.len(), RANKS as usize, "one file per rank in {list}");
    let mut counts = Counts::new();
    let mut sent = BTreeMap::new();
    for (rank, file) in files.iter().enumerate() {
        let rank = rank as u32;
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            text.starts_with(&format!("{rank} init\n")),
            "{file} starts with init"
        );
        for line in text.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(fields[0], rank.to_string(), "{file}: {line}");
            *counts.entry((rank, fields[1].to_string())).or_default() += 1;
            if matches!(fields[1], "send" | "isend") {
                *sent.entry(rank).or_default() += fields[4].parse::<u64>().unwrap();
            }
        }
    }
    (counts, sent)
}

/// Actions SMPI logged replaying, per rank (it logs every action but `init` and `finalize`).
fn replayed_counts(log: &str) -> Counts {
    let mut counts = Counts::new();
    for line in log.lines() {
        let Some((_, rest)) = line.split_once("[smpi_replay/VERBOSE] ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let rank = fields[0].parse().unwrap();
        *counts.entry((rank, fields[1].to_string())).or_default() += 1;
    }
    counts
}

/// Bytes of one element of a predefined datatype the apps send.
fn type_size(name: &str) -> u64 {
    match name {
        "MPI_INT" | "MPI_FLOAT" | "MPI_INTEGER" => 4,
        "MPI_DOUBLE" | "MPI_LONG_LONG" | "MPI_LONG_LONG_INT" | "MPI_LONG" => 8,
        "MPI_BYTE" | "MPI_CHAR" => 1,
        other => panic!("datatype {other} not in the test's table"),
    }
}

/// The actions the traced calls imply, and the bytes each rank sends, by MPI's rules:
/// operations with `MPI_PROC_NULL` do nothing, `Sendrecv` is a send and a receive both
/// completed in the call, a started persistent request is a non-blocking operation, each
/// completed request is a `wait` except under a `Waitall` (which, in these apps, completes
/// every request outstanding), collectives on `MPI_COMM_WORLD` are one action each.
fn expected(calls: &[Json]) -> (Counts, BTreeMap<u32, u64>) {
    let mut counts = Counts::new();
    let mut sent: BTreeMap<u32, u64> = BTreeMap::new();
    // Per rank: request handle → (is a send, peer is real, bytes) for persistent requests,
    // and handles of posted requests with a real peer.
    let mut persistent: HashMap<(u32, String), (bool, bool, u64)> = HashMap::new();
    let mut real: HashMap<(u32, String), bool> = HashMap::new();
    for c in calls {
        let rank = c["rank"].as_u64().unwrap() as u32;
        let f = c["function"].as_str().unwrap();
        let arg = |k: &str| c["args"][k].as_str().unwrap_or("").to_string();
        let int = |k: &str| arg(k).parse::<i64>().unwrap_or(-1);
        let bytes = |count: &str, ty: &str| int(count) as u64 * type_size(&arg(ty));
        let mut add = |action: &str, n: u64| {
            if n > 0 {
                *counts.entry((rank, action.to_string())).or_default() += n;
            }
        };
        let null = |k: &str| arg(k) == "MPI_PROC_NULL";
        match f {
            "MPI_Init" | "MPI_Init_thread" => add("init", 1),
            "MPI_Finalize" => add("finalize", 1),
            "MPI_Comm_size" => add("comm_size", 1),
            "MPI_Send" | "MPI_Ssend" | "MPI_Bsend" | "MPI_Rsend" if !null("dest") => {
                add("send", 1);
                *sent.entry(rank).or_default() += bytes("count", "datatype");
            }
            "MPI_Recv" if !null("source") => add("recv", 1),
            "MPI_Isend" | "MPI_Irecv" => {
                let peer = if f == "MPI_Isend" { "dest" } else { "source" };
                real.insert((rank, arg("request")), !null(peer));
                if !null(peer) {
                    add(if f == "MPI_Isend" { "isend" } else { "irecv" }, 1);
                    if f == "MPI_Isend" {
                        *sent.entry(rank).or_default() += bytes("count", "datatype");
                    }
                }
            }
            "MPI_Sendrecv" => match (null("dest"), null("source")) {
                (false, false) => {
                    add("isend", 1);
                    add("recv", 1);
                    add("wait", 1);
                    *sent.entry(rank).or_default() += bytes("sendcount", "sendtype");
                }
                (false, true) => {
                    add("send", 1);
                    *sent.entry(rank).or_default() += bytes("sendcount", "sendtype");
                }
                (true, false) => add("recv", 1),
                (true, true) => {}
            },
            "MPI_Send_init" | "MPI_Recv_init" => {
                let send = f == "MPI_Send_init";
                let peer_real = !null(if send { "dest" } else { "source" });
                let b = bytes("count", "datatype");
                persistent.insert((rank, arg("request")), (send, peer_real, b));
            }
            "MPI_Startall" => {
                let list = arg("array_of_requests");
                for h in list.trim_matches(['[', ']']).split(',') {
                    let (send, peer_real, b) = persistent[&(rank, h.to_string())];
                    real.insert((rank, h.to_string()), peer_real);
                    if peer_real {
                        add(if send { "isend" } else { "irecv" }, 1);
                        if send {
                            *sent.entry(rank).or_default() += b;
                        }
                    }
                }
            }
            "MPI_Wait" => {
                let h = arg("request");
                add(
                    "wait",
                    u64::from(real.get(&(rank, h)).copied().unwrap_or(false)),
                );
            }
            "MPI_Waitany" => add("wait", u64::from(int("index") >= 0)),
            "MPI_Testsome" | "MPI_Waitsome" => add("wait", int("outcount").max(0) as u64),
            "MPI_Waitall" => add("waitall", 1),
            "MPI_Barrier" | "MPI_Bcast" | "MPI_Reduce" | "MPI_Allreduce" | "MPI_Gather"
            | "MPI_Scatter" | "MPI_Allgather" | "MPI_Alltoall" | "MPI_Alltoallv"
                if arg("comm") == "MPI_COMM_WORLD" =>
            {
                add(&f["MPI_".len()..].to_lowercase(), 1);
            }
            _ => {}
        }
    }
    (counts, sent)
}

/// Traces `app`, exports it, replays it with `smpirun` and checks the counts.
fn replay(app: &str) {
    if !have_smpirun() {
        return;
    }
    let dir = scratch(&format!("export-simgrid-{app}"));
    let trace = trace(app, &dir);
    let out = dir.join("simgrid");
    let export = run_ok(
        Command::new(conifer())
            .args(["export", "simgrid"])
            .arg(&trace)
            .arg("-o")
            .arg(&out),
    );
    eprintln!("{}", String::from_utf8_lossy(&export.stderr));
    let (xml, hosts) = platform(&dir);
    let replay = run_ok(
        Command::new("timeout")
            .arg("300")
            .arg("smpirun")
            .args(["-np", &RANKS.to_string(), "-platform"])
            .arg(&xml)
            .arg("-hostfile")
            .arg(&hosts)
            .arg("-replay")
            .arg(out.join("traces.txt"))
            .arg("--log=smpi_replay.thres:verbose")
            .current_dir(&dir),
    );
    let log = String::from_utf8_lossy(&replay.stderr).to_string()
        + &String::from_utf8_lossy(&replay.stdout);
    let time: f64 = log
        .lines()
        .find_map(|l| l.split_once("Simulation time ").map(|(_, t)| t.trim()))
        .unwrap_or_else(|| panic!("{app}: no simulated time in the replay's output:\n{log}"))
        .parse()
        .unwrap();
    eprintln!("{app}: SMPI simulated time {time} s");
    assert!(time > 0.0, "{app}: simulated time {time}");

    let (files, sent) = file_counts(&out);
    let (want, want_sent) = expected(&decode_all(&trace));
    let without = |c: &Counts, skip: &[&str]| -> Counts {
        c.iter()
            .filter(|((_, a), _)| !skip.contains(&a.as_str()))
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    };
    // Computation between calls depends on timing, not on the calls.
    assert_eq!(
        without(&files, &["compute"]),
        want,
        "{app}: actions per rank"
    );
    assert_eq!(sent, want_sent, "{app}: bytes sent per rank");
    assert_eq!(
        replayed_counts(&log),
        without(&files, &["init", "finalize"]),
        "{app}: actions SMPI replayed against the files"
    );
}

#[test]
fn ring() {
    replay("ring");
}

#[test]
fn stencil2d() {
    replay("stencil2d");
}

#[test]
fn waitany() {
    replay("waitany");
}

#[test]
fn persistent() {
    replay("persistent");
}

#[test]
fn cg() {
    replay("cg");
}

#[test]
fn mg() {
    replay("mg");
}

#[test]
fn reduce0() {
    replay("reduce0");
}

#[test]
fn butterfly() {
    replay("butterfly");
}
