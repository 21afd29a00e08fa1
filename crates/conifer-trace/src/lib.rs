//! Conifer's trace data model and the `.cft` file format.
//!
//! A `.cft` file is a magic number, a format version, and a sequence of length-prefixed,
//! CRC-32-checked sections ending with an `END` section (see `docs/format.md`). The reader
//! rejects foreign, truncated, corrupted or newer files with a [`FormatError`] that says so in
//! one line.

pub mod as_run;
mod call_time;
pub mod caller;
mod catalog_codec;
pub mod clock;
pub mod columns;
mod container;
pub mod decode;
pub use conifer_compress::fast_hash;
pub mod forest;
mod forest_codec;
pub mod grid;
mod handle;
pub mod histogram;
pub mod int_codes;
mod intern;
pub mod log_quantiser;
pub mod lossy_timeline;
mod membership;
pub mod merge;
mod meta_codec;
mod metadata;
mod model;
mod packing;
pub mod partial;
pub mod predefined;
mod rank;
pub mod rank_codes;
pub mod rank_record;
pub mod rank_totals;
mod record_codec;
pub mod recorded;
mod signature;
pub mod stored;
pub mod stream_extract;
pub mod streams;
pub mod structure_codec;
pub mod timeline;
pub mod timing;
pub mod timing_mode;
pub mod value;
pub mod varint;

pub use container::{
    read_sections, section_sizes, write_sections, FormatError, Section, FORMAT_VERSION, MAGIC,
};
pub use model::{FunctionCounts, FunctionInfo, Language, Metadata, Trace};
