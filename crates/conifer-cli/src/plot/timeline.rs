//! The per-rank timeline (lossless or lossy timing only): each rank a row, each MPI call a box
//! coloured by function.

use super::chart::{axes, labelled, legend, titled};
use super::style::{palette, time_unit};
use super::{err, Inputs, Res};
use crate::profile;
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
    let mut end_max = 1u64;
    let width = f64::from(area.dim_in_pixel().0.max(200));
    let mut per_rank: Vec<Vec<(u64, u64, usize)>> = Vec::new();
    let reader = trace.reader();
    for rank in 0..trace.meta.ranks {
        let mut calls = Vec::new();
        // Time runs from the end of MPI_Init, which would dwarf everything else.
        let mut origin = 0u64;
        for call in reader.calls(rank) {
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
    let title = format!("Timeline of MPI calls per rank — {}", inp.name);
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
                "time since the rank's MPI_Init returned ({unit}); MPI_Init not shown"
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
