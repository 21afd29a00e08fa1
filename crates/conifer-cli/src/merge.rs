//! `conifer merge DIR -o FILE.cft`: the partial files a run left when it ended early (one per
//! rank, `rank<R>.cfp`) combined into one trace marked partial.

use conifer_trace::partial::{merge_partials, PartialRecord};
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
    let parts = files
        .iter()
        .map(|f| {
            let bytes =
                std::fs::read(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            PartialRecord::from_bytes(&bytes).map_err(|e| format!("{}: {e}", f.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
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
