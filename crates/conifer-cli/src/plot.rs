//! `conifer plot`: pictures of a run as SVG or PNG (plotters), each with a title, axis labels
//! and units: the rank × rank matrix (log colour scale; beyond 256 ranks, blocks of ranks
//! summed), the message-size histogram per function, time per function, time per rank (MPI
//! and between calls: imbalance), and, with lossless timing, a per-rank timeline.

use crate::matrix::Select;
use crate::profile::{self, Times};
use conifer_analyze::{bucket_label, human_bytes, Analysis};
use conifer_trace::Trace;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Once;

/// The pictures `conifer plot` draws.
pub const KINDS: [&str; 5] = ["matrix", "sizes", "functions", "ranks", "timeline"];

const FONT: &str = "sans-serif";

/// Registers the bundled font (DejaVu Sans) with plotters' pure-Rust text renderer, once.
fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../assets/DejaVuSans.ttf");
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, bytes);
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, bytes);
    });
}

/// What the pictures are drawn from.
pub struct Inputs<'a> {
    /// The trace.
    pub trace: &'a Trace,
    /// Its analysis.
    pub analysis: &'a Analysis,
    /// Its times.
    pub times: &'a Times,
    /// The trace's file name (for titles).
    pub name: String,
}

type Res = Result<(), String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("drawing failed: {e:?}")
}

/// Viridis, by linear interpolation between 9 of its colours; `t` in [0, 1].
fn viridis(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A distinct colour per series index.
fn palette(i: usize) -> RGBColor {
    const P: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let c = P[i % P.len()];
    RGBColor(c.0, c.1, c.2)
}

/// Time in the unit of the largest value: (divisor, unit name).
fn time_unit(max_ns: f64) -> (f64, &'static str) {
    if max_ns >= 1e9 {
        (1e9, "s")
    } else if max_ns >= 1e6 {
        (1e6, "ms")
    } else if max_ns >= 1e3 {
        (1e3, "us")
    } else {
        (1.0, "ns")
    }
}

/// The matrix heatmap: log10 colour scale, white for zero.
pub fn matrix<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs, sel: Select) -> Res {
    let a = inp.analysis;
    let n = a.ranks.max(1);
    // At most 256 cells a side: beyond that, blocks of ranks are summed.
    let block = n.div_ceil(256).max(1);
    let cells = n.div_ceil(block);
    let mut grid = vec![0u64; (cells * cells) as usize];
    for i in 0..a.ranks {
        for j in 0..a.ranks {
            let v = a.matrix.get(i, j, sel.messages, sel.p2p, sel.coll);
            grid[((i / block) * cells + j / block) as usize] += v;
        }
    }
    let max = grid.iter().copied().max().unwrap_or(0);
    let min = grid.iter().copied().filter(|&v| v > 0).min().unwrap_or(1);
    let (lmin, lmax) = ((min as f64).log10(), (max.max(1) as f64).log10());
    area.fill(&WHITE).map_err(err)?;
    let (main, bar) = area.split_horizontally(area.dim_in_pixel().0.saturating_sub(130));
    let unit = if sel.messages { "messages" } else { "bytes" };
    let blocks = if block > 1 {
        format!(" (blocks of {block} ranks)")
    } else {
        String::new()
    };
    let mut chart = ChartBuilder::on(&main)
        .caption(
            format!("{} {} matrix ({}) — {}", n, "rank", sel.kind(), inp.name),
            (FONT, 20),
        )
        .margin(10)
        .x_label_area_size(62)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (0u32..cells - 1).into_segmented(),
            (0u32..cells - 1).into_segmented(),
        )
        .map_err(err)?;
    let seg = |v: &SegmentValue<u32>| match v {
        SegmentValue::CenterOf(c) => Some(*c),
        _ => None,
    };
    let xfmt = |v: &SegmentValue<u32>| seg(v).map_or(String::new(), |c| (c * block).to_string());
    // Row 0 at the top, as matrices are read.
    let yfmt = |v: &SegmentValue<u32>| {
        seg(v)
            .filter(|&c| c < cells)
            .map_or(String::new(), |c| ((cells - 1 - c) * block).to_string())
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(format!("receiver rank{blocks}"))
        .y_desc(format!("sender rank{blocks}"))
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt)
        .x_labels(cells.min(16) as usize)
        .y_labels(cells.min(16) as usize)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(err)?;
    let colour = |v: u64| -> RGBColor {
        if lmax <= lmin {
            viridis(1.0)
        } else {
            viridis(((v as f64).log10() - lmin) / (lmax - lmin))
        }
    };
    // Row 0 at the top, as matrices are read.
    chart
        .draw_series(
            grid.iter()
                .enumerate()
                .filter(|(_, &v)| v > 0)
                .map(|(k, &v)| {
                    let (i, j) = (k as u32 / cells, k as u32 % cells);
                    let y = cells - 1 - i;
                    Rectangle::new(
                        [
                            (SegmentValue::Exact(j), SegmentValue::Exact(y)),
                            (SegmentValue::Exact(j + 1), SegmentValue::Exact(y + 1)),
                        ],
                        colour(v).filled(),
                    )
                }),
        )
        .map_err(err)?;
    // Colour bar.
    let mut cb = ChartBuilder::on(&bar)
        .margin_top(40)
        .margin_bottom(55)
        .margin_right(10)
        .y_label_area_size(70)
        .caption(format!("{unit} (log)"), (FONT, 13))
        .build_cartesian_2d(0f64..1f64, lmin..lmax.max(lmin + 1e-9))
        .map_err(err)?;
    let log_fmt = |v: &f64| {
        let x = 10f64.powf(*v).round() as u64;
        if sel.messages {
            x.to_string()
        } else {
            human_bytes(x)
        }
    };
    cb.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(6)
        .y_label_formatter(&log_fmt)
        .label_style((FONT, 12))
        .draw()
        .map_err(err)?;
    let steps = 100;
    let span = (lmax - lmin).max(1e-9);
    cb.draw_series((0..steps).map(|s| {
        let lo = lmin + span * s as f64 / steps as f64;
        let hi = lmin + span * (s + 1) as f64 / steps as f64;
        Rectangle::new(
            [(0.0, lo), (1.0, hi)],
            viridis(s as f64 / (steps - 1) as f64).filled(),
        )
    }))
    .map_err(err)?;
    main.draw(&Text::new(
        "sender rank 0 is the top row; white = nothing sent",
        (70, main.dim_in_pixel().1 as i32 - 12),
        (FONT, 12).into_font().color(&BLACK.mix(0.7)),
    ))
    .map_err(err)?;
    Ok(())
}

