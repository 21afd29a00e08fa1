//! Conifer's trace data model and the `.cft` file format.
//!
//! A `.cft` file is a magic number, a format version, and a sequence of length-prefixed,
//! CRC-32-checked sections ending with an `END` section (see `docs/format.md`). The reader
//! rejects foreign, truncated, corrupted or newer files with a [`FormatError`] that says so in
//! one line.

pub mod as_run;
pub mod decode;
pub use conifer_compress::fast_hash;
pub use conifer_format::{
    caller, clock, columns, container, grid, histogram, log_quantiser, lossy_timeline, predefined,
    rank, rank_totals, recorded, streams, timeline, timing, timing_mode, value, varint,
};

pub mod forest;
mod forest_codec;
pub mod int_codes;
mod intern;
pub mod merge;
mod model;
pub mod partial;
pub mod rank_codes;
pub mod rank_record;
mod record_codec;
pub mod stored;
pub mod stream_extract;
pub mod structure_codec;

pub use container::{
    read_sections, section_sizes, write_sections, FormatError, Section, FORMAT_VERSION, MAGIC,
};
pub use model::{FunctionCounts, FunctionInfo, Language, Metadata, Trace};
