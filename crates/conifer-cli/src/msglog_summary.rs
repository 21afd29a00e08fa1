//! What a trace's message log (`T.cft.msglog/`, `conifer run --log-messages`) holds, for
//! `conifer stats`: the ranks logged, the log's size on disk, and the received data it
//! carries before and after storing identical payloads once.

use std::path::Path;

/// A message log's size.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MessageLogSize {
    /// Ranks with a log.
    pub ranks: u64,
    /// Bytes of the logs on disk (compressed).
    pub bytes: u64,
    /// Received data the logs hold, before deduplication.
    pub data_bytes: u64,
    /// Received data written once per distinct payload.
    pub unique_bytes: u64,
}

/// The size of the message log of the trace at `trace`, if it has one.
pub fn of(trace: &Path) -> Option<MessageLogSize> {
    let dir = crate::replay::log_dir(trace);
    let mut size = MessageLogSize::default();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("rank-") && name.ends_with(".log") {
            size.ranks += 1;
            size.bytes += entry.metadata().map_or(0, |m| m.len());
        } else if name.starts_with("rank-") && name.ends_with(".json") {
            let summary: serde_json::Value = std::fs::read(entry.path())
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            size.data_bytes += summary["data_bytes"].as_u64().unwrap_or(0);
            size.unique_bytes += summary["unique_bytes"].as_u64().unwrap_or(0);
        }
    }
    (size.ranks > 0).then_some(size)
}

impl MessageLogSize {
    /// One line for `conifer stats`.
    pub fn line(&self) -> String {
        format!(
            "{} ranks logged, {} bytes on disk, holding {} bytes of received data ({} distinct)",
            self.ranks, self.bytes, self.data_bytes, self.unique_bytes
        )
    }
}
