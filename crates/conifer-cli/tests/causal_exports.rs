//! Exports of traces with the default (aggregate) timing never draw a message backwards: on
//! every bundled test app (and the wait-pattern apps), the Chrome JSON's flows and
//! `otf2-print`'s `MPI_SEND`/`MPI_RECV` events, each matched here FIFO per (sender,
//! receiver, communicator, tag), end no earlier than they start plus the latency the exporter
//! says it used; every member of each `MPI_COMM_WORLD` collective leaves it after the last
//! member entered; and both outputs say the times are reconstructed and how.

mod common;

use common::*;
use serde_json::Value as Json;
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Command;

/// The latency the exports state (in their description of the timestamps), ns.
fn stated_latency_ns(description: &str) -> u64 {
    let (_, rest) = description
        .split_once("no earlier than its send started plus ")
        .unwrap_or_else(|| panic!("the latency is stated: {description}"));
    rest.split(" ns").next().unwrap().parse().unwrap()
}

/// The apps: every bundled app plus those built for the wait patterns and bigger runs.
fn apps() -> Vec<(&'static str, u32, Vec<&'static str>)> {
    let mut apps = bundled_apps();
    apps.extend([
        ("delays", 2, vec!["10"]),
        ("sendwaits", 2, vec!["10"]),
        ("jacobi", 4, vec![]),
        ("irregular", 4, vec![]),
        ("phases", 4, vec![]),
        ("msgsizes", 4, vec![]),
        ("npbstyle", 4, vec![]),
        ("commgrid", 4, vec![]),
    ]);
    apps.retain(|a| !(is_mpich() && a.1 > 4));
    apps
}

/// Blocking collectives whose members all leave after the last one entered.
const COLLECTIVES: &[&str] = &[
    "MPI_Barrier",
    "MPI_Allreduce",
    "MPI_Alltoall",
    "MPI_Alltoallv",
    "MPI_Allgather",
    "MPI_Allgatherv",
    "MPI_Bcast",
    "MPI_Reduce",
    "MPI_Gather",
    "MPI_Scatter",
];

/// Checks the Chrome JSON of `trace`: (flows, backward flows, collective members leaving
/// before the last entered).
fn chrome(app: &str, trace: &Path, ranks: u32) -> (usize, usize, usize) {
    let out = trace.with_extension("json");
    let run = run_ok(
        Command::new(conifer())
            .args(["export", "chrome"])
            .arg(trace)
            .arg("-o")
            .arg(&out),
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("no per-call timing") && stderr.contains("reconstructed"),
        "{app}: the export says its times are reconstructed: {stderr}"
    );
    let doc: Json = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let described = doc["otherData"]["timestamps"].as_str().unwrap();
    assert!(described.starts_with("reconstructed"), "{described}");
    let latency = stated_latency_ns(described) as f64 / 1e3;
    let mut ends: BTreeMap<u64, (Option<f64>, Option<f64>)> = BTreeMap::new();
    // Per rank, its MPI_COMM_WORLD collectives in order: (name, enter, leave), µs.
    let mut colls: Vec<Vec<(String, f64, f64)>> = vec![Vec::new(); ranks as usize];
    for e in doc["traceEvents"].as_array().unwrap() {
        let ts = e["ts"].as_f64().unwrap_or(0.0);
        match e["ph"].as_str().unwrap() {
            "s" => ends.entry(e["id"].as_u64().unwrap()).or_default().0 = Some(ts),
            "f" => ends.entry(e["id"].as_u64().unwrap()).or_default().1 = Some(ts),
            "X" => {
                let name = e["name"].as_str().unwrap();
                if COLLECTIVES.contains(&name) && e["args"]["comm"] == "MPI_COMM_WORLD" {
                    let pid = e["pid"].as_u64().unwrap() as usize;
                    let dur = e["dur"].as_f64().unwrap();
                    colls[pid].push((name.to_string(), ts, ts + dur));
                }
            }
            _ => {}
        }
    }
    let flows = ends.len();
    // A flow's end sits 1 ns inside its receive: it is no earlier than start + latency.
    let backward = ends
        .values()
        .filter(|(s, f)| f.unwrap() + 1e-6 < s.unwrap() + latency)
        .count();
    let mut early = 0;
    let n = colls.iter().map(Vec::len).min().unwrap_or(0);
    for i in 0..n {
        let members: Vec<&(String, f64, f64)> = colls.iter().map(|c| &c[i]).collect();
        assert!(
            members.iter().all(|m| m.0 == members[0].0),
            "{app}: world collective {i}: {members:?}"
        );
        let last_enter = members.iter().map(|m| m.1).fold(f64::MIN, f64::max);
        early += members.iter().filter(|m| m.2 + 1e-6 < last_enter).count();
    }
    (flows, backward, early)
}

