//! Bar charts: the message-size histogram per function, time per function and time per
//! rank (in MPI and between calls).

use super::chart::{axes, err, labelled, legend, titled, Res};
use super::inputs::Inputs;
use super::style::{palette, time_unit};
use conifer_analyze::bucket_label;
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
    let mut chart = titled(area, title, 20, (60, 70))
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
    axes(
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("message size (bytes of the call's send buffer, else its receive buffer)")
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
    legend(&mut chart, 13)
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
    let title = format!(
        "Time in MPI per function, all ranks ({}) — {}",
        if inp.times.exact {
            "each call's own time"
        } else {
            "calls x timing-family mean"
        },
        inp.name
    );
    let mut chart = titled(area, title, 18, (45, 190))
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
    axes(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(format!(
                "total time in the function ({unit} axis, log scale)"
            ))
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
                        (lo, SegmentValue::Exact(y)),
                        ((t / div).max(lo), SegmentValue::Exact(y + 1)),
                    ],
                    style,
                )
            }))
            .map_err(err)?;
    }
    Ok(())
}

/// Time per rank: inside MPI, between calls and (where the trace keeps it) the recorder's
/// own time, stacked (load imbalance); exact sums.
pub fn ranks<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs) -> Res {
    area.fill(&WHITE).map_err(err)?;
    let r = conifer_analyze::rank_figures::rank_figures(inp.trace);
    let recorder = |f: &conifer_analyze::rank_figures::RankFigures| f.recorder_ns.unwrap_or(0.0);
    let max = r
        .iter()
        .map(|f| f.busy_ns() + recorder(f))
        .fold(1.0, f64::max);
    let (div, unit) = time_unit(max);
    let n = r.len().max(1) as u32;
    let title = format!("Time per rank: in MPI and between calls — {}", inp.name);
    let mut chart = titled(area, title, 20, (45, 70))
        .build_cartesian_2d(0u32..n, 0f64..max / div * 1.1)
        .map_err(err)?;
    axes(
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("rank")
            .y_desc(format!("time ({unit})"))
            .x_labels(n.min(16) as usize),
    )?;
    let mpi = r.iter().enumerate().map(|(i, f)| {
        let i = i as u32;
        [(i, 0.0), (i + 1, f.mpi_ns / div)]
    });
    labelled(&mut chart, mpi, palette(3).filled(), "in MPI")?;
    let between = r.iter().enumerate().map(|(i, f)| {
        let i = i as u32;
        let lo = f.mpi_ns / div;
        [(i, lo), (i + 1, lo + f.compute_ns / div)]
    });
    let style = palette(0).mix(0.6).filled();
    labelled(&mut chart, between, style, "between MPI calls")?;
    if r.iter().any(|f| f.recorder_ns.is_some()) {
        let own = r.iter().enumerate().map(|(i, f)| {
            let i = i as u32;
            let lo = f.busy_ns() / div;
            [(i, lo), (i + 1, lo + recorder(f) / div)]
        });
        labelled(&mut chart, own, palette(1).filled(), "Conifer's own time")?;
    }
    legend(&mut chart, 13)
}
