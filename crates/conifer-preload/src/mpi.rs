//! The installed MPI's C interface as bindgen read it from `mpi.h`, plus the constants the
//! runtime needs (from `shim.c`, because `mpi.h` defines them as macros).

#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code,
    clippy::all
)]

include!(concat!(env!("OUT_DIR"), "/mpi_bindings.rs"));

extern "C" {
    /// `MPI_COMM_WORLD`.
    pub fn conifer_comm_world() -> MPI_Comm;
    /// `MPI_UINT64_T`.
    pub fn conifer_type_uint64() -> MPI_Datatype;
    /// `MPI_CHAR`.
    pub fn conifer_type_char() -> MPI_Datatype;
    /// `MPI_MAX_LIBRARY_VERSION_STRING`.
    pub fn conifer_max_library_version_string() -> std::ffi::c_int;
    /// `MPI_MAX_PROCESSOR_NAME`.
    pub fn conifer_max_processor_name() -> std::ffi::c_int;
}
