//! Bar charts: the message-size histogram per function, time per function and time per
//! rank (in MPI and between calls).

use super::chart::{axes, err, labelled, side_legend, titled, Res};
use super::inputs::Inputs;
use super::style::{palette, time_unit, OTHER};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;

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
    let title = format!("Message sizes per function — {}", inp.name);
    let (plot_area, legend_area) =
        area.split_horizontally(area.dim_in_pixel().0.saturating_sub(170));
    let mut chart = titled(&plot_area, title, 20, (60, 70))
        .build_cartesian_2d(
            (0u32..nb * (ns + 1) - 1).into_segmented(),
            (0.8f64..max as f64 * 1.5).log_scale(),
        )
        .map_err(err)?;
    let label = |x: &SegmentValue<u32>| match x {
        SegmentValue::CenterOf(x) if x % (ns + 1) == (ns - 1) / 2 => buckets
            .get((x / (ns + 1)) as usize)
            .map(|&b| bucket_start(b))
            .unwrap_or_default(),
        _ => String::new(),
    };
    axes(
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("message size: bucket from the size shown up to twice it (the call's send buffer, else its receive buffer)")
            .y_desc("calls (log scale)")
            .x_labels((nb * (ns + 1)) as usize)
            .x_label_formatter(&label)
            .y_label_formatter(&|v: &f64| format!("{v:.0}")),
    )?;
    for (s, (name, m)) in series.iter().enumerate() {
        let bars = m.iter().filter_map(|(k, &v)| {
            let b = buckets.iter().position(|x| x == k)? as u32;
            let x = b * (ns + 1) + s as u32;
            Some([
                (SegmentValue::Exact(x), 0.8),
                (SegmentValue::Exact(x + 1), v as f64),
            ])
        });
        labelled(&mut chart, bars, palette(s).filled(), name)?;
    }
    let entries: Vec<(String, RGBColor)> = series
        .iter()
        .enumerate()
        .map(|(s, (name, _))| (name.clone(), palette(s)))
        .collect();
    side_legend(&legend_area, &entries, 13)
}

/// The smallest size of bucket `b` (its label under the bar: short enough not to collide).
fn bucket_start(b: u32) -> String {
    match b {
        0 => "0 B".into(),
        b => conifer_analyze::human_bytes(1u64 << (b - 1)),
    }
}

/// True for the functions of start-up and shutdown (`MPI_Init`, `MPI_Init_thread`,
/// `MPI_Finalize`): charted apart from the run's steady state.
pub fn start_or_end(function: &str) -> bool {
    matches!(function, "MPI_Init" | "MPI_Init_thread" | "MPI_Finalize")
}

/// Time per function (horizontal bars on a linear axis from 0, so a bar's length is
/// proportional to its time), longest first; start-up and shutdown left out and named under
/// the axis.
pub fn functions<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs) -> Res {
    area.fill(&WHITE).map_err(err)?;
    // Memory `free` records (segments MPI used, freed by the program) are not MPI functions.
    let all = inp
        .times
        .functions
        .iter()
        .filter(|(f, _)| f.as_str() != "free");
    let (apart, mut v): (Vec<_>, Vec<_>) = all
        .map(|(f, t)| (f, t.total_ns))
        .partition(|(f, _)| start_or_end(f));
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    v.truncate(15);
    let max = v.first().map_or(1.0, |x| x.1).max(1.0);
    let (div, unit) = time_unit(max);
    let n = v.len().max(1) as u32;
    let title = format!(
        "Time in MPI per function, all ranks ({}) — {}",
        if inp.times.exact {
            "each call's own time"
        } else {
            "calls x timing-family mean"
        },
        inp.name
    );
    let left_out = if apart.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = apart
            .iter()
            .map(|(f, t)| format!("{f} {}", conifer_trace::decode::human_time(*t)))
            .collect();
        format!("; start-up and shutdown apart: {}", names.join(", "))
    };
    let mut chart = titled(area, title, 18, (45, 190))
        .build_cartesian_2d(0.0..max / div * 1.05, (0u32..n - 1).into_segmented())
        .map_err(err)?;
    let names: Vec<String> = v.iter().map(|x| x.0.clone()).collect();
    let label = |y: &SegmentValue<u32>| match y {
        SegmentValue::CenterOf(y) if *y < n => names
            .get((n - 1 - *y) as usize)
            .cloned()
            .unwrap_or_default(),
        _ => String::new(),
    };
    axes(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(format!("total time in the function ({unit}){left_out}"))
            .x_label_formatter(&|v: &f64| conifer_trace::decode::human_time(v * div))
            .y_desc("function")
            .y_labels(n as usize + 1)
            .y_label_formatter(&label),
    )?;
    // The bars, then white outlines to keep neighbouring bars apart.
    for style in [palette(0).filled(), WHITE.stroke_width(6)] {
        chart
            .draw_series(v.iter().enumerate().map(|(i, (_, t))| {
                let y = n - 1 - i as u32;
                Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(y)),
                        (t / div, SegmentValue::Exact(y + 1)),
                    ],
                    style,
                )
            }))
            .map_err(err)?;
    }
    Ok(())
}