/// Message-size histogram: calls per size bucket, one bar colour per function.
pub fn sizes<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs) -> Res {
    let h = &inp.analysis.histograms;
    area.fill(&WHITE).map_err(err)?;
    let buckets: Vec<u32> = {
        let mut b: Vec<u32> = h.values().flat_map(|m| m.keys().copied()).collect();
        b.sort_unstable();
        b.dedup();
        b
    };
    // Functions by calls, at most 8 (the rest summed as "other").
    let mut fns: Vec<(&String, u64)> = h.iter().map(|(f, m)| (f, m.values().sum())).collect();
    fns.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let shown: Vec<&String> = fns.iter().take(8).map(|f| f.0).collect();
    let mut series: Vec<(String, BTreeMap<u32, u64>)> = shown
        .iter()
        .map(|f| ((*f).clone(), h[*f].clone()))
        .collect();
    if fns.len() > 8 {
        let mut other = BTreeMap::new();
        for (f, _) in &fns[8..] {
            for (k, v) in &h[*f] {
                *other.entry(*k).or_insert(0) += v;
            }
        }
        series.push(("other".into(), other));
    }
    let max = series
        .iter()
        .flat_map(|(_, m)| m.values())
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    let nb = buckets.len().max(1) as u32;
    let ns = series.len().max(1) as u32;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("Message sizes per function — {}", inp.name),
            (FONT, 20),
        )
        .margin(10)
        .x_label_area_size(60)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (0u32..nb * (ns + 1) - 1).into_segmented(),
            (0.8f64..max as f64 * 1.5).log_scale(),
        )
        .map_err(err)?;
    let label = |x: &SegmentValue<u32>| match x {
        SegmentValue::CenterOf(x) if x % (ns + 1) == (ns - 1) / 2 => buckets
            .get((x / (ns + 1)) as usize)
            .map(|&b| bucket_label(b))
            .unwrap_or_default(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("message size (bytes of the call's send buffer, else its receive buffer)")
        .y_desc("calls (log scale)")
        .x_labels((nb * (ns + 1)) as usize)
        .x_label_formatter(&label)
        .y_label_formatter(&|v: &f64| format!("{v:.0}"))
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(err)?;
    for (s, (name, m)) in series.iter().enumerate() {
        let c = palette(s);
        chart
            .draw_series(m.iter().filter_map(|(k, &v)| {
                let b = buckets.iter().position(|x| x == k)? as u32;
                let x = b * (ns + 1) + s as u32;
                Some(Rectangle::new(
                    [
                        (SegmentValue::Exact(x), 0.8),
                        (SegmentValue::Exact(x + 1), v as f64),
                    ],
                    c.filled(),
                ))
            }))
            .map_err(err)?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 13))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// Time per function (horizontal bars), longest first.
pub fn functions<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs) -> Res {
    area.fill(&WHITE).map_err(err)?;
    let mut v: Vec<(&String, f64)> = inp
        .times
        .functions
        .iter()
        .map(|(f, t)| (f, t.total_ns))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    v.truncate(15);
    let max = v.first().map_or(1.0, |x| x.1).max(1.0);
    let min = v
        .iter()
        .map(|x| x.1)
        .filter(|&t| t > 0.0)
        .fold(max, f64::min);
    let (div, unit) = time_unit(max);
    let n = v.len().max(1) as u32;
    let lo = (min / div / 2.0).max(1e-9);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "Time in MPI per function, all ranks ({}) — {}",
                if inp.times.exact {
                    "each call's own time"
                } else {
                    "calls x timing-family mean"
                },
                inp.name
            ),
            (FONT, 18),
        )
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(190)
        .build_cartesian_2d(
            (lo..max / div * 2.0).log_scale(),
            (0u32..n - 1).into_segmented(),
        )
        .map_err(err)?;
    let names: Vec<String> = v.iter().map(|x| x.0.clone()).collect();
    let label = |y: &SegmentValue<u32>| match y {
        SegmentValue::CenterOf(y) if *y < n => names
            .get((n - 1 - *y) as usize)
            .cloned()
            .unwrap_or_default(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(format!(
            "total time in the function ({unit} axis, log scale)"
        ))
        .x_label_formatter(&|v: &f64| conifer_trace::decode::human_time(v * div))
        .y_desc("function")
        .y_labels(n as usize + 1)
        .y_label_formatter(&label)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(v.iter().enumerate().map(|(i, (_, t))| {
            let y = n - 1 - i as u32;
            Rectangle::new(
                [
                    (lo, SegmentValue::Exact(y)),
                    ((t / div).max(lo), SegmentValue::Exact(y + 1)),
                ],
                palette(0).filled(),
            )
        }))
        .map_err(err)?;
    // White outlines keep neighbouring bars apart.
    chart
        .draw_series(v.iter().enumerate().map(|(i, (_, t))| {
            let y = n - 1 - i as u32;
            Rectangle::new(
                [
                    (lo, SegmentValue::Exact(y)),
                    ((t / div).max(lo), SegmentValue::Exact(y + 1)),
                ],
                WHITE.stroke_width(6),
            )
        }))
        .map_err(err)?;
    Ok(())
}

/// Time per rank: inside MPI and between calls, stacked (load imbalance).
pub fn ranks<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs) -> Res {
    area.fill(&WHITE).map_err(err)?;
    let r = &inp.trace.record.ranks;
    let max = r
        .iter()
        .map(|e| e.time.mpi_ns + e.time.compute_ns)
        .fold(1.0, f64::max);
    let (div, unit) = time_unit(max);
    let n = r.len().max(1) as u32;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("Time per rank: in MPI and between calls — {}", inp.name),
            (FONT, 20),
        )
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0u32..n, 0f64..max / div * 1.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("rank")
        .y_desc(format!("time ({unit})"))
        .x_labels(n.min(16) as usize)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(r.iter().enumerate().map(|(i, e)| {
            let i = i as u32;
            Rectangle::new(
                [(i, 0.0), (i + 1, e.time.mpi_ns / div)],
                palette(3).filled(),
            )
        }))
        .map_err(err)?
        .label("in MPI")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], palette(3).filled()));
    chart
        .draw_series(r.iter().enumerate().map(|(i, e)| {
            let i = i as u32;
            let lo = e.time.mpi_ns / div;
            Rectangle::new(
                [(i, lo), (i + 1, lo + e.time.compute_ns / div)],
                palette(0).mix(0.6).filled(),
            )
        }))
        .map_err(err)?
        .label("between MPI calls")
        .legend(|(x, y)| {
            Rectangle::new([(x, y - 5), (x + 10, y + 5)], palette(0).mix(0.6).filled())
        });
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 13))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// Per-rank timeline (lossless timing): each rank a row, each MPI call a box coloured by
/// function; calls closer than a pixel are merged.
pub fn timeline<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs) -> Res {
    let trace = inp.trace;
    if !profile::lossless(trace) {
        return Err("the timeline needs every call's time: record with --timing lossless".into());
    }
    area.fill(&WHITE).map_err(err)?;
    // (rank, start, end, function index)
    let mut boxes: Vec<(u32, u64, u64, usize)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut end_max = 1u64;
    let width = f64::from(area.dim_in_pixel().0.max(200));
    let mut per_rank: Vec<Vec<(u64, u64, usize)>> = Vec::new();
    for rank in 0..trace.meta.ranks {
        let mut calls = Vec::new();
        // Time runs from the end of MPI_Init, which would dwarf everything else.
        let mut origin = 0u64;
        for call in trace.calls(rank) {
            let call = call.map_err(|e| e.0)?;
            let (Some(start), Some(t)) = (call.start_ns, call.time) else {
                continue;
            };
            if matches!(call.name, "MPI_Init" | "MPI_Init_thread") {
                origin = start + t.duration_ns;
                continue;
            }
            let start = start.saturating_sub(origin);
            let f = match names.iter().position(|n| n == call.name) {
                Some(f) => f,
                None => {
                    names.push(call.name.to_string());
                    names.len() - 1
                }
            };
            let end = start + t.duration_ns;
            end_max = end_max.max(end);
            calls.push((start, end, f));
        }
        per_rank.push(calls);
    }
    let pixel = (end_max as f64 / width).max(1.0) as u64;
    for (rank, calls) in per_rank.into_iter().enumerate() {
        let mut cur: Option<(u64, u64, usize)> = None;
        for (s, e, f) in calls {
            match cur {
                Some((cs, ce, cf)) if cf == f && s <= ce + pixel => cur = Some((cs, e.max(ce), cf)),
                Some(c) => {
                    boxes.push((rank as u32, c.0, c.1, c.2));
                    cur = Some((s, e, f));
                }
                None => cur = Some((s, e, f)),
            }
        }
        if let Some(c) = cur {
            boxes.push((rank as u32, c.0, c.1, c.2));
        }
    }
    let (div, unit) = time_unit(end_max as f64);
    let n = trace.meta.ranks.max(1);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("Timeline of MPI calls per rank — {}", inp.name),
            (FONT, 20),
        )
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(
            0f64..end_max as f64 / div * 1.25,
            (0u32..n - 1).into_segmented(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(format!(
            "time since the rank's MPI_Init returned ({unit}); MPI_Init not shown"
        ))
        .y_desc("rank")
        .y_labels(n.min(16) as usize)
        .y_label_formatter(&|v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(r) => r.to_string(),
            _ => String::new(),
        })
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 15))
        .draw()
        .map_err(err)?;
    for (f, name) in names.iter().enumerate() {
        let c = palette(f);
        chart
            .draw_series(boxes.iter().filter(|b| b.3 == f).map(|&(r, s, e, _)| {
                let e = e.max(s + pixel);
                Rectangle::new(
                    [
                        (s as f64 / div, SegmentValue::Exact(r)),
                        (e as f64 / div, SegmentValue::Exact(r + 1)),
                    ],
                    c.filled(),
                )
            }))
            .map_err(err)?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 12))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// Draws `kind` on `area`.
