//! The `.cft` format, which neither the write side (`conifer-write`, the merge) nor the read
//! side (`conifer-trace`) owns: the section container, varints and columns, recorded values
//! and signatures, the codecs of sections and timelines, clocks and timing statistics, and the
//! data model of a stored trace ([`model::Trace`], [`stored::TraceRecord`], [`forest::Forest`],
//! one rank's [`rank_record::RankRecord`] and a crashed rank's [`partial::PartialRecord`]).

pub use conifer_compress::fast_hash;
pub mod call_time;
pub mod caller;
pub mod catalog_codec;
pub mod clock;
pub mod columns;
pub mod completion;
pub mod completion_fill;
pub mod container;
pub mod exp_golomb;
pub mod forest;
mod forest_codec;
pub mod grid;
pub mod handle;
pub mod histogram;
pub mod log_quantiser;
pub mod lossy_timeline;
pub mod membership;
pub mod meta_codec;
pub mod metadata;
pub mod model;
pub mod packing;
pub mod partial;
pub mod predefined;
pub mod rank;
pub mod rank_column;
pub mod rank_record;
pub mod rank_timing;
pub mod rank_totals;
pub mod record_codec;
pub mod recorded;
pub mod signature;
pub mod stored;
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
pub use metadata::{FunctionCounts, FunctionInfo, Language, Metadata};
pub use model::Trace;
