//! `conifer plot`: pictures of a run as SVG or PNG (plotters), each with a title, axis labels
//! and units: the rank × rank matrix (log colour scale; beyond 256 ranks, blocks of ranks
//! summed), the message-size histogram per function, time per function, time per rank (MPI
//! and between calls: imbalance), and, with lossless timing, a per-rank timeline; and for
//! `conifer sim --sweep`, predicted time against the swept parameter.

mod bars;
mod chart;
mod density;
pub use density::DENSE_CALLS;
mod inputs;
mod matrix;
mod style;
pub mod sweep;
#[cfg(test)]
mod tests;
mod timeline;
pub mod window;

use crate::matrix::Select;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::process::ExitCode;

pub use bars::{functions, ranks, sizes, start_or_end};
use chart::{err, image_rgb, Res};
pub use inputs::Inputs;
pub use matrix::matrix;
pub use timeline::timeline;

/// The pictures `conifer plot` draws.
pub const KINDS: [&str; 5] = ["matrix", "sizes", "functions", "ranks", "timeline"];

/// Draws `kind` on `area`.
pub fn draw<DB: DrawingBackend>(
    kind: &str,
    area: &DrawingArea<DB, Shift>,
    inp: &Inputs,
    sel: Select,
) -> Res {
    style::fonts();
    match kind {
        "matrix" => matrix(area, inp, sel),
        "sizes" => sizes(area, inp),
        "functions" => functions(area, inp),
        "ranks" => ranks(area, inp),
        "timeline" => timeline(area, inp),
        k => Err(unknown(k)),
    }
}

/// The error for a picture kind not in [`KINDS`].
fn unknown(kind: &str) -> String {
    format!("unknown picture {kind:?}: use one of {}", KINDS.join(", "))
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

/// `plot timeline`'s `--from`, `--to` and `--ranks`, as given.
#[derive(Debug, Default)]
pub struct WindowArgs {
    /// `--from`.
    pub from: Option<String>,
    /// `--to`.
    pub to: Option<String>,
    /// `--ranks`.
    pub ranks: Option<String>,
}

/// Runs `conifer plot`.
pub fn run(
    kind: &str,
    file: &Path,
    output: &Path,
    sel: Select,
    window: &WindowArgs,
) -> Result<ExitCode, String> {
    if !KINDS.contains(&kind) {
        return Err(unknown(kind));
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
    let trace = conifer_trace::open(file)?;
    let window = if kind == "timeline" {
        window::Window::parse(
            window.from.as_deref(),
            window.to.as_deref(),
            window.ranks.as_deref(),
            trace.meta.ranks,
        )?
    } else if window.from.is_some() || window.to.is_some() || window.ranks.is_some() {
        return Err("--from, --to and --ranks choose what `plot timeline` draws; the other pictures show the whole run".into());
    } else {
        window::Window::default()
    };
    let analysis = crate::analysis::analyze(&trace, &Default::default())?;
    let times = conifer_analyze::times::times(&trace, &analysis);
    let inp = Inputs {
        trace: &trace,
        analysis: &analysis,
        times: &times,
        name: file
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        window,
    };
    let bytes = if ext.as_deref() == Some("svg") {
        svg(kind, &inp, sel)?.into_bytes()
    } else {
        png(kind, &inp, sel)?
    };
    std::fs::write(output, bytes).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    Ok(ExitCode::SUCCESS)
}
