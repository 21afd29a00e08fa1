//! The OTF2 C API, as bindgen generated it from the installed headers (see build.rs), and
//! the `OTF2_UNDEFINED_*` values the headers define as cast expressions bindgen cannot read.
#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    missing_docs,
    clippy::all
)]

include!(concat!(env!("OUT_DIR"), "/otf2_bindings.rs"));

/// `OTF2_UNDEFINED_UINT32`.
pub const UNDEFINED_U32: u32 = u32::MAX;
/// `OTF2_UNDEFINED_UINT64`.
pub const UNDEFINED_U64: u64 = u64::MAX;
