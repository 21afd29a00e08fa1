//! The timeline's aggregated view, for windows with more calls than boxes can show apart
//! ([`DENSE_CALLS`]): the window cut into [`BINS`] equal bins, and in each rank's row, per
//! bin, one bar per function series stacked from the row's foot, its height the share of the
//! bin's time the rank spent in that function's calls (a full row: all of it in MPI; white:
//! between calls). Shares of time on a linear scale.

use super::chart::{axes, err, side_legend, titled, Res};
use super::style::time_unit;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Calls in the window above which the timeline draws shares per bin instead of boxes.
pub const DENSE_CALLS: usize = 10_000;

/// Bins across the window.
pub const BINS: usize = 200;

/// What the aggregated view draws: the calls (row, start, end, series) of a window
/// `[start, end)` ns, and the series' names and colours.
pub struct Dense<'a> {
    /// Calls: row, start, end (ns after the origin), series.
    pub calls: Vec<(u32, u64, u64, usize)>,
    /// Series names and colours.
    pub series: &'a [(String, RGBColor)],
    /// The rank of each row.
    pub ranks: &'a [u32],
    /// The window, ns.
    pub window: (u64, u64),
    /// The chart's title.
    pub title: String,
}

/// Each row's share of each bin's time per series: `[row][bin][series]`.
pub fn shares(d: &Dense) -> Vec<Vec<Vec<f64>>> {
    let (start, end) = d.window;
    let bin = (end - start) as f64 / BINS as f64;
    let mut grid = vec![vec![vec![0.0; d.series.len()]; BINS]; d.ranks.len()];
    for &(row, s, e, k) in &d.calls {
        let (s, e) = ((s - start) as f64, (e.min(end) - start) as f64);
        let first = (s / bin) as usize;
        let last = ((e / bin) as usize).min(BINS - 1);
        for (b, cell) in grid[row as usize]
            .iter_mut()
            .enumerate()
            .take(last + 1)
            .skip(first)
        {
            let (lo, hi) = (b as f64 * bin, (b + 1) as f64 * bin);
            let overlap = e.min(hi) - s.max(lo);
            if overlap > 0.0 {
                cell[k] += overlap / bin;
            }
        }
    }
    grid
}

/// Draws the aggregated view on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, d: &Dense) -> Res {
    let (start, end) = d.window;
    let (div, unit_name) = time_unit(end as f64);
    let bin = (end - start) as f64 / BINS as f64;
    let n = d.ranks.len().max(1);
    let mut legend: Vec<(String, RGBColor)> = d.series.to_vec();
    legend.push(("white: between calls".into(), WHITE));
    let legend_width = 12 * legend.iter().map(|l| l.0.len()).max().unwrap_or(8) as u32 * 3 / 5 + 40;
    let (plot_area, legend_area) =
        area.split_horizontally(area.dim_in_pixel().0.saturating_sub(legend_width));
    let mut chart = titled(&plot_area, d.title.clone(), 20, (45, 60))
        .build_cartesian_2d(start as f64 / div..end as f64 / div, 0.0..n as f64)
        .map_err(err)?;
    let ranks = d.ranks;
    axes(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(format!(
                "time since all ranks left MPI_Init ({unit_name}); bar height: share of each {} \
                 bin in the function",
                conifer_trace::decode::human_time(bin)
            ))
            .y_desc("rank")
            .y_labels(n.min(16) * 2 + 1)
            .y_label_formatter(&|y: &f64| {
                let row = n as f64 - y - 0.5;
                if (row - row.round()).abs() < 1e-6 && row >= 0.0 {
                    ranks
                        .get(row.round() as usize)
                        .map_or(String::new(), u32::to_string)
                } else {
                    String::new()
                }
            }),
    )?;
    let grid = shares(d);
    // Row r spans [n − 1 − r, n − r); its bars fill at most 90% of it.
    let mut boxes: Vec<Vec<[(f64, f64); 2]>> = vec![Vec::new(); d.series.len()];
    for (row, bins) in grid.iter().enumerate() {
        let foot = (n - 1 - row) as f64 + 0.05;
        for (b, cell) in bins.iter().enumerate() {
            let x0 = (start as f64 + b as f64 * bin) / div;
            let x1 = (start as f64 + (b + 1) as f64 * bin) / div;
            let mut at = foot;
            for (k, share) in cell.iter().enumerate() {
                let h = share.min(1.0) * 0.9;
                if h > 0.0 {
                    boxes[k].push([(x0, at), (x1, at + h)]);
                    at += h;
                }
            }
        }
    }
    for (k, (_, colour)) in d.series.iter().enumerate() {
        chart
            .draw_series(boxes[k].iter().map(|c| Rectangle::new(*c, colour.filled())))
            .map_err(err)?;
    }
    side_legend(&legend_area, &legend, 12)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_the_time_in_each_bin() {
        // One rank, window 0-200 ns (1 ns bins): a call 10.5-12 ns of series 0, one 50-150 ns
        // of series 1.
        let series = vec![("a".to_string(), BLACK), ("b".to_string(), RED)];
        let d = Dense {
            calls: vec![(0, 10, 12, 0), (0, 50, 150, 1)],
            series: &series,
            ranks: &[0],
            window: (0, 200),
            title: String::new(),
        };
        let g = shares(&d);
        assert_eq!(g[0][10][0], 1.0);
        assert_eq!(g[0][11][0], 1.0);
        assert_eq!(g[0][12][0], 0.0);
        assert_eq!(
            (g[0][49][1], g[0][50][1], g[0][149][1], g[0][150][1]),
            (0.0, 1.0, 1.0, 0.0)
        );
        let total: f64 = g[0].iter().map(|c| c[1]).sum();
        assert_eq!(total, 100.0);
    }
}
