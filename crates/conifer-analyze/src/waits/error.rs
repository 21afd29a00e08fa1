//! Why wait states cannot be computed: [`WaitsError`].

/// Why wait states cannot be computed.
#[derive(Debug)]
pub enum WaitsError {
    /// The trace has only aggregate timing.
    NeedsPerCallTiming(String),
    /// The trace could not be read.
    Decode(String),
}

impl std::fmt::Display for WaitsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WaitsError::NeedsPerCallTiming(mode) => write!(
                f,
                "wait states need per-call timing, and this trace has {mode} timing: trace the \
                 run again with `--timing lossless` or `--timing lossy:REL`"
            ),
            WaitsError::Decode(m) => f.write_str(m),
        }
    }
}
