//! Conifer's read side: open a `.cft` trace, read every rank's calls with their arguments and
//! timing, and rebuild the run as it ran on one clock. Every reader (analysis, exports, the
//! simulator, proxies, the Python binding) goes through this crate; it depends on the format
//! (`conifer-format`, re-exported here) and never on the write side (`conifer-write`).
//!
//! - [`open`] / [`TraceFile::open`]: a path to a [`Trace`], with one-line errors.
//! - [`ReadCalls`]: a trace's calls per rank ([`ReadCalls::calls`], or one
//!   [`CallReader`] for many ranks), each a [`Call`] with its function, decoded arguments,
//!   timing and call site.
//! - [`as_run`]: a thread's calls on the synchronised clock, as run or without the recorder.
//! - [`small_map`]: a map that stays a short list while it has few entries.
//!
//! The stored data model ([`Trace`], [`stored::TraceRecord`], grammars and trace trees) is the
//! format's; readers that compute on the compressed form use it directly.
//!
//! ```no_run
//! use conifer_trace::ReadCalls;
//!
//! let trace = conifer_trace::open("run.cft".as_ref())?;
//! let reader = trace.reader();
//! let sends = (0..trace.meta.ranks)
//!     .flat_map(|rank| reader.calls(rank))
//!     .filter(|call| call.as_ref().is_ok_and(|c| c.name == "MPI_Send"))
//!     .count();
//! println!("{sends} MPI_Send calls");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod as_run;
pub mod decode;
mod open;
pub mod small_map;

pub use conifer_compress::fast_hash;
pub use conifer_format::{
    caller, clock, columns, completion, container, forest, grid, histogram, log_quantiser,
    lossy_timeline, partial, predefined, rank, rank_totals, recorded, signature, stored, streams,
    timeline, timing, timing_mode, value, varint,
};
pub use conifer_format::{
    read_sections, section_sizes, FormatError, FunctionCounts, FunctionInfo, Language, Metadata,
    Section, Trace, FORMAT_VERSION, MAGIC,
};
pub use decode::{Call, CallReader, DecodeError, ReadCalls};
pub use open::{open, OpenError, OpenFailure, TraceFile};
