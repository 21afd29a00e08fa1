//! Communicators that share an id (the parts of one `MPI_Comm_split`, `MPI_UNDEFINED` or not;
//! communicators freed and made again) are told apart by every reader: `tests/apps/commgrid.c`
//! at 4, 9 and 16 ranks. The members `decode --comms` lists are checked against members rebuilt
//! here from the creating calls' own arguments in `decode --json` (each split's colours and
//! keys on every rank, `MPI_Intercomm_merge`'s `high`), and `sim`, both exports and `waits`
//! must pair every message: the simulation finishes, OTF2 and Chrome hold as many messages as
//! the decoded calls send, none drawn backwards, and `waits` leaves nothing unmatched. Phase 5
//! receives with `MPI_ANY_TAG`/`MPI_ANY_SOURCE` and `MPI_STATUS(ES)_IGNORE`: the recorded
//! statuses must name the tags the app sent (5 to 10). Phase 6 cancels a wildcard receive
//! and then sends the rank a message it could have matched, as HPCC does: `sim` stalled on
//! that before readers withdrew cancelled receives.

mod common;

use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// Every call of the trace, by rank, in call order.
fn calls_by_rank(trace: &Path) -> BTreeMap<u64, Vec<Value>> {
    let mut by_rank: BTreeMap<u64, Vec<Value>> = BTreeMap::new();
    for c in decode_all(trace) {
        by_rank
            .entry(c["rank"].as_u64().unwrap())
            .or_default()
            .push(c);
    }
    by_rank
}

fn arg<'a>(call: &'a Value, name: &str) -> &'a str {
    call["args"][name]
        .as_str()
        .unwrap_or_else(|| panic!("no {name} in {call}"))
}

fn int(call: &Value, name: &str) -> i64 {
    arg(call, name)
        .parse()
        .unwrap_or_else(|_| panic!("{name} is no integer in {call}"))
}

/// Every communicator each rank's calls made, with the members rebuilt from the creating
/// calls: ((rank, the name of the new communicator), world ranks by local rank), one per call.
fn rebuilt(by_rank: &BTreeMap<u64, Vec<Value>>) -> Vec<((u64, String), Vec<u64>)> {
    let made = |f: &str| -> BTreeMap<u64, Vec<&Value>> {
        by_rank
            .iter()
            .map(|(&r, calls)| (r, calls.iter().filter(|c| c["function"] == f).collect()))
            .collect()
    };
    let splits = made("MPI_Comm_split");
    let rounds = splits[&0].len();
    assert!(
        splits.values().all(|s| s.len() == rounds),
        "every rank splits alike"
    );
    let mut all = Vec::new();
    // The latest communicator of each name, for the calls made from it.
    let mut out = BTreeMap::new();
    // Members of each rank's k-th split (of MPI_COMM_WORLD in this app): the ranks that got a
    // communicator with the same colour, ordered by key, then world rank.
    for k in 0..rounds {
        let mut parts: BTreeMap<i64, Vec<(i64, u64)>> = BTreeMap::new();
        for (&r, s) in &splits {
            assert_eq!(arg(s[k], "comm"), "MPI_COMM_WORLD");
            if arg(s[k], "newcomm") != "MPI_COMM_NULL" {
                parts
                    .entry(int(s[k], "color"))
                    .or_default()
                    .push((int(s[k], "key"), r));
            }
        }
        for mut part in parts.into_values() {
            part.sort();
            let worlds: Vec<u64> = part.iter().map(|p| p.1).collect();
            for &w in &worlds {
                let name = arg(splits[&w][k], "newcomm").to_string();
                all.push(((w, name.clone()), worlds.clone()));
                out.insert((w, name), worlds.clone());
            }
        }
    }
    // The inter-communicator's local group is its local communicator; the merge orders the
    // group passing high = 0 first.
    let creates = made("MPI_Intercomm_create");
    let merges = made("MPI_Intercomm_merge");
    for (&r, c) in &creates {
        let local = arg(c[0], "local_comm");
        let group = out[&(r, local.to_string())].clone();
        let name = arg(c[0], "newintercomm").to_string();
        all.push(((r, name.clone()), group.clone()));
        out.insert((r, name), group);
    }
    let mut merged: Vec<(i64, u64, u64)> = Vec::new();
    for (&r, m) in &merges {
        let inter = arg(m[0], "intercomm").to_string();
        let local = out[&(r, inter)].iter().position(|&w| w == r).unwrap() as u64;
        merged.push((int(m[0], "high"), local, r));
    }
    merged.sort();
    let order: Vec<u64> = merged.iter().map(|m| m.2).collect();
    for (&r, m) in &merges {
        all.push(((r, arg(m[0], "newintracomm").to_string()), order.clone()));
    }
    all
}

