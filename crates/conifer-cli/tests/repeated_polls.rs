//! A poll that repeats the thread's previous call and again finds nothing is appended as that
//! call without being encoded (`record/poll_repeat.rs`). `tests/memo/polls.c` polls with
//! `MPI_Testany`, `MPI_Test`, `MPI_Testall` and `MPI_Iprobe` from three call sites a round,
//! frees a block MPI has seen between two of them, and prints how many quiet polls it made
//! after releasing its partner. Every call the trace holds is compared with what the program's
//! protocol and its printout say it made; the number of polls the recorder repeated is derived
//! by hand from the same protocol, and is 0 with the memo off (`CONIFER_INPUT_MEMO=0`).

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Rounds of `polls.c`; rounds below `ROUNDS / 2` poll on rank 0, the others on rank 1.
const ROUNDS: usize = 8;
/// Quiet polls each of a round's first two loops makes.
const FIRST: usize = 100;

/// The poll function of round `round` (`polls.c`'s kind `round % 4`).
fn poll_function(round: usize) -> &'static str {
    ["MPI_Testany", "MPI_Test", "MPI_Testall", "MPI_Iprobe"][round % 4]
}

fn poller(round: usize) -> u64 {
    u64::from(round >= ROUNDS / 2)
}

/// One call as compared: its function, and for a poll whether its flag was set.
fn token(call: &Value) -> String {
    let function = call["function"].as_str().unwrap_or_default();
    match call["args"]["flag"].as_str() {
        Some(flag) => format!("{function}:{flag}"),
        None => function.to_string(),
    }
}

/// The calls rank `rank` makes by `polls.c`'s protocol, given each round's quiet polls after
/// the go message.
fn expected_tokens(rank: u64, quiet_after_go: &[usize]) -> Vec<String> {
    let mut calls = vec!["MPI_Init".to_string(), "MPI_Comm_rank".to_string()];
    for (round, &quiet) in quiet_after_go.iter().enumerate() {
        let function = poll_function(round);
        let quiet_poll = format!("{function}:0");
        if rank == poller(round) {
            if function != "MPI_Iprobe" {
                calls.push("MPI_Irecv".into());
            }
            if function == "MPI_Test" {
                calls.extend(["MPI_Send".into(), "MPI_Recv".into()]);
            }
            calls.extend(std::iter::repeat_n(quiet_poll.clone(), FIRST));
            if function == "MPI_Test" {
                calls.push("free".into());
            }
            calls.extend(std::iter::repeat_n(quiet_poll.clone(), FIRST));
            calls.push("MPI_Send".into());
            calls.extend(std::iter::repeat_n(quiet_poll, quiet));
            calls.push(format!("{function}:1"));
            if function == "MPI_Iprobe" {
                calls.push("MPI_Recv".into());
            }
        } else {
            calls.extend(["MPI_Recv".into(), "MPI_Send".into()]);
        }
        calls.push("MPI_Barrier".into());
    }
    calls.push("MPI_Finalize".into());
    calls
}

/// Checks every poll's arguments against the round's receive: the request its `MPI_Irecv`
/// created, the partner's rank and the round's tag in the status of the poll that found it,
/// and `found_index` as the index of the `MPI_Testany` that found it (C counts from 0,
/// Fortran from 1).
fn check_poll_arguments(rank: u64, calls: &[&Value], found_index: &str) {
    let mut round = 0;
    let mut request = String::new();
    let partner = 1 - rank;
    for call in calls {
        let args = &call["args"];
        let arg = |name: &str| args[name].as_str().unwrap_or_default().to_string();
        let function = call["function"].as_str().unwrap_or_default();
        match function {
            "MPI_Barrier" => round += 1,
            "MPI_Irecv" => request = arg("request"),
            _ => {}
        }
        if function != poll_function(round) || rank != poller(round) {
            continue;
        }
        let found = arg("flag") == "1";
        let status = format!("{{src={partner},tag={round},err=0,bytes=4}}");
        let (status_arg, want_status) = match function {
            "MPI_Testany" => {
                assert_eq!(
                    arg("array_of_requests"),
                    format!("[MPI_REQUEST_NULL,{request}]")
                );
                // The standard: an unsuccessful MPI_Testany returns MPI_UNDEFINED in index.
                // MPICH's Fortran binding adds 1 to it as to any C index (-32766 + 1), and the
                // trace keeps what the program received.
                let fortran = found_index == "2"; // the Fortran program counts from 1
                let undefined = if is_mpich() && fortran {
                    "-32765"
                } else {
                    "MPI_UNDEFINED"
                };
                let index = if found { found_index } else { undefined };
                assert_eq!(arg("index"), index, "round {round}: {call}");
                ("status", status)
            }
            "MPI_Test" => {
                assert_eq!(arg("request"), request, "round {round}: {call}");
                ("status", status)
            }
            "MPI_Testall" => {
                assert_eq!(
                    arg("array_of_requests"),
                    format!("[{request},MPI_REQUEST_NULL]")
                );
                ("array_of_statuses", format!("[{status},"))
            }
            _ => {
                assert_eq!(
                    (arg("source"), arg("tag")),
                    (partner.to_string(), round.to_string()),
                    "{call}"
                );
                ("status", status)
            }
        };
        if found {
            assert!(
                arg(status_arg).starts_with(&want_status),
                "round {round}: {call}"
            );
        } else {
            assert_eq!(arg(status_arg), "IGNORE", "round {round}: {call}");
        }
    }
}

