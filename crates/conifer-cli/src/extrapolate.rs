//! `conifer extrapolate A.cft B.cft C.cft --ranks N -o big.cft`: a trace for N ranks from
//! traces of one program at small rank counts (the work is `conifer-extrapolate`'s).

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Extrapolates `inputs` to `ranks` ranks into `output`; a refusal prints one line per call
/// site that cannot be fitted and exits 1.
pub fn run(
    inputs: &[PathBuf],
    ranks: u32,
    output: &Path,
    verbose: bool,
) -> Result<ExitCode, String> {
    let traces = inputs
        .iter()
        .map(|p| conifer_trace::open(p).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, String>>()?;
    let done = match conifer_extrapolate::extrapolate(traces, ranks) {
        Ok(done) => done,
        Err(refusal) if refusal.sites.is_empty() => return Err(refusal.why),
        Err(refusal) => {
            eprintln!("conifer: {}", refusal.why);
            for site in &refusal.sites {
                eprintln!("  {site}");
            }
            return Ok(ExitCode::from(1));
        }
    };
    let bytes = done.trace.to_bytes();
    std::fs::write(output, &bytes)
        .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    let ps: Vec<String> = done.inputs.iter().map(u32::to_string).collect();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "trace of {ranks} ranks extrapolated from P = {} written to {} ({} bytes)",
        ps.join(", "),
        output.display(),
        bytes.len()
    );
    let _ = writeln!(
        s,
        "ranks classed as {}: {} classes; {} fields vary with the run",
        done.classing.name(),
        done.classes,
        done.varying.len()
    );
    if verbose {
        for v in &done.varying {
            let _ = writeln!(s, "  {v}");
        }
    }
    let _ = writeln!(
        s,
        "timing is not extrapolated: each call keeps the mean interval and duration of its call site at P = {}",
        ps.last().map_or("?", String::as_str)
    );
    crate::output::emit(&s)?;
    Ok(ExitCode::SUCCESS)
}