/// `otf2-print`'s `MPI_SEND`s (Isends too) and `MPI_RECV`s (Irecvs too) of the OTF2 export
/// of `trace`, per (sender, receiver, communicator, tag) with sender and receiver as ranks
/// (a location's low 32 bits), the n-th earliest send paired with the n-th earliest receive
/// (when any pairing has every receive after its send, this one does; it is MPI's own
/// order within one thread): (messages, backward).
fn otf2(app: &str, trace: &Path) -> (usize, usize) {
    let dir = trace.with_extension("otf2");
    let _ = std::fs::remove_dir_all(&dir);
    run_ok(
        Command::new(conifer())
            .args(["export", "otf2"])
            .arg(trace)
            .arg("-o")
            .arg(&dir),
    );
    let out = run_ok(Command::new("otf2-print").arg(dir.join("traces.otf2")));
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |attrs: &str, key: &str| -> String {
        attrs
            .split(&format!("{key}: "))
            .nth(1)
            .and_then(|r| r.split([',', ' ']).next())
            .unwrap_or("")
            .to_string()
    };
    // The peer's location, as otf2-print names it: `Receiver: 1 ("rank 3 thread 0" <3>)`.
    let peer = |attrs: &str, key: &str| -> String {
        attrs
            .split(&format!("{key}: "))
            .nth(1)
            .and_then(|r| r.split_once('<'))
            .and_then(|(_, r)| r.split_once('>'))
            .and_then(|(l, _)| l.parse::<u64>().ok())
            .map_or_else(String::new, |l| (l & 0xffff_ffff).to_string())
    };
    let rank_of = |location: &str| (location.parse::<u64>().unwrap() & 0xffff_ffff).to_string();
    type Key = (String, String, String, String);
    let mut sends: BTreeMap<Key, VecDeque<u64>> = BTreeMap::new();
    let mut recvs: BTreeMap<Key, VecDeque<u64>> = BTreeMap::new();
    for line in text.lines() {
        let mut w = line.split_whitespace();
        let (Some(event), Some(location), Some(time)) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        let Ok(time) = time.parse::<u64>() else {
            continue;
        };
        let attrs: String = w.collect::<Vec<_>>().join(" ");
        let comm = field(&attrs, "Communicator");
        let tag = field(&attrs, "Tag");
        match event {
            "MPI_SEND" | "MPI_ISEND" => sends
                .entry((rank_of(location), peer(&attrs, "Receiver"), comm, tag))
                .or_default()
                .push_back(time),
            "MPI_RECV" | "MPI_IRECV" => recvs
                .entry((peer(&attrs, "Sender"), rank_of(location), comm, tag))
                .or_default()
                .push_back(time),
            _ => {}
        }
    }
    let (mut messages, mut backward) = (0, 0);
    for (key, r) in &mut recvs {
        let s = sends
            .get_mut(key)
            .unwrap_or_else(|| panic!("{app}: receives without sends {key:?}"));
        s.make_contiguous().sort_unstable();
        r.make_contiguous().sort_unstable();
        for (sent, received) in s.iter().zip(r.iter()) {
            messages += 1;
            backward += usize::from(received < sent);
        }
    }
    (messages, backward)
}

#[test]
fn default_timing_exports_draw_no_message_backwards_on_any_app() {
    let has_otf2_print = Command::new("otf2-print").arg("--version").output().is_ok();
    let (mut all_flows, mut all_messages) = (0, 0);
    for (app, ranks, args) in apps() {
        let dir = scratch(&format!("causal-{app}"));
        let trace = traced(&dir, app, ranks, &[], &apps_dir().join(app), &args);
        let (flows, backward, early) = chrome(app, &trace, ranks);
        eprintln!("{app}: chrome {flows} flows, {backward} backward, {early} early leaves");
        assert_eq!(backward, 0, "{app}: Chrome flows drawn backwards");
        assert_eq!(
            early, 0,
            "{app}: collective members leaving before the last entered"
        );
        all_flows += flows;
        if has_otf2_print {
            let (messages, backward) = otf2(app, &trace);
            eprintln!("{app}: otf2 {messages} messages, {backward} backward");
            assert_eq!(backward, 0, "{app}: OTF2 messages received before sent");
            all_messages += messages;
        }
    }
    assert!(all_flows > 1000, "{all_flows} flows checked");
    assert!(!has_otf2_print || all_messages > 1000);
}
