//! The report's timeline section (traces with per-call timing): the picture, how to zoom into
//! it, and the trace as Chrome trace-event JSON one click away, for Perfetto.

use conifer_trace::Trace;
use std::path::{Path, PathBuf};

/// Chrome JSON up to this size is embedded in the page (a `data:` link); larger JSON is
/// written beside the page and linked.
pub const EMBEDDED_BYTES: usize = 4 << 20;

/// Where the one-click export went.
pub enum Export {
    /// In the page, as a `data:` URI.
    Embedded(String),
    /// Beside the page, in this file.
    Beside(PathBuf),
}

impl Export {
    /// The trace as Chrome JSON, embedded when small, else written beside `report` (as
    /// `REPORT.chrome.json`).
    pub fn of(trace: &Trace, report: &Path) -> Result<Export, String> {
        use base64::Engine;
        let mut json = Vec::new();
        conifer_export::chrome::export(trace, &mut json)?;
        if json.len() <= EMBEDDED_BYTES {
            let data = base64::engine::general_purpose::STANDARD.encode(&json);
            return Ok(Export::Embedded(format!(
                "data:application/json;base64,{data}"
            )));
        }
        let beside = report.with_extension("chrome.json");
        std::fs::write(&beside, &json)
            .map_err(|e| format!("cannot write {}: {e}", beside.display()))?;
        eprintln!(
            "conifer: the timeline's calls as Chrome JSON written to {} (linked from the report)",
            beside.display()
        );
        Ok(Export::Beside(beside))
    }

    /// The section's note: the link, how to open it, how to zoom.
    pub fn html(&self, trace_name: &str, esc: impl Fn(&str) -> String) -> String {
        let (href, file) = match self {
            Export::Embedded(uri) => (uri.clone(), format!("{trace_name}.chrome.json")),
            Export::Beside(path) => {
                let file = path
                    .file_name()
                    .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
                (file.clone(), file)
            }
        };
        format!(
            "<p class=\"note\"><a class=\"perfetto\" href=\"{}\" download=\"{}\">Download the \
             calls as Chrome trace-event JSON</a> and open it in \
             ui.perfetto.dev (<i>Open trace file</i>; \
             the file stays on your machine) to zoom into any call. Or draw a window: \
             <code>conifer plot timeline {} --from 10ms --to 20ms --ranks 0-3 -o part.svg</code>. \
             Above {} calls the picture shows, per rank, the share of each time bin spent in \
             each function instead of one box per call.</p>\n",
            esc(&href),
            esc(&file),
            esc(trace_name),
            crate::plot::DENSE_CALLS
        )
    }
}
