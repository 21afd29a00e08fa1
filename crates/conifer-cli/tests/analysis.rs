//! The analysis commands (`profile`, `matrix`, `plot`, `report`, `diff`) on traces of the
//! bundled test apps:
//! - every statistic computed on the compressed form equals the same statistic computed by
//!   expanding every call, on every test app, in grammar mode and in tree mode;
//! - matrices, histograms and byte counts equal values derived by hand from the apps' code.

#![allow(clippy::needless_range_loop)] // matrices are checked entry by entry, by rank

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Traces `app` (from `dir`) on `ranks` ranks with `args`; `tree` picks the recorder.
fn trace_app(dir: &Path, app: &str, ranks: u32, args: &[&str], tree: bool, tag: &str) -> PathBuf {
    let scratch = scratch(&format!("analysis-{app}-{ranks}-{tag}"));
    let trace = scratch.join(format!("{app}.cft"));
    let _guard = mpi_lock();
    let mut cmd = Command::new("timeout");
    cmd.arg("300")
        .arg(conifer())
        .args(["run", "-n", &ranks.to_string()])
        .arg("-o")
        .arg(&trace)
        .current_dir(&scratch)
        .env("CONIFER_TREE", if tree { "1" } else { "0" });
    if ranks > 2 && !is_mpich() {
        cmd.arg("--launcher-arg=--oversubscribe");
    }
    cmd.arg(dir.join(app)).args(args);
    run_ok(&mut cmd);
    trace
}

fn load(trace: &Path) -> conifer_trace::Trace {
    conifer_trace::Trace::from_bytes(&std::fs::read(trace).unwrap()).unwrap()
}

/// Compressed-form and expanded analyses of `trace` agree in every statistic.
fn assert_same(what: &str, trace: &Path) -> conifer_analyze::Analysis {
    let t = load(trace);
    let compressed = conifer_analyze::analyze(&t, &mut |_, _| {}).unwrap();
    let options = conifer_analyze::Options::default();
    let expanded = conifer_analyze::analyze_expanded(&t, &options, &mut |_, _| {}).unwrap();
    assert_eq!(
        compressed.functions, expanded.functions,
        "{what}: functions"
    );
    assert_eq!(
        compressed.function_families, expanded.function_families,
        "{what}: function families"
    );
    assert_eq!(compressed.sites, expanded.sites, "{what}: call sites");
    assert_eq!(compressed.comms, expanded.comms, "{what}: communicators");
    assert_eq!(compressed.per_rank, expanded.per_rank, "{what}: per rank");
    assert_eq!(
        compressed.histograms, expanded.histograms,
        "{what}: histograms"
    );
    assert_eq!(compressed.matrix, expanded.matrix, "{what}: matrix");
    assert_eq!(
        compressed.unresolved_calls, expanded.unresolved_calls,
        "{what}: unresolved"
    );
    assert_eq!(compressed, expanded, "{what}");
    // Call counts agree with the wrappers' own counters too.
    let calls: u64 = compressed.functions.values().map(|f| f.calls).sum();
    let counted: u64 = t
        .function_counts()
        .iter()
        .flat_map(|c| c.per_rank.iter())
        .sum::<u64>();
    assert_eq!(
        calls, counted,
        "{what}: calls against the wrappers' counters"
    );
    compressed
}

#[test]
fn compressed_form_equals_full_expansion_on_every_app() {
    let dir = apps_dir();
    for (app, ranks, args) in bundled_apps() {
        if is_mpich() && ranks > 4 {
            continue;
        }
        let trace = trace_app(&dir, app, ranks, &args, false, "grammar");
        assert_same(app, &trace);
    }
}

#[test]
fn compressed_form_equals_full_expansion_in_tree_mode() {
    let dir = tree_apps_dir();
    for (app, ranks, args) in bundled_apps() {
        if (is_mpich() && ranks > 4) || matches!(app, "threads") {
            continue;
        }
        let trace = trace_app(&dir, app, ranks, &args, true, "tree");
        let a = assert_same(&format!("{app} (tree mode)"), &trace);
        if matches!(app, "stencil2d" | "ring" | "mg") {
            assert!(
                a.sites
                    .keys()
                    .any(|s| matches!(s, conifer_analyze::Site::Tree(_))),
                "{app}: tree mode names structure-tree call sites"
            );
        }
    }
}

/// `conifer <args> --json` parsed.
fn json(args: &[&str], trace: &Path) -> serde_json::Value {
    let out = run_ok(Command::new(conifer()).args(args).arg(trace).arg("--json"));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn rows(m: &serde_json::Value) -> Vec<Vec<u64>> {
    m["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect()
        })
        .collect()
}

