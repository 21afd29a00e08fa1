//! The analysis every read command starts from: the trace's statistics on its compressed form
//! (or by full expansion, `--expand`), with a progress bar over ranks on a terminal, and the
//! recorded callers named from debug information. Computing only; the commands print.

use crate::output::progress;
use conifer_analyze::{Analysis, Options};
use conifer_trace::Trace;

/// The trace's statistics (compressed form), with a progress bar over ranks on a terminal.
pub fn analyze(trace: &Trace, options: &Options) -> Result<Analysis, String> {
    let bar = progress("analysing", u64::from(trace.meta.ranks));
    let result = conifer_analyze::analyze_with(trace, options, &mut |done, _| {
        if done % 64 == 0 || done == u64::from(trace.meta.ranks) {
            bar.set_position(done)
        }
    });
    bar.finish_and_clear();
    named(trace, result.map_err(|e| e.to_string()))
}

/// `analysis` with its recorded callers named from debug information.
fn named(trace: &Trace, analysis: Result<Analysis, String>) -> Result<Analysis, String> {
    let mut analysis = analysis?;
    conifer_analyze::callers::name_sites(&trace.meta, &mut analysis);
    Ok(analysis)
}

/// The trace's statistics by full expansion (`--expand`, for checking and measuring).
pub fn analyze_expanded(trace: &Trace, options: &Options) -> Result<Analysis, String> {
    let bar = progress("expanding", u64::from(trace.meta.ranks));
    let result =
        conifer_analyze::analyze_expanded(trace, options, &mut |done, _| bar.set_position(done));
    bar.finish_and_clear();
    named(trace, result.map_err(|e| e.to_string()))
}
