//! Recording under the program's and the user's control: `MPI_Pcontrol(0)`/`(1)` phases,
//! `--start-off` and `--exclude`. The calls a trace must hold are derived by hand from
//! tests/apps/phases.c; the calls made are the app's own tally.

mod common;

use common::*;
use std::collections::BTreeMap;

const ITERATIONS: usize = 5;

/// The functions phases.c records on every rank, in order, when recording starts on (else
/// starting at its first `MPI_Pcontrol`) and `excluded` functions are left out.
fn expected_calls(start_off: bool, excluded: &[&str]) -> Vec<&'static str> {
    let mut calls = vec!["MPI_Init"];
    if !start_off {
        calls.extend(["MPI_Comm_rank", "MPI_Comm_size"]);
    }
    // The warm-up's two exchanges are made with recording off.
    calls.extend(["MPI_Pcontrol", "MPI_Pcontrol"]);
    for it in 0..ITERATIONS {
        calls.extend(["MPI_Wtime", "MPI_Sendrecv"]);
        if it % 2 == 1 {
            calls.extend(["MPI_Pcontrol", "MPI_Pcontrol"]);
        } else {
            calls.push("MPI_Allreduce");
        }
    }
    calls.extend(["MPI_Barrier", "MPI_Finalize"]);
    calls.retain(|c| !excluded.contains(c));
    calls
}

/// What a traced run of phases.c shows.
struct Run {
    /// Per rank, the trace's calls in order (function names, `MPI_Pcontrol` with its level).
    calls: Vec<Vec<String>>,
    /// The app's own call counts.
    made: BTreeMap<(u32, String), u64>,
    /// `conifer stats --json`.
    stats: serde_json::Value,
}

/// Runs phases.c traced with `options`.
fn run_phases(name: &str, ranks: u32, options: &[&str]) -> Run {
    let dir = scratch(name);
    let iterations = ITERATIONS.to_string();
    let program = apps_dir().join("phases");
    let (trace, out) = traced_run(&dir, "phases", ranks, options, &program, &[&iterations]);
    let made = app_counts(&out.stdout);
    let mut calls = vec![Vec::new(); ranks as usize];
    for call in decode_all(&trace) {
        let rank = call["rank"].as_u64().unwrap() as usize;
        let function = call["function"].as_str().unwrap().to_string();
        let shown = match function.as_str() {
            "MPI_Pcontrol" => format!("{function}({})", call["args"]["level"].as_str().unwrap()),
            _ => function,
        };
        calls[rank].push(shown);
    }
    Run {
        calls,
        made,
        stats: stats_json(&trace),
    }
}

/// `expected_calls` with the levels the `MPI_Pcontrol` calls of phases.c pass (off, on, …).
fn with_levels(calls: Vec<&str>) -> Vec<String> {
    let mut next_level = 0;
    calls
        .into_iter()
        .map(|c| {
            if c == "MPI_Pcontrol" {
                next_level = 1 - next_level;
                format!("MPI_Pcontrol({})", 1 - next_level)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Every rank recorded exactly `expected`, and recorded plus left-out calls are the app's own
/// counts.
fn check(run: &Run, expected: &[String]) {
    let Run { calls, made, stats } = run;
    for (rank, recorded) in calls.iter().enumerate() {
        assert_eq!(recorded, expected, "rank {rank} recorded other calls");
    }
    // Counts add up: every call the app made is recorded or reported left out.
    let ranks = calls.len() as u64;
    let mut made_total: BTreeMap<&str, u64> = BTreeMap::new();
    for ((_, f), n) in made {
        *made_total.entry(f).or_default() += n;
    }
    for (function, &n) in &made_total {
        let recorded = stats["functions"][function].as_u64().unwrap_or(0);
        let left_out = stats["left_out"][function].as_u64().unwrap_or(0);
        assert_eq!(
            recorded + left_out,
            n,
            "{function}: recorded + left out ≠ made"
        );
        let expected_recorded = expected
            .iter()
            .filter(|c| c.split('(').next() == Some(function))
            .count() as u64;
        assert_eq!(recorded, expected_recorded * ranks, "{function} recorded");
    }
}

#[test]
fn pcontrol_phases_and_excluded_functions_are_counted_but_not_recorded() {
    let ranks = if is_mpich() { 2 } else { 3 };
    let run = run_phases("control-pcontrol", ranks, &["--exclude", "MPI_Wtime"]);
    let stats = &run.stats;
    let expected = with_levels(expected_calls(false, &["MPI_Wtime"]));
    check(&run, &expected);
    // By hand: per rank the 2 warm-up exchanges, the Allreduce of the 2 odd iterations and
    // every MPI_Wtime are left out.
    let r = u64::from(ranks);
    assert_eq!(stats["left_out"]["MPI_Sendrecv"], 2 * r);
    assert_eq!(stats["left_out"]["MPI_Allreduce"], 2 * r);
    assert_eq!(stats["left_out"]["MPI_Wtime"], ITERATIONS as u64 * r);
    assert_eq!(stats["counters_agree"], true);
}

#[test]
fn start_off_and_the_queries_class() {
    let ranks = 2;
    let run = run_phases(
        "control-start-off",
        ranks,
        &["--start-off", "--exclude", "queries"],
    );
    let expected = with_levels(expected_calls(true, &["MPI_Wtime"]));
    check(&run, &expected);
    assert_eq!(run.stats["left_out"]["MPI_Comm_rank"], u64::from(ranks));
}
