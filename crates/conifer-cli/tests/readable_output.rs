//! Text output a reader takes in at once: the matrix's counts grouped by thousands with their
//! unit, `diff` of runs with different rank counts saying why calls are not compared, call
//! sites named alike by `profile` and `diff`, runs differing only in completion order.

mod common;
use common::*;
use std::process::Command;

/// ring.c: every rank Sendrecvs one long long (8 bytes) to rank + 1, `iters` times.
fn ring(ranks: u32, iters: u32, tag: &str) -> std::path::PathBuf {
    let dir = scratch(&format!("readable-{tag}"));
    traced(
        &dir,
        "ring",
        ranks,
        &[],
        &apps_dir().join("ring"),
        &[&iters.to_string()],
    )
}

#[test]
fn matrix_counts_are_grouped_and_carry_their_unit() {
    // 4 ranks × 200 iterations: 1,600 bytes on each of the 4 ring edges, 6,400 in all.
    let trace = ring(4, 200, "matrix");
    let out = run_ok(
        Command::new(conifer())
            .args(["matrix", "--kind", "p2p"])
            .arg(&trace),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().next().unwrap();
    assert!(header.ends_with("total 6,400 bytes (6.2 KiB)"), "{header}");
    let row0: Vec<&str> = text.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(row0, ["0", ".", "1,600", ".", "."], "{text}");
    let out = run_ok(
        Command::new(conifer())
            .args(["matrix", "--kind", "p2p", "--metric", "messages"])
            .arg(&trace),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().next().unwrap().ends_with("total 800 messages"),
        "{text}"
    );
}

#[test]
fn diff_of_different_rank_counts_says_why_calls_are_not_compared() {
    let (two, four) = (ring(2, 5, "diff2"), ring(4, 5, "diff4"));
    let out = Command::new(conifer())
        .arg("diff")
        .arg(&two)
        .arg(&four)
        .output()
        .unwrap();
    assert!(!out.status.success(), "runs of 2 and 4 ranks are not equal");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the runs have 2 and 4 ranks"), "{text}");
    assert!(!text.contains("ranks diverge"), "{text}");
}

/// Without `--callsites`, `profile` and `diff` name a call site alike: ring.c's one Sendrecv
/// site makes ranks x iterations calls (12 with 3 ranks x 4, 15 with 5), and the name `diff`
/// gives the site whose calls went from 12 to 15 is the name of `profile`'s row of 12 calls
/// (`profile` said `MPI_Sendrecv family 0`, `diff` `MPI_Sendrecv family 5e2e...`). Both say
/// how to get source lines.
#[test]
fn profile_and_diff_name_a_site_alike_and_say_how_to_get_lines() {
    let (four, five) = (ring(3, 4, "sites4"), ring(3, 5, "sites5"));
    let diff = Command::new(conifer())
        .arg("diff")
        .arg(&four)
        .arg(&five)
        .output()
        .unwrap();
    let diff = String::from_utf8_lossy(&diff.stdout);
    let site = diff
        .lines()
        .find(|l| l.contains("calls 12 -> 15"))
        .unwrap_or_else(|| panic!("no Sendrecv site went from 12 to 15 calls:\n{diff}"))
        .split("calls 12")
        .next()
        .unwrap()
        .trim()
        .to_string();
    assert!(site.starts_with("MPI_Sendrecv family "), "{site}");
    let profile = run_ok(Command::new(conifer()).arg("profile").arg(&four));
    let profile = String::from_utf8_lossy(&profile.stdout);
    // The site's name ends its row (function, calls, times, bytes, then the name).
    let row: Vec<&str> = profile
        .lines()
        .find(|l| l.ends_with(&format!("  {site}")))
        .unwrap_or_else(|| panic!("profile has no site {site}:\n{profile}"))
        .split_whitespace()
        .collect();
    assert_eq!((row[0], row[1]), ("MPI_Sendrecv", "12"), "{row:?}");
    for text in [&diff, &profile] {
        assert!(text.contains("conifer run --callsites"), "{text}");
    }
}

/// arrival.c makes the same calls whatever order its messages arrive in (forward or reverse,
/// set on its command line): `diff` of the two says they are equal up to completion order
/// (it said only that they differ), and of runs with different round counts does not.
#[test]
fn diff_of_runs_differing_in_completion_order_says_so() {
    let dir = scratch("readable-arrival");
    let binary = dir.join("arrival");
    mpi_compile(
        "mpicc",
        &["-O1"],
        &binary,
        &repo_root().join("crates/conifer-cli/tests/arrival.c"),
    );
    let run = |name: &str, args: &[&str]| traced(&dir, name, 3, &[], &binary, args);
    let forward = run("forward", &["forward", "2"]);
    let reverse = run("reverse", &["reverse", "2"]);
    let longer = run("longer", &["reverse", "3"]);
    let diff = |x: &std::path::Path, y: &std::path::Path| {
        let out = Command::new(conifer())
            .arg("diff")
            .arg(x)
            .arg(y)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = diff(&forward, &reverse);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("equal up to completion order"), "{text}");
    let (code, text) = diff(&forward, &longer);
    assert_eq!(code, Some(1), "{text}");
    assert!(!text.contains("equal up to completion order"), "{text}");
    let json = Command::new(conifer())
        .args(["diff", "--json"])
        .arg(&forward)
        .arg(&reverse)
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(j["equal_up_to_timing"], false);
    assert_eq!(j["equal_up_to_completion_order"], true);
}

/// `profile` shows no time as 0 ns: a time shorter than one clock read (what the recorder
/// takes off every call, from `stats --json`'s clocks) reads `<R`, and the line under the
/// table says why. Its MPI% leaves MPI_Init out as mpiP does: the `*` row is
/// (MPI − MPI_Init) / (app − MPI_Init) over the ranks' exact totals.
#[test]
fn profile_shows_no_zero_times_and_mpi_percent_after_init() {
    let trace = ring(3, 50, "zero-times");
    let text = String::from_utf8(run_ok(Command::new(conifer()).arg("profile").arg(&trace)).stdout)
        .unwrap();
    assert!(
        !text.split_whitespace().any(|w| w == "0ns"),
        "a time shown as 0ns:\n{text}"
    );
    let stats = run_ok(
        Command::new(conifer())
            .args(["stats", "--json"])
            .arg(&trace),
    );
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    let read_ps = stats["timing"]["clocks"]
        .as_array()
        .map(|ranks| {
            ranks
                .iter()
                .filter_map(|r| r["clock_read_ps"].as_u64())
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0);
    if text.contains("shorter than one clock read") {
        assert!(read_ps > 0, "{stats}");
    }
    let profile = run_ok(
        Command::new(conifer())
            .args(["profile", "--json"])
            .arg(&trace),
    );
    let profile: serde_json::Value = serde_json::from_slice(&profile.stdout).unwrap();
    let (mut mpi, mut app, mut init) = (0.0, 0.0, 0.0);
    for rank in profile["per_rank"].as_array().unwrap() {
        mpi += rank["mpi_ns"].as_f64().unwrap();
        app += rank["app_ns"].as_f64().unwrap();
        init += rank["function_mpi_ns"]["MPI_Init"].as_f64().unwrap_or(0.0);
    }
    assert!(init > 0.0, "ring calls MPI_Init: {profile}");
    let star: Vec<&str> = text
        .lines()
        .find(|l| l.trim_start().starts_with("* "))
        .unwrap()
        .split_whitespace()
        .collect();
    let expected = format!("{:.1}", 100.0 * (mpi - init) / (app - init));
    assert_eq!(star[3], expected, "{text}");
}
