//! Opening a trace file: the one way every reader gets a [`Trace`] from a path.

use conifer_format::{FormatError, Trace};
use std::fmt;
use std::path::{Path, PathBuf};

/// A trace file that could not be opened: which file, and why, in one line.
#[derive(Debug)]
pub struct OpenError {
    /// The file.
    pub path: PathBuf,
    /// Why it could not be read or parsed.
    pub reason: OpenFailure,
}

/// Why a trace file could not be opened.
#[derive(Debug)]
pub enum OpenFailure {
    /// The file could not be read.
    Io(std::io::Error),
    /// The bytes are not a valid `.cft` trace (foreign, truncated, corrupt or newer).
    Format(FormatError),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            OpenFailure::Io(e) => write!(f, "cannot read {}: {e}", self.path.display()),
            OpenFailure::Format(e) => write!(f, "{}: {e}", self.path.display()),
        }
    }
}

impl std::error::Error for OpenError {}

impl From<OpenError> for String {
    fn from(e: OpenError) -> String {
        e.to_string()
    }
}

/// A trace as read from its file, with the file's bytes (for readers that report section
/// sizes or check the container).
#[derive(Debug)]
pub struct TraceFile {
    /// The file's bytes, as read.
    pub bytes: Vec<u8>,
    /// The parsed trace.
    pub trace: Trace,
}

impl TraceFile {
    /// Reads and parses the trace at `path`.
    pub fn open(path: &Path) -> Result<TraceFile, OpenError> {
        let failed = |reason| OpenError {
            path: path.to_path_buf(),
            reason,
        };
        let bytes = std::fs::read(path).map_err(|e| failed(OpenFailure::Io(e)))?;
        let trace = Trace::from_bytes(&bytes).map_err(|e| failed(OpenFailure::Format(e)))?;
        Ok(TraceFile { bytes, trace })
    }
}

/// Reads and parses the trace at `path`.
///
/// ```no_run
/// let trace = conifer_trace::open("run.cft".as_ref())?;
/// println!("{} ranks, {} signatures", trace.meta.ranks, trace.record.signatures.len());
/// # Ok::<(), conifer_trace::OpenError>(())
/// ```
pub fn open(path: &Path) -> Result<Trace, OpenError> {
    TraceFile::open(path).map(|file| file.trace)
}
