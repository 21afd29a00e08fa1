//! Received bytes are the bytes that arrived, posted receive capacity is a figure of its
//! own: `conifer profile` on overpost.c, whose receives post 1024 doubles and get far fewer.
//! Every expected value is derived by hand from the app's header comment.

mod common;

use common::*;
use std::process::Command;

/// overpost.c, 4 ranks, 5 iterations (its default), per rank: phase A sends
/// 2 × 8 × Σ(100 + 10·it) = 9600 B (received with Irecv, statuses recorded), phase B
/// 8 × 50 × 5 = 2000 B (Isend; MPI_Recv with MPI_STATUS_IGNORE), phase C 8 × 25 × 5 =
/// 1000 B (Isend; Irecv completed by Waitall with MPI_STATUSES_IGNORE). Every receive
/// posts 1024 doubles = 8192 B: 3 Irecv and 1 Recv per iteration.
#[test]
fn profile_counts_received_bytes_as_they_arrived_and_posted_capacity_apart() {
    let ranks = 4u64;
    let per_rank_sent = 9600 + 2000 + 1000;
    let irecv_received = ranks * (9600 + 1000);
    let recv_received = ranks * 2000;
    let irecv_posted = ranks * 3 * 5 * 8192;
    let recv_posted = ranks * 5 * 8192;

    let dir = scratch("received-overpost");
    let trace = traced(&dir, "overpost", 4, &[], &apps_dir().join("overpost"), &[]);
    let out = run_ok(
        Command::new(conifer())
            .arg("profile")
            .arg(&trace)
            .arg("--json"),
    );
    let profile: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let functions = profile["functions"].as_array().unwrap();
    let function = |name: &str| {
        functions
            .iter()
            .find(|f| f["function"] == name)
            .unwrap_or_else(|| panic!("{name} in the profile"))
    };
    let sum = |field: &str| -> u64 { functions.iter().map(|f| f[field].as_u64().unwrap()).sum() };
    assert_eq!(sum("bytes_sent"), ranks * per_rank_sent, "bytes sent");
    assert_eq!(
        sum("bytes_received"),
        ranks * per_rank_sent,
        "bytes received"
    );
    assert_eq!(
        sum("bytes_posted"),
        irecv_posted + recv_posted,
        "bytes posted"
    );
    assert_eq!(function("MPI_Irecv")["bytes_received"], irecv_received);
    assert_eq!(function("MPI_Recv")["bytes_received"], recv_received);
    assert_eq!(function("MPI_Irecv")["bytes_posted"], irecv_posted);
    assert_eq!(function("MPI_Recv")["bytes_posted"], recv_posted);
    for r in profile["per_rank"].as_array().unwrap() {
        assert_eq!(r["bytes_received"], per_rank_sent, "rank {}", r["rank"]);
        assert_eq!(r["bytes_posted"], 4 * 5 * 8192, "rank {}", r["rank"]);
    }

    // The text profile shows the two apart, and says what each means.
    let out = run_ok(Command::new(conifer()).arg("profile").arg(&trace));
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text
        .lines()
        .find(|l| l.starts_with("function "))
        .expect("a functions table");
    assert!(
        header.contains("received") && header.contains("posted"),
        "{header}"
    );
    assert!(text.contains("posted: receive capacity"), "{text}");
}

/// The cells of the HTML table that follows `heading` in `html`: its header row, then each
/// row, tags stripped.
fn html_table(html: &str, heading: &str) -> Vec<Vec<String>> {
    let from = html.find(heading).expect("the heading");
    let table = &html[from..];
    let table = &table[table.find("<table").unwrap()..table.find("</table>").unwrap()];
    table
        .split("<tr>")
        .skip(1)
        .map(|row| {
            row.split('<')
                .filter_map(|part| part.split_once('>'))
                .filter(|(tag, _)| tag.starts_with("td") || tag.starts_with("th"))
                .map(|(_, text)| text.to_string())
                .collect()
        })
        .collect()
}

/// The report's function table has received (what arrived) and posted as two labelled
/// columns (it had one `received` column): for overpost.c on 4 ranks, MPI_Irecv received
/// 4 × (9600 + 1000) = 42,400 B = 41.4 KiB and posted 4 × 15 × 8192 = 480 KiB; MPI_Recv
/// received 4 × 2000 = 8000 B = 7.8 KiB and posted 4 × 5 × 8192 = 160 KiB.
#[test]
fn report_tables_show_received_and_posted_apart() {
    let dir = scratch("received-report");
    let trace = traced(&dir, "overpost", 4, &[], &apps_dir().join("overpost"), &[]);
    let page = dir.join("report.html");
    run_ok(
        Command::new(conifer())
            .arg("report")
            .arg(&trace)
            .arg("-o")
            .arg(&page),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let table = html_table(&html, "<h2>Time and data per function</h2>");
    let header = &table[0];
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}: {header:?}"))
    };
    let (received, posted) = (column("received (arrived)"), column("posted"));
    let row = |function: &str| {
        table
            .iter()
            .find(|r| r.first().is_some_and(|c| c == function))
            .unwrap_or_else(|| panic!("no row {function}"))
            .clone()
    };
    let irecv = row("MPI_Irecv");
    assert_eq!(
        (irecv[received].as_str(), irecv[posted].as_str()),
        ("41.4 KiB", "480 KiB")
    );
    let recv = row("MPI_Recv");
    assert_eq!(
        (recv[received].as_str(), recv[posted].as_str()),
        ("7.8 KiB", "160 KiB")
    );
    assert!(
        html.contains("posted: receive capacity posted"),
        "the note says what each is"
    );
    // overpost is built without -g or `conifer cc`: its trace records no call sites.
    for heading in [
        "<h2>Top signature groups by time</h2>",
        "<h2>Time per rank</h2>",
    ] {
        let header = &html_table(&html, heading)[0];
        assert!(
            header.iter().any(|h| h == "received (arrived)")
                && header.iter().any(|h| h == "posted"),
            "{heading}: {header:?}"
        );
    }
}