/// `decode --comms --json`: id → the member lists of the communicators with that id.
fn listed(trace: &Path) -> BTreeMap<String, Vec<Vec<u64>>> {
    let out = run_ok(
        Command::new(conifer())
            .args(["decode", "--comms", "--json"])
            .arg(trace),
    );
    let mut by_id: BTreeMap<String, Vec<Vec<u64>>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let c: Value = serde_json::from_str(line).expect("one JSON object per line");
        let members = c["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_u64().expect("every local rank's holder is known"))
            .collect();
        by_id
            .entry(c["id"].as_str().unwrap().to_string())
            .or_default()
            .push(members);
    }
    by_id
}

/// Messages the decoded calls send: one per `MPI_Send` and `MPI_Sendrecv`.
fn sends(by_rank: &BTreeMap<u64, Vec<Value>>) -> usize {
    by_rank
        .values()
        .flatten()
        .filter(|c| matches!(c["function"].as_str(), Some("MPI_Send" | "MPI_Sendrecv")))
        .count()
}

/// (send time, receive time) of every message of an OTF2 archive, as Debian's `otf2-print`
/// (the OTF2 library's own reader) lists the events: sends and receives matched in order per
/// (sender, receiver, communicator, tag), peers by the location `otf2-print` resolves them to.
/// (Debian's OTF2 Python bindings cannot read inter-communicator definitions.)
fn otf2_print_messages(anchor: &Path) -> Vec<(u64, u64)> {
    let out = run_ok(Command::new("otf2-print").arg(anchor));
    type Key = (u64, u64, String, String);
    let mut sends: BTreeMap<Key, std::collections::VecDeque<u64>> = BTreeMap::new();
    let mut receives: Vec<(Key, u64)> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut words = line.split_whitespace();
        let (Some(kind), Some(location), Some(time)) = (words.next(), words.next(), words.next())
        else {
            continue;
        };
        let send = matches!(kind, "MPI_SEND" | "MPI_ISEND");
        if !send && !matches!(kind, "MPI_RECV" | "MPI_IRECV") {
            continue;
        }
        let field = |name: &str| -> String {
            let rest = &line[line
                .find(name)
                .unwrap_or_else(|| panic!("{name} in {line}"))..];
            rest[name.len()..]
                .split(", ")
                .next()
                .unwrap()
                .trim()
                .to_string()
        };
        let peer = field(if send { "Receiver: " } else { "Sender: " });
        let peer: u64 = peer[peer.rfind('<').unwrap() + 1..peer.rfind('>').unwrap()]
            .parse()
            .unwrap();
        let (me, time): (u64, u64) = (location.parse().unwrap(), time.parse().unwrap());
        let (comm, tag) = (field("Communicator: "), field("Tag: "));
        if send {
            sends
                .entry((me, peer, comm, tag))
                .or_default()
                .push_back(time);
        } else {
            receives.push(((peer, me, comm, tag), time));
        }
    }
    receives.sort_by_key(|r| r.1);
    receives
        .into_iter()
        .filter_map(|(key, r)| Some((sends.get_mut(&key)?.pop_front()?, r)))
        .collect()
}

/// (flow start, flow end) times of the Chrome export of `trace`, written into `dir`.
fn chrome_flows(trace: &Path, dir: &Path) -> Vec<(f64, f64)> {
    let out = dir.join(format!(
        "{}.json",
        trace.file_stem().unwrap().to_string_lossy()
    ));
    export("chrome", trace, &out);
    chrome_flow_times(&out)
}

