//! `conifer sim --sweep … --plot FILE`: predicted run time against the swept parameter.

use super::chart::{axes, err, image_rgb, titled, Res};
use super::style::{fonts, palette, time_unit, FONT};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// A sweep to draw: the parameter, its unit and (value, predicted ns) points.
pub struct Sweep<'a> {
    /// The parameter's key (`L`, `G`, `compute`, ...).
    pub key: &'a str,
    /// The unit of its values (`ns`, `ns/B`, or empty).
    pub unit: &'a str,
    /// (parameter value, predicted time in ns), by increasing value.
    pub points: &'a [(f64, f64)],
    /// The trace's file name (for the title).
    pub name: &'a str,
}

/// Draws `s` on `area`: a line with a marker per point, time from 0.
pub fn sweep<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, s: &Sweep) -> Res {
    fonts();
    area.fill(&WHITE).map_err(err)?;
    let (lo, hi) = s
        .points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| {
            (a.min(*x), b.max(*x))
        });
    let (lo, hi) = if lo < hi {
        (lo, hi)
    } else {
        (lo - 1.0, lo + 1.0)
    };
    let max = s.points.iter().map(|p| p.1).fold(1.0, f64::max);
    let (div, unit) = time_unit(max);
    let title = format!("Predicted run time against {} — {}", s.key, s.name);
    let mut chart = titled(area, title, 20, (45, 80))
        .build_cartesian_2d(lo..hi, 0f64..max / div * 1.1)
        .map_err(err)?;
    let x_desc = if s.unit.is_empty() {
        s.key.to_string()
    } else {
        format!("{} ({})", s.key, s.unit)
    };
    axes(
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(format!("predicted time ({unit})")),
    )?;
    let colour = palette(0);
    let points: Vec<(f64, f64)> = s.points.iter().map(|(x, t)| (*x, t / div)).collect();
    chart
        .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
        .map_err(err)?;
    chart
        .draw_series(points.iter().map(|p| Circle::new(*p, 4, colour.filled())))
        .map_err(err)?;
    chart
        .draw_series(points.iter().map(|(x, y)| {
            Text::new(
                format!("{:.3}", y),
                (*x, *y),
                (FONT, 11).into_font().color(&BLACK),
            )
        }))
        .map_err(err)?;
    Ok(())
}

/// Writes `s` to `output` as SVG or PNG (by its extension).
pub fn write(s: &Sweep, output: &Path) -> Res {
    let (w, h) = (1000, 600);
    let bytes = match output.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => {
            let mut text = String::new();
            {
                let area = SVGBackend::with_string(&mut text, (w, h)).into_drawing_area();
                sweep(&area, s)?;
                area.present().map_err(err)?;
            }
            text.into_bytes()
        }
        Some(e) if e.eq_ignore_ascii_case("png") => {
            let mut rgb = vec![0u8; (w * h * 3) as usize];
            {
                let area = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                sweep(&area, s)?;
                area.present().map_err(err)?;
            }
            let mut out = Vec::new();
            image_rgb(w, h, rgb)?
                .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
                .map_err(|e| format!("cannot encode PNG: {e}"))?;
            out
        }
        _ => {
            return Err(format!(
                "{}: the picture must end in .svg or .png",
                output.display()
            ))
        }
    };
    std::fs::write(output, bytes).map_err(|e| format!("cannot write {}: {e}", output.display()))
}
