//! The report opens with what a reader asks first (command, ranks per host, the run's span,
//! where the steady state goes, the most expensive call sites, the largest imbalance), read from the page
//! as headless Chromium renders it, on a 16-rank run of delays.c whose waits are known from
//! its source. Open MPI only: 16 oversubscribed MPICH ranks busy-poll for minutes.

mod common;
use common::*;
use std::process::Command;

/// delays.c at 20% of its repetitions: rank 0 waits in MPI_Recv for rank 1's 20 × 2 ms of
/// computing, and prints how long it was inside MPI_Recv by its own clock.
const PERCENT: &str = "20";

/// The value cell of the row whose first cell is `key`, in the page's "At a glance" table.
fn glance_row(dom: &str, key: &str) -> String {
    let table = &dom[dom.find("At a glance").expect("no At a glance section")..];
    let row = &table[table
        .find(&format!("<td>{key}</td>"))
        .unwrap_or_else(|| panic!("no {key} row"))..];
    let cell = &row[row.find("<td class=\"l\">").unwrap() + "<td class=\"l\">".len()..];
    cell[..cell.find("</td>").unwrap()]
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

#[test]
fn the_report_opens_with_what_a_reader_asks_first() {
    if is_mpich() {
        eprintln!("skipped: 16 oversubscribed MPICH ranks busy-poll (Open MPI runs this test)");
        return;
    }
    let dir = scratch("report-glance");
    let (trace, out) = traced_run(
        &dir,
        "delays",
        16,
        &[],
        &apps_dir().join("delays"),
        &[PERCENT],
    );
    let longest_span = lines_with(&out.stdout, "SPAN ")
        .iter()
        .map(|l| field_value(l, "ns"))
        .max()
        .expect("delays.c prints its spans");
    let html = dir.join("report.html");
    run_ok(
        Command::new(conifer())
            .arg("report")
            .arg(&trace)
            .arg("-o")
            .arg(&html),
    );
    let dom = dump_dom(&html, &dir.join("chromium-profile"));

    // First thing on the page.
    let first_h2 = &dom[dom.find("<h2>").unwrap()..];
    assert!(
        first_h2.starts_with("<h2>At a glance</h2>"),
        "{}",
        &first_h2[..80]
    );
    assert!(glance_row(&dom, "command").contains("delays 20"));
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(
        glance_row(&dom, "ranks"),
        format!("16 ranks on 1 host ({}: 16)", host.trim())
    );
    // The run's span holds every rank's own MPI_Init-to-MPI_Finalize span.
    let span = parse_time(&glance_row(&dom, "run span (as run)"));
    assert!(span >= longest_span as f64, "{span} ns < {longest_span} ns");
    // The steady state's two shares add up to the whole.
    let steady = glance_row(&dom, "steady state (without the recorder)");
    let shares: Vec<f64> = steady
        .split('(')
        .skip(1)
        .map(|p| p.split('%').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(shares.len(), 2, "{steady}");
    assert!((shares[0] + shares[1] - 100.0).abs() <= 0.11, "{steady}");
    assert!(glance_row(&dom, "apart: start-up and shutdown").starts_with("MPI_Init "));
    assert_eq!(
        glance_row(&dom, "most expensive call sites (steady state)")
            .matches("; ")
            .count(),
        2,
        "three call sites"
    );
    // The per-function table: MPI_Recv's most, on the rank it names, is that rank's time
    // inside MPI_Recv by the program's own clock in this run, less at most the recorder's
    // work on that rank (`conifer profile --json`); 1% for the page's three digits, 2% for
    // a rank descheduled between its clock reads and the wrapper's.
    let recv = table_row(&dom, "MPI_Recv");
    let most = parse_time(&recv[3]);
    let rank: usize = recv[4].parse().expect("a rank");
    let inside = lines_with(&out.stdout, "INSIDE ")
        .iter()
        .find(|l| l.contains(" MPI_Recv ") && field_value(l, "rank") == rank as u64)
        .map(|l| field_value(l, "ns") as f64)
        .expect("delays.c prints its time inside MPI_Recv");
    let profile: serde_json::Value = serde_json::from_slice(
        &run_ok(
            Command::new(conifer())
                .args(["profile", "--json"])
                .arg(&trace),
        )
        .stdout,
    )
    .unwrap();
    let recorder = profile["per_rank"][rank]["recorder_ns"].as_f64().unwrap();
    assert!(
        most <= inside * 1.01 && most >= (inside - recorder) * 0.97,
        "{recv:?}: rank {rank} was {inside} ns inside MPI_Recv, the recorder {recorder} ns"
    );
    // The headline is the function whose slowest rank is furthest above the mean: at least
    // as far as MPI_Recv's rank 0 (which function wins depends on how 16 ranks share 2 cores).
    let imbalance = glance_row(&dom, "largest imbalance (time in MPI per rank)");
    let (function, rest) = imbalance.split_once(": ").unwrap();
    let row = table_row(&dom, function);
    let excess = |row: &[String]| parse_time(&row[3]) - parse_time(&row[2]);
    assert!(
        excess(&row) >= excess(&recv) * 0.99,
        "{imbalance} vs MPI_Recv {recv:?}"
    );
    assert!(
        rest.starts_with(&format!("{} on rank {} against", row[3], row[4])),
        "{imbalance} vs {row:?}"
    );
}

/// The cells after the name of `function`'s row in the per-function table: min, its rank,
/// mean, max, its rank, max/mean.
fn table_row(dom: &str, function: &str) -> Vec<String> {
    let table = &dom[dom.find("Time in MPI per rank, by function").unwrap()..];
    let row = &table[table
        .find(&format!("<td class=\"l\">{function}</td>"))
        .unwrap_or_else(|| panic!("no {function} row"))..];
    row.split("<td>")
        .skip(1)
        .take(6)
        .map(|c| c.split("</td>").next().unwrap().to_string())
        .collect()
}
