//! Conifer's write side: what turns the ranks' records into one stored trace. Each rank's
//! record becomes a one-rank [`TraceRecord`](conifer_format::stored::TraceRecord)
//! ([`merge::of_rank`], which also extracts value streams), adjacent rank ranges are joined
//! ([`merge::absorb`], trace trees by [`forest_build`]), and once all ranks are in, rank fields get
//! the codes most ranks share, integers that differ between ranks making the same calls get per-rank columns and
//! rank-following integers rank-affine codes ([`codes`]: [`rank_codes`],
//! [`value_columns`], then [`int_codes`]).
//! The tracer runs this over MPI at `MPI_Finalize`; `conifer merge` runs it over a crashed
//! run's partial files ([`partial`]). It depends on the format (`conifer-format`) only, never
//! on the read side (`conifer-trace`).

#[cfg(test)]
mod code_choice_tests;
pub mod codes;
mod compaction;
pub mod completion_streams;
mod family_key;
pub mod forest_build;
pub mod int_codes;
mod intern;
pub mod merge;
pub mod partial;
pub mod rank_codes;
mod rank_families;
#[cfg(test)]
mod round_trips;
pub mod stream_extract;
pub mod value_columns;
mod value_fields;