pub fn draw<DB: DrawingBackend>(
    kind: &str,
    area: &DrawingArea<DB, Shift>,
    inp: &Inputs,
    sel: Select,
) -> Res {
    fonts();
    match kind {
        "matrix" => matrix(area, inp, sel),
        "sizes" => sizes(area, inp),
        "functions" => functions(area, inp),
        "ranks" => ranks(area, inp),
        "timeline" => timeline(area, inp),
        k => Err(format!(
            "unknown picture {k:?}: use one of {}",
            KINDS.join(", ")
        )),
    }
}

/// The picture's size in pixels.
pub fn size(kind: &str) -> (u32, u32) {
    match kind {
        "matrix" => (900, 760),
        _ => (1000, 600),
    }
}

/// `kind` as an SVG document.
pub fn svg(kind: &str, inp: &Inputs, sel: Select) -> Result<String, String> {
    let mut s = String::new();
    {
        let area = SVGBackend::with_string(&mut s, size(kind)).into_drawing_area();
        draw(kind, &area, inp, sel)?;
        area.present().map_err(err)?;
    }
    Ok(s)
}

/// `kind` as PNG bytes.
pub fn png(kind: &str, inp: &Inputs, sel: Select) -> Result<Vec<u8>, String> {
    let (w, h) = size(kind);
    let mut rgb = vec![0u8; (w * h * 3) as usize];
    {
        let area = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(kind, &area, inp, sel)?;
        area.present().map_err(err)?;
    }
    let mut out = Vec::new();
    {
        let img = image_rgb(w, h, rgb)?;
        img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
            .map_err(|e| format!("cannot encode PNG: {e}"))?;
    }
    Ok(out)
}