/// ring.c: each of `iters` iterations, rank r `MPI_Sendrecv`s one `long long` to (r+1) mod P:
/// a shifted diagonal of iters × 8 bytes, iters messages.
#[test]
fn ring_matrix_is_a_shifted_diagonal() {
    let (p, iters) = if is_mpich() { (3, 4) } else { (5, 7) };
    let trace = trace_app(&apps_dir(), "ring", p, &[&iters.to_string()], false, "hand");
    let bytes = rows(&json(&["matrix", "--kind", "p2p"], &trace));
    let msgs = rows(&json(
        &["matrix", "--kind", "p2p", "--metric", "messages"],
        &trace,
    ));
    for i in 0..p as usize {
        for j in 0..p as usize {
            let next = j == (i + 1) % p as usize;
            assert_eq!(
                bytes[i][j],
                if next { iters * 8 } else { 0 },
                "bytes {i}->{j}"
            );
            assert_eq!(
                msgs[i][j],
                if next { iters } else { 0 },
                "messages {i}->{j}"
            );
        }
    }
    let coll = rows(&json(&["matrix", "--kind", "coll"], &trace));
    assert!(
        coll.iter().flatten().all(|&v| v == 0),
        "ring makes no collective"
    );
    let profile = json(&["profile"], &trace);
    let sendrecv = profile["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == "MPI_Sendrecv")
        .unwrap();
    assert_eq!(sendrecv["calls"], u64::from(p) * iters);
    assert_eq!(sendrecv["bytes_sent"], u64::from(p) * iters * 8);
    assert_eq!(sendrecv["bytes_received"], u64::from(p) * iters * 8);
}

/// stencil2d.c: an `MPI_Dims_create(P, 2)` grid, rank r at (r / dims[1], r % dims[1]),
/// non-periodic; each iteration sends NX = NY = 8 doubles (64 B) to each existing neighbour
/// and `MPI_Allreduce`s one double (8 B to every other rank under the collective rule).
#[test]
fn stencil_matrix_follows_grid_and_tile() {
    let (p, dims, iters) = if is_mpich() {
        (4u32, [2u32, 2u32], 3u64)
    } else {
        (6, [3, 2], 3)
    };
    let trace = trace_app(
        &apps_dir(),
        "stencil2d",
        p,
        &[&iters.to_string()],
        false,
        "hand",
    );
    let p2p = rows(&json(&["matrix", "--kind", "p2p"], &trace));
    let coll = rows(&json(&["matrix", "--kind", "coll"], &trace));
    let msgs = rows(&json(
        &["matrix", "--kind", "p2p", "--metric", "messages"],
        &trace,
    ));
    let coords = |r: u32| (r / dims[1], r % dims[1]);
    for i in 0..p {
        for j in 0..p {
            let (a, b) = (coords(i), coords(j));
            let neighbours = a.0.abs_diff(b.0) + a.1.abs_diff(b.1) == 1;
            let (i, j) = (i as usize, j as usize);
            assert_eq!(
                p2p[i][j],
                if neighbours { iters * 64 } else { 0 },
                "{i}->{j}"
            );
            assert_eq!(msgs[i][j], if neighbours { iters } else { 0 }, "{i}->{j}");
            assert_eq!(coll[i][j], if i != j { iters * 8 } else { 0 }, "{i}->{j}");
        }
    }
    // Every Isend (edge sends to MPI_PROC_NULL included) carries 64 B: histogram bucket
    // [64, 128) holds all 4 per rank and iteration.
    let t = load(&trace);
    let a = conifer_analyze::analyze(&t, &mut |_, _| {}).unwrap();
    let isend = &a.histograms["MPI_Isend"];
    assert_eq!(isend.len(), 1);
    assert_eq!(
        isend[&conifer_analyze::bucket(64)],
        u64::from(p) * 4 * iters
    );
    assert_eq!(
        conifer_analyze::bucket_label(conifer_analyze::bucket(64)),
        "64-127 B"
    );
    let allreduce = &a.histograms["MPI_Allreduce"];
    assert_eq!(allreduce[&conifer_analyze::bucket(8)], u64::from(p) * iters);
}

/// ft.c: per iteration an `MPI_Alltoall` of 4 long longs per peer and an `MPI_Alltoallv` of
/// 1 + it % 3 long longs per peer: each off-diagonal entry is Σ_it (4 + 1 + it % 3) × 8.
#[test]
fn alltoall_matrix_follows_counts() {
    let (p, iters) = (4u32, 5u64);
    let trace = trace_app(&apps_dir(), "ft", p, &[&iters.to_string()], false, "hand");
    let coll = rows(&json(&["matrix", "--kind", "coll"], &trace));
    let expected: u64 = (0..iters).map(|it| (4 + 1 + it % 3) * 8).sum();
    for i in 0..p as usize {
        for j in 0..p as usize {
            assert_eq!(coll[i][j], if i != j { expected } else { 0 }, "{i}->{j}");
        }
    }
}

/// datatypes.c: pairs (r, r^1) exchange per iteration a vector of M = 8 doubles (64 B), an
/// indexed type of 1+2+...+6 ints (84 B) and NREC = 4 structs {int, double[3], char[6]}
/// (34 B of data each): 284 B each way per iteration.
#[test]
fn derived_datatypes_count_their_data() {
    let (p, iters) = (4u32, 3u64);
    let trace = trace_app(
        &apps_dir(),
        "datatypes",
        p,
        &[&iters.to_string()],
        false,
        "hand",
    );
    let p2p = rows(&json(&["matrix", "--kind", "p2p"], &trace));
    for i in 0..p as usize {
        for j in 0..p as usize {
            assert_eq!(
                p2p[i][j],
                if j == i ^ 1 { iters * 284 } else { 0 },
                "{i}->{j}"
            );
        }
    }
}

/// persistent.c: `MPI_Send_init` of LEN = 16 long longs to both ring neighbours, started
/// once per iteration: 128 B and one message per iteration to each neighbour.
#[test]
fn persistent_sends_count_at_each_start() {
    let (p, iters) = (4u32, 3u64);
    let trace = trace_app(
        &apps_dir(),
        "persistent",
        p,
        &[&iters.to_string()],
        false,
        "hand",
    );
    let p2p = rows(&json(&["matrix", "--kind", "p2p"], &trace));
    let msgs = rows(&json(
        &["matrix", "--kind", "p2p", "--metric", "messages"],
        &trace,
    ));
    for i in 0..p as usize {
        for j in 0..p as usize {
            let n = p as usize;
            let neighbour = j == (i + 1) % n || j == (i + n - 1) % n;
            assert_eq!(
                p2p[i][j],
                if neighbour { iters * 128 } else { 0 },
                "{i}->{j}"
            );
            assert_eq!(msgs[i][j], if neighbour { iters } else { 0 }, "{i}->{j}");
        }
    }
}

/// Decodes a PNG and says whether it shows more than one colour (a blank page is one colour).
fn png_is_not_blank(png: &Path) -> bool {
    let img = image::open(png).expect("a PNG").to_rgb8();
    let first = *img.get_pixel(0, 0);
    let differing = img.pixels().filter(|p| **p != first).count();
    differing > (img.width() * img.height() / 100) as usize
}

/// Every picture, as SVG and PNG, has its title and axis labels; the PNGs are not blank.
#[test]
fn pictures_have_titles_and_axes() {
    let trace = {
        let scratch = scratch("analysis-pictures");
        let trace = scratch.join("stencil.cft");
        let _guard = mpi_lock();
        let mut cmd = Command::new("timeout");
        cmd.arg("300")
            .arg(conifer())
            .args(["run", "-n", "4", "--timing", "lossless", "-o"])
            .arg(&trace)
            .current_dir(&scratch);
        if !is_mpich() {
            cmd.arg("--launcher-arg=--oversubscribe");
        }
        run_ok(cmd.arg(apps_dir().join("stencil2d")).arg("3"));
        trace
    };
    let dir = trace.parent().unwrap().to_path_buf();
    for (kind, title, axis) in [
        ("matrix", "rank matrix", "receiver rank"),
        ("sizes", "Message sizes", "message size"),
        ("functions", "Time in MPI per function", "total time"),
        ("ranks", "Time per rank", "time ("),
        ("timeline", "Timeline", "time since"),
    ] {
        let svg = dir.join(format!("{kind}.svg"));
        let png = dir.join(format!("{kind}.png"));
        run_ok(
            Command::new(conifer())
                .args(["plot", kind])
                .arg(&trace)
                .arg("-o")
                .arg(&svg),
        );
        run_ok(
            Command::new(conifer())
                .args(["plot", kind])
                .arg(&trace)
                .arg("-o")
                .arg(&png),
        );
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains(title), "{kind}: title {title:?}");
        assert!(text.contains(axis), "{kind}: axis label {axis:?}");
        assert!(png_is_not_blank(&png), "{kind}: the PNG is blank");
    }
    // Without lossless timing there is no timeline: one line, non-zero exit.
    let plain = trace_app(&apps_dir(), "ring", 2, &["3"], false, "pictures");
    let out = Command::new(conifer())
        .args(["plot", "timeline"])
        .arg(&plain)
        .arg("-o")
        .arg(dir.join("t.png"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--timing lossless"), "{err}");
}

/// The report is one self-contained HTML file: no script, no external resource; headless
/// Chromium renders it (non-blank screenshot), its title is the trace's, and the console
/// shows no error.
#[test]
fn report_renders_in_headless_chromium() {
    let trace = trace_app(&apps_dir(), "stencil2d", 4, &["3"], false, "report");
    let dir = trace.parent().unwrap();
    let html = dir.join("report.html");
    run_ok(
        Command::new(conifer())
            .arg("report")
            .arg(&trace)
            .arg("-o")
            .arg(&html),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<title>Conifer report: stencil2d.cft</title>"));
    for external in ["<script", "http://", "https://", "<link", "@import", "url("] {
        assert!(
            !page.contains(external),
            "the report refers to {external:?}"
        );
    }
    for section in [
        "Run",
        "Time and data per function",
        // stencil2d is built without -g or `conifer cc`: its trace records no call sites.
        "Top signature groups by time",
        "Communication matrix",
        "Message sizes",
        "The trace itself",
    ] {
        assert!(
            page.contains(&format!("<h2>{section}</h2>")),
            "section {section}"
        );
    }
    let chromium = chromium();
    let url = format!("file://{}", html.display());
    let shot = dir.join("report.png");
    let profile = dir.join("chromium-profile");
    let out = Command::new("timeout")
        .arg("120")
        .arg(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args([
            "--window-size=1200,1800",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(png_is_not_blank(&shot), "the screenshot is blank");
    // Console messages (errors and uncaught exceptions included) are logged as
    // `INFO:CONSOLE` lines: a page without scripts logs none, and no resource may fail to
    // load.
    let log = String::from_utf8_lossy(&out.stderr);
    for line in log.lines() {
        assert!(
            !line.contains(":CONSOLE") && !line.contains("net::ERR_"),
            "browser console: {line}"
        );
    }
    // The title as the browser sees it.
    let dom = dump_dom(&html, &profile);
    assert!(
        dom.contains("<title>Conifer report: stencil2d.cft</title>"),
        "{dom:.300}"
    );
    assert!(
        dom.matches("<figure class=\"chart\"").count() >= 4 && dom.contains("<svg"),
        "pictures in the page"
    );
}

/// `conifer diff`: a trace equals a rerun of the same program up to timing (exit 0); a run
/// with one more iteration differs in calls, bytes and matrix, and every rank diverges at
/// the call after its last common one (exit 1); errors exit 2.
#[test]
fn diff_finds_where_runs_diverge() {
    let a = trace_app(&apps_dir(), "ring", 3, &["4"], false, "diff-a");
    let a2 = trace_app(&apps_dir(), "ring", 3, &["4"], false, "diff-a2");
    let b = trace_app(&apps_dir(), "ring", 3, &["5"], false, "diff-b");
    let status = |x: &Path, y: &Path| {
        Command::new(conifer())
            .arg("diff")
            .arg(x)
            .arg(y)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(status(&a, &a2), Some(0));
    assert_eq!(status(&a, &b), Some(1));
    assert_eq!(status(&a, Path::new("/nonexistent.cft")), Some(2));
    let out = Command::new(conifer())
        .args(["diff", "--json"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["equal_up_to_timing"], false);
    // ring.c: Init, Comm_rank, Comm_size, then one Sendrecv per iteration: with 4 iterations
    // call #7 is Finalize in A and the fifth Sendrecv in B.
    let first = j["first_divergence"].as_array().unwrap();
    assert_eq!(first.len(), 3);
    for d in first {
        assert_eq!(d["call"], 7);
        assert!(d["a"].as_str().unwrap().starts_with("MPI_Finalize("));
        assert!(d["b"].as_str().unwrap().starts_with("MPI_Sendrecv("));
    }
    // The matrix difference is the ring's one extra long long per rank.
    let m = j["matrix_bytes_b_minus_a"].as_array().unwrap();
    assert_eq!(m.len(), 3);
    for e in m {
        assert_eq!(e["delta"], "8");
        assert_eq!(e["to"], (e["from"].as_u64().unwrap() + 1) % 3);
    }
}

/// A closed output pipe ends a read command quietly with status 0; bad input gives one line
/// and a non-zero status.
#[test]
fn closed_pipes_and_bad_input() {
    let trace = trace_app(&apps_dir(), "ring", 2, &["3"], false, "pipes");
    for args in [
        vec!["profile"],
        vec!["matrix", "--csv"],
        vec!["profile", "--json"],
    ] {
        let mut child = Command::new(conifer())
            .args(&args)
            .arg(&trace)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away at once
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {:?}", out);
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let dir = trace.parent().unwrap();
    let bad = dir.join("bad.cft");
    std::fs::write(&bad, b"not a trace").unwrap();
    for cmd in [
        vec!["profile"],
        vec!["matrix"],
        vec!["report", "-o", "/tmp/x.html"],
        vec!["plot", "matrix", "-o", "/tmp/x.svg"],
        vec!["waits"],
    ] {
        let out = Command::new(conifer())
            .args(&cmd[..1])
            .args(if cmd[0] == "plot" {
                &cmd[1..2]
            } else {
                &[][..]
            })
            .arg(&bad)
            .args(if cmd[0] == "plot" {
                &cmd[2..]
            } else {
                &cmd[1..]
            })
            .output()
            .unwrap();
        assert!(!out.status.success(), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{cmd:?}: {err}");
        assert!(err.contains("not a Conifer trace"), "{cmd:?}: {err}");
        assert!(!err.contains("panicked"), "{cmd:?}: {err}");
    }
}

/// NetPIPE (Debian's, `scripts/setup.sh --real-apps`) varies its message size on every
/// repetition block, so its sends and receives become skeleton signatures with value streams:
/// the compressed form reads the sizes from the streams' value counts, and still agrees with
/// full expansion; every message size it sent is in the histogram.
#[test]
fn value_streams_are_counted_without_expansion() {
    let binary = if is_mpich() { "NPmpich2" } else { "NPopenmpi" };
    if !Command::new("which")
        .arg(binary)
        .output()
        .is_ok_and(|o| o.status.success())
    {
        panic!("{binary} is not installed: run scripts/setup.sh --real-apps");
    }
    let scratch = scratch("analysis-netpipe");
    let trace = scratch.join("np.cft");
    {
        let _guard = mpi_lock();
        let mut cmd = Command::new("timeout");
        cmd.arg("300")
            .arg(conifer())
            .args(["run", "-n", "2", "-o"])
            .arg(&trace)
            .current_dir(&scratch)
            .args([binary, "-u", "512", "-o", "np.out"]);
        run_ok(&mut cmd);
    }
    let a = assert_same("NetPIPE", &trace);
    let t = load(&trace);
    assert!(
        !t.record.streams.is_empty(),
        "NetPIPE's trace has value streams"
    );
    // Ranks 0 and 1 only talk to each other: each send of rank r is one message to 1 - r,
    // received by one receive there (the wrappers' own counters).
    let m = &a.matrix;
    let per_rank = |name: &str| {
        t.function_counts()
            .iter()
            .filter(|c| c.name == name)
            .fold(vec![0u64; 2], |mut acc, c| {
                acc.iter_mut().zip(&c.per_rank).for_each(|(x, y)| *x += y);
                acc
            })
    };
    let (sends, recvs) = (per_rank("MPI_Send"), per_rank("MPI_Recv"));
    assert_eq!((m.p2p_messages[1], m.p2p_messages[2]), (sends[0], sends[1]));
    assert_eq!((sends[0], sends[1]), (recvs[1], recvs[0]));
    assert_eq!(m.p2p_messages[0] + m.p2p_messages[3], 0);
    assert!(sends[0] > 1000);
    // NetPIPE's output lists each message size it measured: each is a send size.
    let sizes: std::collections::BTreeSet<u32> = std::fs::read_to_string(scratch.join("np.out"))
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse::<u64>().ok())
        .map(conifer_analyze::bucket)
        .collect();
    let sent: std::collections::BTreeSet<u32> = a.histograms["MPI_Send"].keys().copied().collect();
    assert!(sizes.is_subset(&sent), "{sizes:?} not in {sent:?}");
}

/// comms.c on 4 ranks: halves by parity (`MPI_Comm_split`, comm0), joined by
/// `MPI_Intercomm_create` (comm2); per iteration each rank `MPI_Sendrecv`s one long long
/// with the rank of the same half-rank in the other half, and `MPI_Allreduce`s one long long
/// over the inter-communicator (its data goes to every rank of the remote half).
#[test]
fn inter_communicator_traffic_goes_to_the_remote_group() {
    let iters = 3u64;
    let trace = trace_app(
        &apps_dir(),
        "comms",
        4,
        &[&iters.to_string()],
        false,
        "hand",
    );
    let inter = rows(&json(&["matrix", "--comm", "comm2"], &trace));
    for i in 0..4usize {
        for j in 0..4usize {
            let remote = i % 2 != j % 2;
            let partner = remote && i / 2 == j / 2;
            let expected = match (remote, partner) {
                (true, true) => iters * 16,
                (true, false) => iters * 8,
                _ => 0,
            };
            assert_eq!(inter[i][j], expected, "{i}->{j}");
        }
    }
    // comm0 (the halves): one Allreduce of a long long per iteration within each half.
    let half = rows(&json(&["matrix", "--comm", "comm0"], &trace));
    for i in 0..4usize {
        for j in 0..4usize {
            let same = i != j && i % 2 == j % 2;
            assert_eq!(half[i][j], if same { iters * 8 } else { 0 }, "{i}->{j}");
        }
    }
}

/// onesided.c: per iteration each rank `MPI_Put`s one long long into its right neighbour's
/// window and `MPI_Get`s one from its left neighbour's: data flows r -> r+1 twice (the put
/// from r, the get by r+1), 16 B and two messages per iteration.
#[test]
fn one_sided_data_flows_from_origin_to_target_and_back() {
    let (p, iters) = (4usize, 3u64);
    let trace = trace_app(
        &apps_dir(),
        "onesided",
        p as u32,
        &[&iters.to_string()],
        false,
        "hand",
    );
    let bytes = rows(&json(&["matrix", "--kind", "p2p"], &trace));
    let msgs = rows(&json(
        &["matrix", "--kind", "p2p", "--metric", "messages"],
        &trace,
    ));
    for i in 0..p {
        for j in 0..p {
            let right = j == (i + 1) % p;
            assert_eq!(bytes[i][j], if right { iters * 16 } else { 0 }, "{i}->{j}");
            assert_eq!(msgs[i][j], if right { iters * 2 } else { 0 }, "{i}->{j}");
        }
    }
}

/// ep.c: `MPI_Bcast` of one long long from 0, per iteration an `MPI_Allreduce` of 2 long
/// longs, then `MPI_Reduce` (1 long long) and `MPI_Gather` (1 unsigned long long) to 0 and an
/// `MPI_Scatter` of 2 long longs from 0. Under the collective rule: 0 -> j gets 8 + 16·iters
/// + 16, i -> 0 gets 16·iters + 8 + 8, any other pair 16·iters.
#[test]
fn rooted_collectives_follow_the_rule() {
    let (p, iters) = (4usize, 5u64);
    let trace = trace_app(
        &apps_dir(),
        "ep",
        p as u32,
        &[&iters.to_string()],
        false,
        "hand",
    );
    let coll = rows(&json(&["matrix", "--kind", "coll"], &trace));
    let msgs = rows(&json(
        &["matrix", "--kind", "coll", "--metric", "messages"],
        &trace,
    ));
    for i in 0..p {
        for j in 0..p {
            let (b, m) = match (i, j) {
                _ if i == j => (0, 0),
                (0, _) => (8 + 16 * iters + 16, iters + 2),
                (_, 0) => (16 * iters + 16, iters + 2),
                _ => (16 * iters, iters),
            };
            assert_eq!((coll[i][j], msgs[i][j]), (b, m), "{i}->{j}");
        }
    }
}

/// butterfly.c on 8 ranks (peers stored as xor codes): per iteration a `MPI_Sendrecv` of one
/// long long with r xor k for k = 1, 2, 4, then a binomial reduction where rank r > 0 sends
/// one long long to r - (its lowest set bit).
#[test]
fn butterfly_matrix_is_xor_plus_binomial_tree() {
    let (p, iters) = if is_mpich() { (4usize, 3u64) } else { (8, 3) };
    let trace = trace_app(
        &apps_dir(),
        "butterfly",
        p as u32,
        &[&iters.to_string()],
        false,
        "hand",
    );
    let bytes = rows(&json(&["matrix", "--kind", "p2p"], &trace));
    for i in 0..p {
        for j in 0..p {
            let xor = (i ^ j).is_power_of_two();
            let tree = i > 0 && j == i - (i & i.wrapping_neg());
            let expected = iters * 8 * (u64::from(xor) + u64::from(tree));
            assert_eq!(bytes[i][j], expected, "{i}->{j}");
        }
    }
}

/// In tree mode (stencil2d built with `conifer cc`), call sites are the source lines of
/// stencil2d.c: the `MPI(Isend, ...)` line makes 4 calls per rank and iteration, and sends
/// 64 B for each neighbour that exists (on a 2 × 2 grid: 2 per rank).
#[test]
fn tree_mode_profile_names_source_lines() {
    let (p, iters) = (4u64, 3u64);
    let trace = trace_app(
        &tree_apps_dir(),
        "stencil2d",
        4,
        &[&iters.to_string()],
        true,
        "sites",
    );
    let source = std::fs::read_to_string(repo_root().join("tests/apps/stencil2d.c")).unwrap();
    let line = source
        .lines()
        .position(|l| l.trim_start().starts_with("MPI(Isend,"))
        .unwrap()
        + 1;
    let profile = json(&["profile"], &trace);
    let site = profile["call_sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["source"]
                .as_str()
                .is_some_and(|src| src.ends_with(&format!("stencil2d.c:{line}")))
        })
        .unwrap_or_else(|| panic!("no site at stencil2d.c:{line}: {profile:#}"));
    assert_eq!(site["function"], "MPI_Isend");
    assert_eq!(site["calls"], p * 4 * iters);
    assert_eq!(site["bytes_sent"], p * 2 * 64 * iters);
    assert_eq!(site["site"]["kind"], "tree");
    assert!(site["time_ns"].as_f64().unwrap() > 0.0);
}

/// One signature at two call sites, its count streamed: iteration `it` sends `it % 10 + 1`
/// ints from line A when `it` is odd, from line B when even (20 iterations). The sites'
/// byte totals follow from that (A: Σ over odd it, B: over even it, × 4 B), and the
/// compressed form (which splits the stream's values by site in call order) agrees with full
/// expansion.
#[test]
fn a_streamed_signature_at_two_call_sites() {
    let dir = scratch("analysis-two-sites");
    let source = dir.join("twosites.c");
    std::fs::write(
        &source,
        "#include <mpi.h>\n\
         int main(int argc, char **argv) {\n\
         int rank, buf[16] = {0};\n\
         MPI_Init(&argc, &argv);\n\
         MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n\
         for (int it = 0; it < 20; it++) {\n\
         if (rank == 0) {\n\
         if (it % 2)\n\
         MPI_Send(buf, it % 10 + 1, MPI_INT, 1, 0, MPI_COMM_WORLD); /* line 9: A */\n\
         else\n\
         MPI_Send(buf, it % 10 + 1, MPI_INT, 1, 0, MPI_COMM_WORLD); /* line 11: B */\n\
         } else if (rank == 1) {\n\
         MPI_Recv(buf, 16, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);\n\
         }\n\
         }\n\
         MPI_Finalize();\n\
         return 0;\n\
         }\n",
    )
    .unwrap();
    run_ok(
        Command::new(conifer())
            .args(["cc", &format!("--mpi={}", mpi()), "-O1", "-g", "-o"])
            .arg(dir.join("twosites"))
            .arg(&source),
    );
    let trace = trace_app(&dir, "twosites", 2, &[], true, "tree");
    let a = assert_same("twosites", &trace);
    let t = load(&trace);
    assert!(
        !t.record.streams.is_empty(),
        "the sends' counts are streamed"
    );
    let at_line = |line: u32| {
        a.sites
            .values()
            .find(|s| {
                s.function == "MPI_Send"
                    && s.source
                        .as_deref()
                        .is_some_and(|src| src.ends_with(&format!("twosites.c:{line}")))
            })
            .unwrap_or_else(|| panic!("no MPI_Send site at line {line}: {:?}", a.sites))
            .totals
    };
    let bytes = |odd: bool| -> u64 {
        (0..20u64)
            .filter(|it| (it % 2 == 1) == odd)
            .map(|it| (it % 10 + 1) * 4)
            .sum()
    };
    assert_eq!((at_line(9).calls, at_line(9).bytes_sent), (10, bytes(true)));
    assert_eq!(
        (at_line(11).calls, at_line(11).bytes_sent),
        (10, bytes(false))
    );
}

/// The lines of `source` where a call of each MPI function starts or continues, read from
/// the source text: `MPI(Name, …)` in the C apps, `call MPI_NAME(… &` in Fortran.
fn call_lines(source: &Path) -> std::collections::BTreeMap<String, Vec<u32>> {
    let text = std::fs::read_to_string(source).unwrap();
    let mut lines: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    let mut open: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i as u32 + 1;
        let t = line.trim_start();
        if t.starts_with('*') || t.starts_with("/*") || t.starts_with("//") || t.starts_with('!') {
            continue;
        }
        let c_call = t.find("MPI(").map(|at| {
            let rest = &t[at + 4..];
            &rest[..rest
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(rest.len())]
        });
        let f_call = t
            .strip_prefix("call MPI_")
            .and_then(|r| r.split('(').next());
        let name = match (c_call, f_call) {
            (Some(c), _) if !t.starts_with("#define") => Some(format!("MPI_{c}")),
            (_, Some(f)) => Some(format!("MPI_{}{}", &f[..1], f[1..].to_lowercase())),
            _ => None,
        };
        if let Some(name) = name.or_else(|| open.take()) {
            lines.entry(name.clone()).or_default().push(n);
            if t.ends_with('&') || t.ends_with(',') {
                open = Some(name);
            }
        }
    }
    lines
}

/// Call sites of programs built with plain `mpicc -g` / `mpif90 -g` (no `conifer cc`),
/// recorded by default (stencil2d.c) or asked for with `--callsites` (ring.f90): every call
/// site of `profile` is named by the source line of the MPI call that made it (read from the
/// source, not from Conifer), the calls per site follow from the apps' loops, and the
/// recorded callers survive compression (the trace equals the raw record). `--no-callsites`
/// declines them.
#[test]
fn callsites_name_the_source_lines_of_programs_built_without_conifer_cc() {
    let scratch = scratch("analysis-callsites");
    let apps = repo_root().join("tests/apps");
    let mpi = mpi();
    let cases = [
        ("stencil2d.c", format!("mpicc.{mpi}"), 4u32, 5u64, None),
        (
            "ring.f90",
            format!("mpif90.{mpi}"),
            2,
            3,
            Some("--callsites"),
        ),
        (
            "ring.f90",
            format!("mpif90.{mpi}"),
            2,
            3,
            Some("--no-callsites"),
        ),
    ];
    for (source, compiler, ranks, iters, option) in cases {
        let exe = scratch.join(source.replace('.', "_"));
        run_ok(
            Command::new(&compiler)
                .args(["-g", "-O2", "-I"])
                .arg(&apps)
                .arg("-o")
                .arg(&exe)
                .arg(apps.join(source))
                .arg("-lm"),
        );
        let trace = scratch.join(format!("{source}{}.cft", option.unwrap_or("")));
        {
            let _guard = mpi_lock();
            let mut cmd = conifer_run_raw(ranks, &trace, &scratch);
            cmd.args(option);
            if ranks > 2 && !is_mpich() {
                cmd.arg("--launcher-arg=--oversubscribe");
            }
            run_ok(cmd.arg(&exe).arg(iters.to_string()));
        }
        run_ok(Command::new(conifer()).arg("verify").arg(&trace));
        assert_same(source, &trace);
        let out = run_ok(
            Command::new(conifer())
                .args(["profile", "--json"])
                .arg(&trace),
        );
        let profile: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let sites = profile["call_sites"].as_array().unwrap();
        if option == Some("--no-callsites") {
            assert_eq!(profile["sites_are"], "signature groups", "{source}");
            assert!(sites.iter().all(|s| s["site"]["kind"] != "address"));
            continue;
        }
        assert_eq!(profile["sites_are"], "call sites", "{source}");
        assert!(!sites.is_empty(), "{source}: no call sites");
        for site in sites {
            let function = site["function"].as_str().unwrap();
            let named = site["source"].as_str().unwrap_or("");
            assert_eq!(site["site"]["kind"], "address", "{source}: {site}");
            let (file, line) = named
                .split_whitespace()
                .next()
                .and_then(|p| p.rsplit_once(':'))
                .unwrap_or_else(|| panic!("{source}: {function} site unnamed: {named:?}"));
            let line: u32 = line.parse().unwrap();
            let calls_in_file = call_lines(&apps.join(file));
            assert!(
                calls_in_file
                    .get(function)
                    .is_some_and(|l| l.contains(&line)),
                "{source}: {function} named {named}, but {file}:{line} makes no such call \
                 (its calls: {:?})",
                calls_in_file.get(function)
            );
        }
        // Each loop call is one site, made `iters` times per rank (four neighbours each in
        // the stencil).
        let calls_at = |function: &str| -> Vec<u64> {
            sites
                .iter()
                .filter(|s| s["function"] == function)
                .map(|s| s["calls"].as_u64().unwrap())
                .collect()
        };
        let loop_call = if source.ends_with(".c") {
            "MPI_Isend"
        } else {
            "MPI_Sendrecv"
        };
        let per_iteration = if source.ends_with(".c") { 4 } else { 1 };
        assert_eq!(
            calls_at(loop_call),
            vec![u64::from(ranks) * iters * per_iteration],
            "{source}: {loop_call} sites"
        );
    }
}
