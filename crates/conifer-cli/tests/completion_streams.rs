//! Completion order as data: what `MPI_Waitany` and `MPI_Testsome` return (and the request
//! arrays they are passed, whose null slots follow from earlier returns) goes to per-call-site
//! value streams, not into the signature (`conifer_trace::completion`). `tests/apps/waitany.c`
//! completes, each iteration, one receive from every peer with `MPI_Waitany` and another with
//! `MPI_Testsome` from one call site each: its signatures must not grow with iterations, and
//! decoding must give back calls that obey MPI's rules for those outputs and the app's own
//! tallies.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Traces `waitany` on `ranks` ranks for `iterations` iterations, with its raw record, and
/// checks the trace against it.
fn waitany(name: &str, ranks: u32, iterations: u32) -> (PathBuf, std::process::Output) {
    let dir = scratch(&format!("completion-{name}"));
    let program = apps_dir().join("waitany");
    let (trace, out) = traced_run(
        &dir,
        name,
        ranks,
        &["--raw"],
        &program,
        &[&iterations.to_string()],
    );
    let verify = run_ok(
        std::process::Command::new(conifer())
            .arg("verify")
            .arg(&trace),
    );
    let said = String::from_utf8_lossy(&verify.stdout);
    assert!(said.starts_with("identical: "), "{name}: {said}");
    (trace, out)
}

/// `stats --json`'s signature count of `function`.
fn signatures_of(stats: &Value, function: &str) -> u64 {
    stats["signatures_by_function"][function]
        .as_u64()
        .unwrap_or_else(|| panic!("no {function} in {}", stats["signatures_by_function"]))
}

/// The signature table does not grow with iterations: one `MPI_Waitany` call site, with the
/// same count on every rank, is one signature whatever completed (before, each order of
/// completions was a signature of its own), and one `MPI_Testsome` call site at most two:
/// its polls that found nothing, and the others.
#[test]
fn completion_calls_are_one_signature_per_call_site() {
    let ranks = if is_mpich() { 4 } else { 8 };
    let (short, _) = waitany("short", ranks, 5);
    let (long, _) = waitany("long", ranks, 40);
    let (short, long) = (stats_json(&short), stats_json(&long));
    for stats in [&short, &long] {
        assert_eq!(signatures_of(stats, "MPI_Waitany"), 1);
        assert!((1..=2).contains(&signatures_of(stats, "MPI_Testsome")));
    }
    assert_eq!(
        short["signatures"], long["signatures"],
        "8 times the iterations, the same signatures"
    );
}

/// A decoded argument as text.
fn arg<'a>(call: &'a Value, name: &str) -> &'a str {
    call["args"][name]
        .as_str()
        .unwrap_or_else(|| panic!("no {name} in {call}"))
}

/// The items of an array argument as decoded (`[a,b,c]`; statuses hold commas of their own,
/// so only arrays of plain values are split).
fn items(text: &str) -> Vec<String> {
    let inner = text.trim_start_matches('[').trim_end_matches(']');
    if inner.is_empty() {
        return Vec::new();
    }
    inner.split(',').map(str::to_string).collect()
}

/// The source of a decoded status (`{src=3,tag=0,...}`).
fn source(status: &str) -> i64 {
    status
        .split(['{', ',', '}'])
        .find_map(|w| w.strip_prefix("src="))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no source in {status}"))
}

/// Decoding gives back what MPI's rules and the app say: each round of `MPI_Waitany` calls
/// completes every peer's receive once, passing the array with exactly the slots completed
/// earlier in the round set to `MPI_REQUEST_NULL`, and the status of each comes from the peer
/// at that index (`peer[i] = i < rank ? i : i + 1`); `MPI_Testsome`'s indices and statuses
/// agree the same way; and the completions add up to the totals the app printed.
#[test]
fn decoded_completions_follow_mpi_and_the_app() {
    let ranks = 4;
    let iterations = 10;
    let (trace, out) = waitany("decoded", ranks, iterations);
    let peers = u64::from(ranks - 1);
    let results = lines_with(&out.stdout, "RESULT ");
    assert_eq!(results.len(), ranks as usize, "{results:?}");
    let calls = decode_all(&trace);
    for rank in 0..ranks {
        let peer = |i: i64| if i < i64::from(rank) { i } else { i + 1 };
        let mine = calls.iter().filter(|c| c["rank"] == rank);
        let (mut waitany, mut testsome) = (0u64, 0u64);
        let mut done: BTreeSet<usize> = BTreeSet::new();
        for call in mine {
            match call["function"].as_str().unwrap() {
                "MPI_Waitany" => {
                    let requests = items(arg(call, "array_of_requests"));
                    let null: BTreeSet<usize> = (0..requests.len())
                        .filter(|&i| requests[i] == "MPI_REQUEST_NULL")
                        .collect();
                    if done.len() == requests.len() {
                        done.clear();
                    }
                    assert_eq!(null, done, "rank {rank}: {call}");
                    let index: usize = arg(call, "index").parse().unwrap();
                    assert!(!done.contains(&index), "rank {rank}: {call}");
                    assert_eq!(
                        source(arg(call, "status")),
                        peer(index as i64),
                        "rank {rank}: {call}"
                    );
                    done.insert(index);
                    waitany += 1;
                }
                "MPI_Testsome" => {
                    let n: u64 = arg(call, "outcount").parse().unwrap();
                    let indices = items(arg(call, "array_of_indices"));
                    assert_eq!(indices.len() as u64, n, "rank {rank}: {call}");
                    let statuses = arg(call, "array_of_statuses");
                    let sources: Vec<i64> = statuses
                        .split("{src=")
                        .skip(1)
                        .map(|s| s[..s.find(',').unwrap()].parse().unwrap())
                        .collect();
                    let expected: Vec<i64> =
                        indices.iter().map(|i| peer(i.parse().unwrap())).collect();
                    assert_eq!(sources, expected, "rank {rank}: {call}");
                    testsome += n;
                }
                _ => {}
            }
        }
        let result = results
            .iter()
            .find(|l| l.starts_with(&format!("RESULT rank={rank} ")))
            .unwrap();
        assert_eq!(waitany, u64::from(iterations) * peers);
        assert_eq!(
            waitany,
            field_value(result, "waitany_completions"),
            "{result}"
        );
        assert_eq!(
            testsome,
            field_value(result, "testsome_completions"),
            "{result}"
        );
    }
}
