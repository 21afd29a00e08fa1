//! `conifer merge DIR -o FILE.cft`: the partial files a run left when it ended early (one per
//! rank, `rank<R>.cfp`) combined into one trace marked partial.

use conifer_trace::partial::PartialRecord;
use conifer_write::partial::merge_partials;
use std::path::Path;
use std::process::ExitCode;

/// Merges the partial files in `dir` into `out`.
pub fn run(dir: &Path, out: &Path) -> Result<ExitCode, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        format!(
            "cannot read {}: {e} (give the .partial directory a crashed run left)",
            dir.display()
        )
    })?;
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cfp"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "{} holds no partial files (rank<R>.cfp); a run leaves them in <trace>.partial when it ends early",
            dir.display()
        ));
    }
    // A file that cannot be read is reported and left out (its rank then counts as missing),
    // unless no file can be read at all.
    let mut parts = Vec::new();
    let mut problems = Vec::new();
    for f in &files {
        let read = std::fs::read(f)
            .map_err(|e| format!("cannot read {}: {e}", f.display()))
            .and_then(|b| {
                PartialRecord::from_bytes(&b).map_err(|e| format!("{}: {e}", f.display()))
            });
        match read {
            Ok(part) => parts.push(part),
            Err(why) => problems.push(why),
        }
    }
    if parts.is_empty() {
        return Err(problems.swap_remove(0));
    }
    for why in &problems {
        eprintln!("conifer: left out {why}");
    }
    let trace = merge_partials(parts)?;
    std::fs::write(out, trace.to_bytes())
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    println!(
        "partial trace of {} ranks written to {} ({} of them left no file)",
        trace.meta.ranks,
        out.display(),
        trace.meta.missing_ranks.len()
    );
    for reason in &trace.meta.partial_reasons {
        println!("  {reason}");
    }
    Ok(ExitCode::SUCCESS)
}
