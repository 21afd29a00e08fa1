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
    // Colour bar, on a log2 axis for bytes and log10 for counts, labelled at whole powers.
    let scale = BarScale::new(lmin, lmax, sel.messages);
    let mut cb = ChartBuilder::on(&bar)
        .margin_top(40)
        .margin_bottom(55)
        .margin_right(10)
        .y_label_area_size(70)
        .caption(format!("{unit} (log)"), (FONT, 13))
        .build_cartesian_2d(0f64..1f64, scale.lo..scale.hi)
        .map_err(err)?;
    cb.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(12)
        .y_label_formatter(&|v: &f64| scale.label(*v))
        .label_style((FONT, 12))
        .draw()
        .map_err(err)?;
    let steps = 100;
    let span = scale.hi - scale.lo;
    cb.draw_series((0..steps).map(|s| {
        let lo = scale.lo + span * s as f64 / steps as f64;
        let hi = scale.lo + span * (s + 1) as f64 / steps as f64;
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

/// The colour bar's axis: log base 2 of bytes (labels 1 KiB, 4 KiB, 16 KiB: exactly what
/// `human_bytes` prints) or log base 10 of message counts (1, 10, 100).
struct BarScale {
    base: f64,
    messages: bool,
    lo: f64,
    hi: f64,
}

impl BarScale {
    /// The scale of values whose log10 runs over `lmin..lmax`.
    fn new(lmin: f64, lmax: f64, messages: bool) -> BarScale {
        let base: f64 = if messages { 10.0 } else { 2.0 };
        let to_base = |l: f64| l / base.log10();
        let (lo, hi) = (to_base(lmin), to_base(lmax));
        BarScale {
            base,
            messages,
            lo,
            hi: hi.max(lo + 1e-9),
        }
    }

    /// The label of axis position `v`: the value at whole powers of the base, else none.
    fn label(&self, v: f64) -> String {
        if (v - v.round()).abs() > 1e-6 {
            return String::new();
        }
        let x = self.base.powi(v.round() as i32).round() as u64;
        if self.messages {
            x.to_string()
        } else {
            human_bytes(x)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_labels_are_whole_powers_in_their_own_units() {
        let bytes = BarScale::new(700f64.log10(), 40_000f64.log10(), false);
        assert_eq!(bytes.label(10.0), "1 KiB");
        assert_eq!(bytes.label(14.0), "16 KiB");
        assert_eq!(bytes.label(13.5), "", "no label between powers");
        assert!((bytes.lo - 700f64.log2()).abs() < 1e-9);
        let counts = BarScale::new(0.5, 4.7, true);
        assert_eq!(counts.label(3.0), "1000");
        assert_eq!(counts.label(2.5), "");
    }
}
