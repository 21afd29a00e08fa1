//! The report's pictures and opening table, read from the page as headless Chromium renders
//! it (its inline SVG and DOM), on a 4-rank run of jacobi.c with every call's time (over 10⁴
//! calls): the time-per-function bars are as long as the times they show on a linear axis
//! from 0 (their ends where the axis's own tick labels put those times); "At a glance" splits
//! the steady state as the calls `conifer decode --json` prints add up, start-up and shutdown
//! apart; the timeline's aggregated view shades each rank's row as much as the rank was in
//! MPI by the decoded calls; the Chrome JSON a click away holds every call; the run table
//! repeats nothing of "At a glance".

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// Half the last digit of a time as the page prints it ("1.2ms": 0.05 ms), ns.
fn half_digit(text: &str) -> f64 {
    let text = text.trim();
    let unit = &text[text.find(|c: char| c.is_ascii_alphabetic()).unwrap()..];
    let decimals = text.split('.').nth(1).map_or(0, |d| {
        d.chars().take_while(char::is_ascii_digit).count() as i32
    });
    0.5 * 10f64.powi(-decimals) * parse_time(&format!("1{unit}"))
}

/// The inline SVG of the report's picture `kind`.
fn figure<'a>(dom: &'a str, kind: &str) -> &'a str {
    let at = dom
        .find(&format!("data-kind=\"{kind}\""))
        .unwrap_or_else(|| panic!("no {kind} picture"));
    &dom[at..at + dom[at..].find("</figure>").unwrap()]
}

/// The value of attribute `name` in element text `el`.
fn attr(el: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let at = el.find(&key)? + key.len();
    Some(el[at..at + el[at..].find('"')?].to_string())
}

/// Rectangles (x, y, width, height, fill) of an SVG.
fn rects(svg: &str) -> Vec<(f64, f64, f64, f64, String)> {
    svg.split("<rect")
        .skip(1)
        .map(|r| {
            let r = &r[..r.find('>').unwrap()];
            let n = |k: &str| attr(r, k).unwrap().parse::<f64>().unwrap();
            (
                n("x"),
                n("y"),
                n("width"),
                n("height"),
                attr(r, "fill").unwrap(),
            )
        })
        .collect()
}

/// Texts (x, y, content) of an SVG.
fn texts(svg: &str) -> Vec<(f64, f64, String)> {
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let open = &t[..t.find('>').unwrap()];
            let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            let n = |k: &str| attr(open, k).unwrap().parse::<f64>().unwrap();
            (n("x"), n("y"), body.trim().to_string())
        })
        .collect()
}

/// The cells of the per-function table's row of `function` (calls, time, …).
fn function_row(dom: &str, function: &str) -> Vec<String> {
    let table = &dom[dom.find("<h2>Time and data per function</h2>").unwrap()..];
    let table = &table[table.find("<table>").unwrap()..];
    let row = &table[table
        .find(&format!("<td class=\"l\">{function}</td>"))
        .unwrap_or_else(|| panic!("no {function} row"))..];
    row[..row.find("</tr>").unwrap()]
        .split("<td>")
        .skip(1)
        .map(|c| c.split("</td>").next().unwrap().to_string())
        .collect()
}

/// The rows (key, value) of the first table after heading `h2`.
fn facts(dom: &str, h2: &str) -> Vec<(String, String)> {
    let at = dom.find(&format!("<h2>{h2}</h2>")).unwrap();
    let table = &dom[at..at + dom[at..].find("</table>").unwrap()];
    table
        .split("<tr>")
        .skip(1)
        .map(|r| {
            let cells: Vec<&str> = r
                .split("<td")
                .skip(1)
                .map(|c| {
                    let c = &c[c.find('>').unwrap() + 1..];
                    &c[..c.find("</td>").unwrap()]
                })
                .collect();
            (cells[0].to_string(), cells[1].replace("&amp;", "&"))
        })
        .collect()
}

const START_OR_END: [&str; 3] = ["MPI_Init", "MPI_Init_thread", "MPI_Finalize"];