/// With `--callsites`: a round's polls come from three call sites, one per loop.
fn check_poll_sites(rank: u64, calls: &[&Value]) {
    let mut sites: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut round = 0;
    for call in calls {
        if call["function"] == "MPI_Barrier" {
            round += 1;
        } else if call["function"] == poll_function(round) && rank == poller(round) {
            let site = call["caller"].to_string();
            let round_sites = sites.entry(round).or_default();
            if round_sites.last() != Some(&site) {
                round_sites.push(site);
            }
        }
    }
    for (round, round_sites) in sites {
        assert_eq!(round_sites.len(), 3, "round {round}: {round_sites:?}");
        assert!(round_sites[0] != round_sites[1] && round_sites[1] != round_sites[2]);
    }
}

/// Polls the recorder should have repeated on `rank`: every quiet poll that directly follows
/// a quiet poll from the same call site (`callsites`), or from any site, of the same round
/// with no call or free event in between.
fn expected_repeats(rank: u64, quiet_after_go: &[usize], callsites: bool) -> u64 {
    let mut repeats = 0;
    for (round, &quiet) in quiet_after_go.iter().enumerate() {
        if rank != poller(round) {
            continue;
        }
        // The second loop's first poll follows the first loop's last, unless a free event or
        // another call site comes between.
        let joined = !callsites && poll_function(round) != "MPI_Test";
        repeats += 2 * (FIRST - 1) + usize::from(joined) + quiet.saturating_sub(1);
    }
    repeats as u64
}

/// `repeated_polls=` of each rank's merge report line.
fn repeated_polls(report: &Path) -> BTreeMap<u64, u64> {
    let text = std::fs::read_to_string(report).expect("merge report written");
    text.lines()
        .map(|l| (field_value(l, "rank"), field_value(l, "repeated_polls")))
        .collect()
}

/// A traced run of the polls program: its name, `conifer exec` options, and whether the memo
/// (and so the repeat path) is on.
type PollRun<'a> = (&'a str, &'a [&'a str], bool);

#[test]
fn repeated_polls_are_recorded_as_made() {
    // Built with -g, the program records its call sites by default (`plain`).
    let runs: [PollRun; 3] = [
        ("sites", &["--callsites", "--timing", "lossless"], true),
        ("plain", &[], true),
        ("off", &["--no-callsites"], false),
    ];
    let flags = ["-O2", "-g", "-Wall", "-Wextra", "-Werror"];
    check_polls_program("polls.c", "mpicc", &flags, &runs, "1");
}

/// `polls.f90`, the same protocol through the Fortran wrappers (`use mpi`). Its polls share one
/// call site, so it runs with `--no-callsites`.
#[test]
fn repeated_fortran_polls_are_recorded_as_made() {
    let runs: [PollRun; 2] = [
        ("plain", &["--no-callsites"], true),
        ("off", &["--no-callsites"], false),
    ];
    let flags = ["-O2", "-g", "-Wall", "-Werror"];
    check_polls_program("polls.f90", "mpif90", &flags, &runs, "2");
}

/// Builds `tests/memo/<source>` (`polls.c` or `polls.f90`) with `wrapper` and `flags`, runs it
/// traced as each of `runs` says, and checks every call, every poll's arguments (the
/// `MPI_Testany` that finds the message reports `found_index`) and each rank's repeat count.
fn check_polls_program(
    source: &str,
    wrapper: &str,
    flags: &[&str],
    runs: &[PollRun],
    found_index: &str,
) {
    let dir = scratch(&format!("repeated-{}", source.replace('.', "-")));
    let program = dir.join("polls");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/memo")
        .join(source);
    mpi_compile(wrapper, flags, &program, &source);
    for &(name, options, memo) in runs {
        let report = dir.join(format!("{name}.merge"));
        let _ = std::fs::remove_file(&report);
        let report_env = report.to_string_lossy().to_string();
        let mut env = vec![("CONIFER_MERGE_REPORT", report_env.as_str())];
        if !memo {
            env.push(("CONIFER_INPUT_MEMO", "0"));
        }
        let (trace, out) = traced_run_with(&dir, name, 2, options, &env, &program, &[]);
        let results = lines_with(&out.stdout, "RESULT ");
        assert_eq!(results.len(), 2, "{results:?}");
        assert!(
            results.iter().all(|l| l.ends_with(" failures=0")),
            "{results:?}"
        );
        let mut quiet_after_go = vec![0; ROUNDS];
        for line in lines_with(&out.stdout, "ROUND ") {
            let words: Vec<&str> = line.split_whitespace().collect();
            let round: usize = words[1].parse().expect("round number");
            quiet_after_go[round] = words[3]
                .strip_prefix("quiet_after_go=")
                .and_then(|n| n.parse().ok())
                .expect("quiet count");
        }
        let decoded = decode_all(&trace);
        let repeats = repeated_polls(&report);
        for rank in 0..2u64 {
            let calls: Vec<&Value> = decoded.iter().filter(|c| c["rank"] == rank).collect();
            let tokens: Vec<String> = calls.iter().map(|c| token(c)).collect();
            assert_eq!(
                tokens,
                expected_tokens(rank, &quiet_after_go),
                "{name}, rank {rank}"
            );
            check_poll_arguments(rank, &calls, found_index);
            // Built with -g: call sites are recorded unless declined.
            let callsites = !options.contains(&"--no-callsites");
            if callsites {
                check_poll_sites(rank, &calls);
            }
            if options.contains(&"lossless") {
                let starts: Vec<u64> = calls
                    .iter()
                    .map(|c| c["start_ns"].as_u64().expect("lossless start"))
                    .collect();
                assert!(starts.windows(2).all(|w| w[0] <= w[1]), "rank {rank}");
            }
            let want = if memo {
                expected_repeats(rank, &quiet_after_go, callsites)
            } else {
                0
            };
            assert_eq!(repeats.get(&rank), Some(&want), "{name}, rank {rank}");
        }
    }
}
