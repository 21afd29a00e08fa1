//! The per-rank timeline (lossless or lossy timing only): each rank a row, each MPI call a box
//! coloured by function, as run (the recorder's own time included) on rank 0's clock.

use super::chart::{axes, err, labelled, legend, titled, Res};
use super::inputs::Inputs;
use super::style::{palette, time_unit};
use crate::profile;
use conifer_trace::ReadCalls;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Per-rank timeline (lossless or lossy timing): each rank a row, each MPI call a box coloured by
/// function; calls closer than a pixel are merged.
pub fn timeline<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs) -> Res {
    let trace = inp.trace;
    if !profile::per_call(trace) {
        return Err(
            "the timeline needs every call's time: record with --timing lossless or lossy:REL"
                .into(),
        );
    }
    area.fill(&WHITE).map_err(err)?;
    // (rank, start, end, function index)
    let mut boxes: Vec<(u32, u64, u64, usize)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let width = f64::from(area.dim_in_pixel().0.max(200));
    // Every call as run, on rank 0's clock: (start, end, function index) per rank.
    let mut runs: Vec<Vec<(i64, i64, usize)>> = Vec::new();
    // Time runs from the moment every rank had returned from MPI_Init, which would dwarf
    // everything else.
    let mut origin = i64::MIN;
    let reader = trace.reader();
    for rank in 0..trace.meta.ranks {
        let mut calls = Vec::new();
        for call in reader.calls(rank) {
            let call = call.map_err(|e| e.0)?;
            let Some(run) = call.run else {
                continue;
            };
            if matches!(call.name, "MPI_Init" | "MPI_Init_thread") {
                origin = origin.max(run.exit_ns);
                continue;
            }
            if call.name == "free" {
                continue;
            }
            let f = match names.iter().position(|n| n == call.name) {
                Some(f) => f,
                None => {
                    names.push(call.name.to_string());
                    names.len() - 1
                }
            };
            calls.push((run.enter_ns, run.exit_ns, f));
        }
        runs.push(calls);
    }
    let origin = if origin == i64::MIN { 0 } else { origin };
    let at = |t: i64| u64::try_from(t - origin).unwrap_or(0);
    let per_rank: Vec<Vec<(u64, u64, usize)>> = runs
        .into_iter()
        .map(|calls| {
            calls
                .into_iter()
                .filter(|&(_, e, _)| e > origin)
                .map(|(s, e, f)| (at(s), at(e), f))
                .collect()
        })
        .collect();
    let end_max = per_rank
        .iter()
        .flatten()
        .map(|c| c.1)
        .max()
        .unwrap_or(1)
        .max(1);
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
    let title = format!(
        "Timeline of MPI calls per rank, as run on rank 0's clock — {}",
        inp.name
    );
    let mut chart = titled(area, title, 20, (45, 60))
        .build_cartesian_2d(
            0f64..end_max as f64 / div * 1.25,
            (0u32..n - 1).into_segmented(),
        )
        .map_err(err)?;
    axes(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(format!(
                "time since every rank had returned from MPI_Init ({unit}); MPI_Init not shown"
            ))
            .y_desc("rank")
            .y_labels(n.min(16) as usize)
            .y_label_formatter(&|v: &SegmentValue<u32>| match v {
                SegmentValue::CenterOf(r) => r.to_string(),
                _ => String::new(),
            }),
    )?;
    for (f, name) in names.iter().enumerate() {
        let calls = boxes.iter().filter(|b| b.3 == f).map(|&(r, s, e, _)| {
            let e = e.max(s + pixel);
            [
                (s as f64 / div, SegmentValue::Exact(r)),
                (e as f64 / div, SegmentValue::Exact(r + 1)),
            ]
        });
        labelled(&mut chart, calls, palette(f).filled(), name)?;
    }
    legend(&mut chart, 12)
}