#[test]
fn the_reports_pictures_show_what_the_numbers_say() {
    let dir = scratch("report-pictures");
    let trace = traced(
        &dir,
        "jacobi",
        4,
        &["--timing", "lossless"],
        &apps_dir().join("jacobi"),
        &["64", "1e-3", "500"],
    );
    let html = dir.join("report.html");
    run_ok(
        Command::new(conifer())
            .arg("report")
            .arg(&trace)
            .arg("-o")
            .arg(&html),
    );
    let dom = dump_dom(&html, &dir.join("chromium-profile"));
    let calls: Vec<Value> = decode_all(&trace);
    assert!(calls.len() > 10_000, "{} calls", calls.len());

    // Time per function: one bar per function of the table (start-up and shutdown apart),
    // every bar from the same x, its end where the axis's tick labels put its time.
    let svg = figure(&dom, "functions");
    assert!(!svg.contains("log"), "no log axis");
    let bars: Vec<(f64, f64, f64, f64, String)> = rects(svg)
        .into_iter()
        .filter(|r| r.4 == "#1F77B4")
        .collect();
    let labels = texts(svg);
    let ticks: Vec<(f64, f64)> = labels
        .iter()
        .filter(|t| t.1 > 500.0 && t.2.ends_with('s') && !t.2.contains(' '))
        .map(|t| (t.0, parse_time(&t.2)))
        .collect();
    assert!(ticks.len() >= 3, "{ticks:?}");
    let (a, b) = (ticks[0], ticks[ticks.len() - 1]);
    let px_per_ns = (b.0 - a.0) / (b.1 - a.1);
    let x_of = |ns: f64| a.0 + (ns - a.1) * px_per_ns;
    // Function names down the axis, top to bottom.
    let mut names: Vec<(f64, String)> = labels
        .iter()
        .filter(|t| t.2.starts_with("MPI_") && t.0 < 200.0)
        .map(|t| (t.1, t.2.clone()))
        .collect();
    names.sort_by(|x, y| x.0.total_cmp(&y.0));
    assert!(names.iter().all(|n| !START_OR_END.contains(&n.1.as_str())));
    let mut bars = bars;
    bars.sort_by(|x, y| x.1.total_cmp(&y.1));
    assert_eq!(bars.len(), names.len(), "a bar per function named");
    for (bar, (_, name)) in bars.iter().zip(&names) {
        let shown = function_row(&dom, name)[1].clone();
        let time = parse_time(&shown);
        let end = bar.0 + bar.2;
        eprintln!(
            "{name}: {time} ns, bar {}..{end}, axis puts it at {}",
            bar.0,
            x_of(time)
        );
        assert!(
            (bar.0 - x_of(0.0)).abs() <= 1.0,
            "{name}: the bar starts at 0"
        );
        // 1 px of rounding, and the table's last digit.
        assert!(
            (end - x_of(time)).abs() <= 1.0 + half_digit(&shown) * px_per_ns,
            "{name}: bar ends at {end}, its {time} ns at {}",
            x_of(time)
        );
    }

    // At a glance: the steady state as the decoded calls add up (durations and intervals,
    // without the recorder), MPI_Init and MPI_Finalize apart.
    let (mut mpi, mut compute, mut init, mut finalize) = (0.0, 0.0, 0.0, 0.0);
    for c in &calls {
        let duration = c["duration_ns"].as_f64().unwrap();
        compute += c["interval_ns"].as_f64().unwrap();
        match c["function"].as_str().unwrap() {
            "free" => {}
            "MPI_Init" | "MPI_Init_thread" => init += duration,
            "MPI_Finalize" => finalize += duration,
            _ => mpi += duration,
        }
    }
    let glance: BTreeMap<String, String> = facts(&dom, "At a glance").into_iter().collect();
    let steady = &glance["steady state (without the recorder)"];
    let words: Vec<&str> = steady.split([' ', '(', ')', '%', ',']).collect();
    let at = words.iter().position(|w| *w == "computation").unwrap();
    // Within the page's last digit.
    let close = |shown: &str, want: f64| (parse_time(shown) - want).abs() <= half_digit(shown);
    assert!(close(words[1], mpi), "{steady}: MPI {mpi} ns");
    assert!(
        close(words[at + 1], compute),
        "{steady}: computation {compute} ns"
    );
    let share = 100.0 * mpi / (mpi + compute);
    assert!(
        steady.contains(&format!("({share:.1}%)")),
        "{steady}: {share:.1}%"
    );
    let apart = &glance["apart: start-up and shutdown"];
    let shown_init = apart.split("MPI_Init ").nth(1).unwrap();
    let shown_init = shown_init.split(',').next().unwrap();
    let shown_fin = apart.split("MPI_Finalize ").nth(1).unwrap();
    let shown_fin = shown_fin.split(' ').next().unwrap();
    assert!(
        close(shown_init, init) && close(shown_fin, finalize),
        "{apart}"
    );
    assert!(glance["apart: the recorder's own time"].contains("on top of the steady state"));

    // The run table says nothing "At a glance" said.
    for (key, _) in facts(&dom, "Run") {
        assert!(!glance.contains_key(&key), "{key} twice");
    }

    // The timeline, aggregated: per rank row, the shaded share of the plot is the share of
    // the window (every rank back from MPI_Init to the last return) the rank was in MPI.
    let svg = figure(&dom, "timeline");
    assert!(
        svg.contains("share of time per bin"),
        "aggregated above 10⁴ calls"
    );
    let runs: Vec<(usize, &str, i64, i64)> = calls
        .iter()
        .map(|c| {
            (
                c["rank"].as_u64().unwrap() as usize,
                c["function"].as_str().unwrap(),
                c["run"]["enter_ns"].as_i64().unwrap(),
                c["run"]["exit_ns"].as_i64().unwrap(),
            )
        })
        .collect();
    let origin = runs
        .iter()
        .filter(|r| r.1.starts_with("MPI_Init"))
        .map(|r| r.3)
        .max()
        .unwrap();
    let end = runs.iter().map(|r| r.3).max().unwrap();
    let mut in_mpi = [0.0f64; 4];
    for &(rank, f, s, e) in &runs {
        if f != "free" && !f.starts_with("MPI_Init") {
            in_mpi[rank] += (e.min(end) - s.max(origin)).max(0) as f64;
        }
    }
    // Row centres from the rank labels.
    let rows: Vec<(f64, usize)> = texts(svg)
        .iter()
        .filter(|t| t.0 < 70.0)
        .filter_map(|t| t.2.parse::<usize>().ok().map(|r| (t.1, r)))
        .collect();
    assert_eq!(rows.len(), 4, "{rows:?}");
    let row_height = (rows[0].0 - rows[1].0).abs();
    let cells: Vec<(f64, f64, f64, f64, String)> = rects(svg)
        .into_iter()
        .filter(|r| r.2 < 10.0 && r.4 != "#FFFFFF" && r.0 > 60.0)
        .collect();
    let x0 = cells.iter().map(|r| r.0).fold(f64::MAX, f64::min);
    let x1 = cells.iter().map(|r| r.0 + r.2).fold(0.0, f64::max);
    let mut shaded = [0.0f64; 4];
    for r in &cells {
        let centre = r.1 + r.3 / 2.0;
        let &(_, rank) = rows
            .iter()
            .min_by(|a, b| (a.0 - centre).abs().total_cmp(&(b.0 - centre).abs()))
            .unwrap();
        shaded[rank] += r.2 * r.3;
    }
    for rank in 0..4 {
        let drawn = shaded[rank] / ((x1 - x0) * row_height * 0.9);
        let want = in_mpi[rank] / (end - origin) as f64;
        eprintln!("rank {rank}: shaded {drawn:.3} of its row, in MPI {want:.3} of the window");
        assert!(
            (drawn - want).abs() <= 0.04,
            "rank {rank}: {drawn} vs {want}"
        );
    }

    // One click to Perfetto: the link's Chrome JSON (embedded or beside) holds every call.
    let at = dom.find("class=\"perfetto\"").expect("a Chrome JSON link");
    let href = attr(&dom[at - 3..], "href").unwrap();
    let json: Value = if let Some(data) = href.strip_prefix("data:application/json;base64,") {
        use base64::Engine;
        serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap(),
        )
        .unwrap()
    } else {
        serde_json::from_slice(&std::fs::read(dir.join(&href)).unwrap()).unwrap()
    };
    let slices = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .count();
    let mpi_calls = calls.iter().filter(|c| c["function"] != "free").count();
    assert_eq!(slices, mpi_calls);
}
