//! The per-rank timeline (lossless or lossy timing only): each rank a row, each MPI call a box
//! coloured by function, as run (the recorder's own time included) on rank 0's clock; a time
//! window and a range of ranks can be picked ([`Window`]).

use super::chart::{axes, err, side_legend, titled, Res};
use super::density::{Dense, DENSE_CALLS};
use super::inputs::Inputs;
use super::style::{named, time_unit, NAMED_COLOURS, OTHER};
use super::window::Window;
use conifer_trace::{ReadCalls, Trace};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One call as drawn: rank row, start and end (ns after the origin), function index.
type Span = (u32, u64, u64, usize);

/// The calls of the window's ranks, as run, with times from the moment every rank had returned
/// from `MPI_Init` (which would dwarf everything else, and is not drawn); memory `free`
/// records are not MPI calls and are left out. Returns the calls and the function names.
fn calls_in(trace: &Trace, window: &Window) -> Result<(Vec<Span>, Vec<String>), String> {
    let mut names: Vec<String> = Vec::new();
    let mut runs: Vec<(u32, i64, i64, usize)> = Vec::new();
    let mut origin = i64::MIN;
    let reader = trace.reader();
    for rank in 0..trace.meta.ranks {
        for call in reader.calls(rank) {
            let call = call.map_err(|e| e.0)?;
            let Some(run) = call.run else {
                continue;
            };
            if matches!(call.name, "MPI_Init" | "MPI_Init_thread") {
                origin = origin.max(run.exit_ns);
                continue;
            }
            if call.name == "free" || !window.has_rank(rank) {
                continue;
            }
            let f = match names.iter().position(|n| n == call.name) {
                Some(f) => f,
                None => {
                    names.push(call.name.to_string());
                    names.len() - 1
                }
            };
            runs.push((rank, run.enter_ns, run.exit_ns, f));
        }
    }
    let origin = if origin == i64::MIN { 0 } else { origin };
    let from = window.from_ns.unwrap_or(0);
    let to = window.to_ns.unwrap_or(u64::MAX);
    let at = |t: i64| u64::try_from(t - origin).unwrap_or(0);
    let spans: Vec<Span> = runs
        .into_iter()
        .filter(|&(_, _, e, _)| e > origin)
        .map(|(r, s, e, f)| (r, at(s), at(e), f))
        .filter(|&(_, s, e, _)| e >= from && s <= to)
        .map(|(r, s, e, f)| (r, s.max(from), e.min(to), f))
        .collect();
    // Only the functions called in the window.
    let mut kept: Vec<Option<usize>> = vec![None; names.len()];
    let mut shown = Vec::new();
    for &(_, _, _, f) in &spans {
        if kept[f].is_none() {
            kept[f] = Some(shown.len());
            shown.push(names[f].clone());
        }
    }
    let spans = spans
        .into_iter()
        .map(|(r, s, e, f)| (r, s, e, kept[f].unwrap_or(0)))
        .collect();
    Ok((spans, shown))
}

/// The series drawn: the functions with the most time in the window get a colour each, the
/// rest one "other" series. Returns, per function index, its series, and the series' names and
/// colours.
fn series(spans: &[Span], names: &[String]) -> (Vec<usize>, Vec<(String, RGBColor)>) {
    let mut time = vec![0u64; names.len()];
    for &(_, s, e, f) in spans {
        time[f] += e - s;
    }
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| time[b].cmp(&time[a]).then(names[a].cmp(&names[b])));
    let own = if names.len() <= NAMED_COLOURS {
        names.len()
    } else {
        NAMED_COLOURS - 1
    };
    let mut of = vec![own; names.len()];
    let mut drawn: Vec<(String, RGBColor)> = Vec::new();
    for (i, &f) in order.iter().take(own).enumerate() {
        of[f] = i;
        drawn.push((names[f].clone(), named(i)));
    }
    if own < names.len() {
        drawn.push((format!("other ({} functions)", names.len() - own), OTHER));
    }
    (of, drawn)
}