fn check(ranks: u32) {
    let dir = scratch(&format!("comm-identity-{ranks}"));
    let app = apps_dir().join("commgrid");
    let name = format!("commgrid{ranks}");
    let (trace, out) = traced_run(&dir, &name, ranks, &["--timing", "lossless"], &app, &["3"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.matches("CHECK ok").count(), ranks as usize, "{said}");
    let by_rank = calls_by_rank(&trace);

    // Members as made.
    let expected = rebuilt(&by_rank);
    let listed = listed(&trace);
    for ((rank, id), members) in &expected {
        let holding: Vec<&Vec<u64>> = listed
            .get(id)
            .unwrap_or_else(|| panic!("{ranks} ranks: {id} not listed"))
            .iter()
            .filter(|m| m.contains(rank))
            .collect();
        assert_eq!(
            holding,
            vec![members],
            "{ranks} ranks: the {id} of rank {rank}"
        );
    }
    // Ids are shared across ranks but every listed communicator is one that was made.
    let made: BTreeSet<(&String, &Vec<u64>)> =
        expected.iter().map(|((_, id), m)| (id, m)).collect();
    for (id, lists) in listed.iter().filter(|(id, _)| *id != "MPI_COMM_WORLD") {
        for m in lists {
            assert!(
                made.contains(&(id, m)),
                "{ranks} ranks: {id} {m:?} never made"
            );
        }
    }

    // Statuses the program ignored, recorded: the tags rank 0 sent, in order.
    let tags: Vec<String> = by_rank[&1]
        .iter()
        .take_while(|c| c["function"] != "MPI_Cancel")
        .filter(|c| {
            matches!(
                c["function"].as_str(),
                Some("MPI_Recv" | "MPI_Wait" | "MPI_Waitall")
            )
        })
        .filter_map(|c| {
            c["args"]
                .get("status")
                .or(c["args"].get("array_of_statuses"))
        })
        .filter_map(Value::as_str)
        .filter(|s| s.contains("src=0") && !s.contains("tag=30"))
        .map(str::to_string)
        .collect();
    let seen: Vec<u32> = tags
        .iter()
        .flat_map(|s| s.split("tag=").skip(1))
        .map(|t| t.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(seen, vec![5, 6, 7, 8, 9, 10], "{ranks} ranks: {tags:?}");

    // Every reader pairs every message.
    let sim = Command::new("timeout")
        .arg("300")
        .arg(conifer())
        .args(["sim", "--json"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        sim.status.success(),
        "{ranks} ranks: sim: {}",
        String::from_utf8_lossy(&sim.stderr)
    );
    let waits: Value = serde_json::from_slice(
        &run_ok(
            Command::new(conifer())
                .args(["waits", "--json"])
                .arg(&trace),
        )
        .stdout,
    )
    .unwrap();
    for what in ["sends", "receives", "collectives"] {
        assert_eq!(
            waits["unmatched"][what], 0,
            "{ranks} ranks: {what}: {waits}"
        );
    }
    let messages = sends(&by_rank);
    let anchor = dir.join(format!("{name}-otf2"));
    let exported = run_ok(
        Command::new(conifer())
            .args(["export", "otf2"])
            .arg(&trace)
            .arg("-o")
            .arg(&anchor),
    );
    let note = String::from_utf8_lossy(&exported.stderr);
    assert!(!note.contains("left out"), "{ranks} ranks: {note}");
    let otf2: Vec<(f64, f64)> = otf2_print_messages(&anchor.join("traces.otf2"))
        .into_iter()
        .map(|(s, r)| (s as f64, r as f64))
        .collect();
    for (what, pairs) in [("OTF2", otf2), ("Chrome", chrome_flows(&trace, &dir))] {
        assert_eq!(pairs.len(), messages, "{ranks} ranks: {what} messages");
        let backwards = pairs.iter().filter(|(s, r)| r < s).count();
        assert_eq!(
            backwards, 0,
            "{ranks} ranks: {what} messages drawn backwards"
        );
    }
}

#[test]
fn four_ranks() {
    check(4);
}

#[test]
fn nine_ranks() {
    if is_mpich() {
        return; // MPICH busy-polls: oversubscribed it is 100x slower.
    }
    check(9);
}

#[test]
fn sixteen_ranks() {
    if is_mpich() {
        return;
    }
    check(16);
}