fn image_rgb(w: u32, h: u32, rgb: Vec<u8>) -> Result<image::RgbImage, String> {
    image::RgbImage::from_raw(w, h, rgb).ok_or_else(|| "bad image buffer".to_string())
}

/// Runs `conifer plot`.
pub fn run(kind: &str, file: &Path, output: &Path, sel: Select) -> Result<ExitCode, String> {
    if !KINDS.contains(&kind) {
        return Err(format!(
            "unknown picture {kind:?}: use one of {}",
            KINDS.join(", ")
        ));
    }
    let ext = output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("svg" | "png")) {
        return Err(format!(
            "{}: the output must end in .svg or .png",
            output.display()
        ));
    }
    let trace = crate::stats::load(file)?;
    let analysis = crate::output::analyze(&trace, &Default::default())?;
    let times = profile::times(&trace, &analysis);
    let inp = Inputs {
        trace: &trace,
        analysis: &analysis,
        times: &times,
        name: file
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
    };
    let bytes = if ext.as_deref() == Some("svg") {
        svg(kind, &inp, sel)?.into_bytes()
    } else {
        png(kind, &inp, sel)?
    };
    std::fs::write(output, bytes).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_analyze::Matrix;

    /// A 1,024-rank analysis whose matrix is a ring (rank r sends 1 MiB to r + 1) plus a
    /// nearest-neighbour band of 1 KiB messages: drawn as 256 × 256 blocks of 4 ranks.
    fn big() -> (Trace, Analysis) {
        let n = 1024u32;
        let mut m = Matrix {
            n,
            p2p_bytes: vec![0; (n * n) as usize],
            p2p_messages: vec![0; (n * n) as usize],
            coll_bytes: vec![0; (n * n) as usize],
            coll_messages: vec![0; (n * n) as usize],
        };
        for r in 0..n {
            let i = (r * n + (r + 1) % n) as usize;
            m.p2p_bytes[i] = 1 << 20;
            m.p2p_messages[i] = 1;
            let j = (r * n + (r + 32) % n) as usize;
            m.coll_bytes[j] = 1 << 10;
            m.coll_messages[j] = 1;
        }
        let trace = Trace {
            meta: conifer_trace::Metadata {
                conifer_version: "0.1.0".into(),
                mpi: "openmpi".into(),
                mpi_library_version: String::new(),
                command_line: vec!["synthetic".into()],
                ranks: n,
                start_unix_seconds: 0.0,
                partial: false,
                missing_ranks: Vec::new(),
                options: Vec::new(),
                partial_reasons: Vec::new(),
            },
            catalog: Vec::new(),
            record: Default::default(),
        };
        let a = Analysis {
            ranks: n,
            functions: Default::default(),
            function_families: Default::default(),
            sites: Default::default(),
            comms: Default::default(),
            per_rank: Vec::new(),
            histograms: Default::default(),
            matrix: m,
            unresolved_calls: 0,
            unknown_functions: 0,
            matrix_comm: None,
        };
        (trace, a)
    }

    #[test]
    fn matrix_of_1024_ranks_is_drawn_in_blocks() {
        let (trace, a) = big();
        let times = Times::default();
        let inp = Inputs {
            trace: &trace,
            analysis: &a,
            times: &times,
            name: "synthetic".into(),
        };
        let all = Select {
            messages: false,
            p2p: true,
            coll: true,
        };
        let svg = svg("matrix", &inp, all).unwrap();
        assert!(svg.contains("blocks of 4 ranks"));
        // 1024 ring entries + 1024 band entries fall into at most 2 × 256 + 256 blocks.
        assert!(svg.matches("<rect").count() < 1000, "too many cells drawn");
        let png = png("matrix", &inp, all).unwrap();
        let img = image::load_from_memory(&png).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), size("matrix"));
        if let Ok(dir) = std::env::var("CONIFER_PLOT_OUT") {
            std::fs::write(format!("{dir}/matrix-1024.png"), &png).unwrap();
        }
    }
}