/// Per-rank timeline (lossless or lossy timing): each rank a row, each MPI call a box coloured
/// by function; calls of one series closer than a pixel are merged. A window of more than
/// [`DENSE_CALLS`] calls is drawn aggregated ([`super::density`]): boxes that close would
/// merge into a solid band.
pub fn timeline<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, inp: &Inputs) -> Res {
    let trace = inp.trace;
    if !conifer_analyze::times::per_call(trace) {
        return Err(
            "the timeline needs every call's time: record with --timing lossless or lossy:REL"
                .into(),
        );
    }
    area.fill(&WHITE).map_err(err)?;
    let window = &inp.window;
    let (spans, names) = calls_in(trace, window)?;
    let (of, drawn) = series(&spans, &names);
    let ranks: Vec<u32> = (0..trace.meta.ranks)
        .filter(|&r| window.has_rank(r))
        .collect();
    let row = |r: u32| ranks.iter().position(|&x| x == r).unwrap_or(0) as u32;
    let start = window.from_ns.unwrap_or(0);
    let end = window
        .to_ns
        .unwrap_or_else(|| spans.iter().map(|s| s.2).max().unwrap_or(1))
        .max(start + 1);
    let unit = time_unit(end as f64);
    let what = window.describe(unit);
    let title = |how: &str| {
        format!(
            "Timeline of MPI calls per rank{how}, as run{} — {}",
            if what.is_empty() {
                String::new()
            } else {
                format!(" ({what})")
            },
            inp.name
        )
    };
    if spans.len() > DENSE_CALLS {
        let d = Dense {
            title: title(&format!(" ({} calls, share of time per bin)", spans.len())),
            calls: spans
                .iter()
                .map(|&(r, s, e, f)| (row(r), s, e, of[f]))
                .collect(),
            series: &drawn,
            ranks: &ranks,
            window: (start, end),
        };
        return super::density::draw(area, &d);
    }
    let width = f64::from(area.dim_in_pixel().0.max(200));
    let pixel = (((end - start) as f64) / width).max(1.0) as u64;
    // Boxes per series, neighbours closer than a pixel merged.
    let mut boxes: Vec<Vec<(u32, u64, u64)>> = vec![Vec::new(); drawn.len()];
    let mut last: Vec<Option<(u32, u64, u64)>> = vec![None; drawn.len()];
    for &(r, s, e, f) in &spans {
        let k = of[f];
        match &mut last[k] {
            Some((lr, _, le)) if *lr == r && s <= *le + pixel => *le = (*le).max(e),
            slot => {
                if let Some(done) = slot.take() {
                    boxes[k].push(done);
                }
                *slot = Some((r, s, e));
            }
        }
    }
    for (k, l) in last.into_iter().enumerate() {
        boxes[k].extend(l);
    }
    let (div, unit_name) = unit;
    let n = ranks.len().max(1) as u32;
    let title = title("");
    let legend_width = 12 * drawn.iter().map(|d| d.0.len()).max().unwrap_or(8) as u32 * 3 / 5 + 40;
    let (plot_area, legend_area) =
        area.split_horizontally(area.dim_in_pixel().0.saturating_sub(legend_width));
    let mut chart = titled(&plot_area, title, 20, (45, 60))
        .build_cartesian_2d(
            start as f64 / div..end as f64 / div,
            (0u32..n - 1).into_segmented(),
        )
        .map_err(err)?;
    axes(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(format!(
                "time since every rank had returned from MPI_Init ({unit_name}); MPI_Init not shown"
            ))
            .y_desc("rank")
            .y_labels(n.min(16) as usize)
            .y_label_formatter(&|v: &SegmentValue<u32>| match v {
                SegmentValue::CenterOf(i) => {
                    ranks.get(*i as usize).map_or(String::new(), u32::to_string)
                }
                _ => String::new(),
            }),
    )?;
    for (k, (_, colour)) in drawn.iter().enumerate() {
        let calls = boxes[k].iter().map(|&(r, s, e)| {
            let e = e.max(s + pixel);
            [
                (s as f64 / div, SegmentValue::Exact(row(r))),
                (e as f64 / div, SegmentValue::Exact(row(r) + 1)),
            ]
        });
        chart
            .draw_series(calls.map(|c| Rectangle::new(c, colour.filled())))
            .map_err(err)?;
    }
    side_legend(&legend_area, &drawn, 12)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_shown_has_its_own_colour_and_the_rest_are_other() {
        let names: Vec<String> = (0..12).map(|i| format!("MPI_F{i}")).collect();
        // Function i spends (i + 1) × 10 ns: F11 the most.
        let spans: Vec<Span> = (0..12).map(|i| (0, 0, (i as u64 + 1) * 10, i)).collect();
        let (of, drawn) = series(&spans, &names);
        assert_eq!(drawn.len(), NAMED_COLOURS);
        assert_eq!(drawn[0].0, "MPI_F11");
        assert_eq!(drawn.last().unwrap().0, "other (4 functions)");
        let colours: std::collections::HashSet<_> = drawn.iter().map(|d| d.1).collect();
        assert_eq!(colours.len(), drawn.len(), "two series share a colour");
        assert_eq!(
            of[0],
            NAMED_COLOURS - 1,
            "the least-used function is in other"
        );
        // With few functions, no "other".
        let (_, few) = series(&spans[..3], &names[..3]);
        assert_eq!(few.len(), 3);
        assert!(few.iter().all(|d| d.1 != OTHER));
    }
}
