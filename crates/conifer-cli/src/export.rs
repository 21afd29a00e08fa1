//! `conifer export FORMAT FILE.cft -o OUT`: the trace in another tool's format (see the
//! `conifer-export` crate). Functions a format cannot express are listed once on stderr.

use clap::ValueEnum;
use std::path::Path;
use std::process::ExitCode;

/// The formats `conifer export` writes.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    /// Chrome trace-event JSON (open in ui.perfetto.dev or chrome://tracing); OUT is a file.
    Chrome,
    /// An OTF2 archive (Vampir, Score-P tools, otf2-print); OUT is a new directory.
    Otf2,
    /// SimGrid time-independent traces for SMPI's replay (`smpirun -replay OUT/traces.txt`);
    /// OUT is a directory.
    Simgrid,
}

/// Settings only some formats use.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// simgrid: flop rate turning time between calls into `compute` actions.
    pub flops_per_second: f64,
}

/// Writes `file` as `format` to `output`.
pub fn run(
    format: Format,
    file: &Path,
    output: &Path,
    options: Options,
) -> Result<ExitCode, String> {
    let trace = conifer_trace::open(file)?;
    let started = std::time::Instant::now();
    let mut reconstructed = None;
    let summary = match format {
        Format::Chrome => {
            let f = std::fs::File::create(output)
                .map_err(|e| format!("cannot create {}: {e}", output.display()))?;
            let mut out = std::io::BufWriter::new(f);
            let w = conifer_export::chrome::export(&trace, &mut out)?;
            std::io::Write::flush(&mut out)
                .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
            reconstructed = w.reconstructed;
            format!("{} slices, {} flows", w.slices, w.flows)
        }
        Format::Otf2 => {
            let mut left = conifer_export::Left::default();
            let mut resolver = conifer_analyze::callers::Resolver::new(&trace.meta);
            let w =
                conifer_export::otf2::export(&trace, output, &mut left, &mut |c| resolver.name(c))?;
            if let Some(line) = left.report("otf2") {
                eprintln!("{line}");
            }
            reconstructed = w.reconstructed;
            format!("{} locations, {} events", w.locations, w.events)
        }
        Format::Simgrid => {
            let w = conifer_export::simgrid::export(&trace, output, options.flops_per_second)?;
            if let Some(line) = w.left.report("simgrid") {
                eprintln!("{line}");
            }
            format!(
                "{} rank files and {}, {} actions",
                w.ranks,
                conifer_export::simgrid::LIST,
                w.actions
            )
        }
    };
    eprintln!(
        "conifer: {} written ({summary}, {:.2}s)",
        output.display(),
        started.elapsed().as_secs_f64()
    );
    if let Some(how) = reconstructed {
        eprintln!(
            "conifer: the trace has no per-call timing (record with --timing lossless or \
             lossy:REL for times as run): times {how}"
        );
    }
    Ok(ExitCode::SUCCESS)
}