/// Time per rank: inside MPI, between calls, start-up and shutdown (`MPI_Init*`,
/// `MPI_Finalize`) apart from the rest of MPI, and (where the trace keeps it) the recorder's
/// own time, stacked in one bar per rank (load imbalance) on a linear axis; exact sums.
pub fn ranks<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs) -> Res {
    area.fill(&WHITE).map_err(err)?;
    let r = conifer_analyze::rank_figures::rank_figures(inp.trace);
    let recorder = |f: &conifer_analyze::rank_figures::RankFigures| f.recorder_ns.unwrap_or(0.0);
    let ends = |f: &conifer_analyze::rank_figures::RankFigures| {
        f.functions
            .iter()
            .filter(|(name, _)| start_or_end(name))
            .map(|(_, ns)| *ns as f64)
            .sum::<f64>()
            .min(f.mpi_ns)
    };
    let max = r
        .iter()
        .map(|f| f.busy_ns() + recorder(f))
        .fold(1.0, f64::max);
    let (div, unit) = time_unit(max);
    let n = r.len().max(1) as u32;
    let mut parts: Vec<(String, RGBColor)> = vec![
        ("in MPI".into(), palette(3)),
        ("between MPI calls".into(), palette(0)),
        ("MPI_Init, MPI_Finalize".into(), OTHER),
    ];
    if r.iter().any(|f| f.recorder_ns.is_some()) {
        parts.push(("Conifer's own time".into(), palette(1)));
    }
    let (plot_area, legend_area) =
        area.split_horizontally(area.dim_in_pixel().0.saturating_sub(170));
    let title = format!("Time per rank: in MPI and between calls — {}", inp.name);
    let mut chart = titled(&plot_area, title, 20, (45, 70))
        .build_cartesian_2d((0u32..n - 1).into_segmented(), 0f64..max / div * 1.05)
        .map_err(err)?;
    // A label under every bar up to 32 ranks, else under every k-th.
    let every = n.div_ceil(32);
    axes(
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("rank")
            .y_desc(format!("time ({unit})"))
            .x_labels(n as usize + 1)
            .x_label_formatter(&|x: &SegmentValue<u32>| match x {
                SegmentValue::CenterOf(x) if x % every == 0 && *x < n => x.to_string(),
                _ => String::new(),
            }),
    )?;
    for (k, (_, colour)) in parts.iter().enumerate() {
        let bars = r.iter().enumerate().map(|(i, f)| {
            let steady = f.mpi_ns - ends(f);
            let (lo, hi) = match k {
                0 => (0.0, steady),
                1 => (steady, steady + f.compute_ns),
                2 => (steady + f.compute_ns, f.busy_ns()),
                _ => (f.busy_ns(), f.busy_ns() + recorder(f)),
            };
            let x = i as u32;
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(x), lo / div),
                    (SegmentValue::Exact(x + 1), hi / div),
                ],
                colour.filled(),
            );
            bar.set_margin(0, 0, 3, 3);
            bar
        });
        chart.draw_series(bars).map_err(err)?;
    }
    side_legend(&legend_area, &parts, 13)
}
