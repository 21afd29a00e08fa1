//! The rank × rank matrix heatmap, with its colour bar; beyond 256 ranks, blocks of ranks
//! are summed.

use super::chart::{err, titled, Res};
use super::inputs::Inputs;
use super::style::{viridis, FONT};
use crate::matrix::Select;
use conifer_analyze::human_bytes;
use plotters::coord::Shift;
use plotters::prelude::*;

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
    let title = format!("{} {} matrix ({}) — {}", n, "rank", sel.kind(), inp.name);
    let mut chart = titled(&main, title, 20, (62, 60))
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
