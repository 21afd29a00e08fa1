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
    /// `MPI_COMM_SELF`.
    pub fn conifer_comm_self() -> MPI_Comm;
    /// `MPI_COMM_NULL`.
    pub fn conifer_comm_null() -> MPI_Comm;
    /// `MPI_UINT64_T`.
    pub fn conifer_type_uint64() -> MPI_Datatype;
    /// `MPI_CHAR`.
    pub fn conifer_type_char() -> MPI_Datatype;
    /// `MPI_BYTE`.
    pub fn conifer_type_byte() -> MPI_Datatype;
    /// `MPI_BAND`.
    pub fn conifer_op_band() -> MPI_Op;
    /// `MPI_MAX`.
    pub fn conifer_op_max() -> MPI_Op;
    /// `MPI_MAX_LIBRARY_VERSION_STRING`.
    pub fn conifer_max_library_version_string() -> std::ffi::c_int;
    /// `MPI_MAX_PROCESSOR_NAME`.
    pub fn conifer_max_processor_name() -> std::ffi::c_int;
    /// `MPI_THREAD_MULTIPLE`.
    pub fn conifer_thread_multiple() -> std::ffi::c_int;
    /// `PMPI_Comm_f2c`.
    pub fn conifer_f2c_comm(h: std::ffi::c_int) -> MPI_Comm;
    /// `PMPI_Type_f2c`.
    pub fn conifer_f2c_type(h: std::ffi::c_int) -> MPI_Datatype;
    /// `PMPI_Op_f2c`.
    pub fn conifer_f2c_op(h: std::ffi::c_int) -> MPI_Op;
    /// `PMPI_Group_f2c`.
    pub fn conifer_f2c_group(h: std::ffi::c_int) -> MPI_Group;
    /// `PMPI_Info_f2c`.
    pub fn conifer_f2c_info(h: std::ffi::c_int) -> MPI_Info;
    /// `PMPI_Errhandler_f2c`.
    pub fn conifer_f2c_errhandler(h: std::ffi::c_int) -> MPI_Errhandler;
    /// `PMPI_Request_f2c`.
    pub fn conifer_f2c_request(h: std::ffi::c_int) -> MPI_Request;
    /// `PMPI_Request_c2f`.
    pub fn conifer_c2f_request(r: MPI_Request) -> std::ffi::c_int;
    /// `PMPI_Win_f2c`.
    pub fn conifer_f2c_win(h: std::ffi::c_int) -> MPI_Win;
    /// `PMPI_File_f2c`.
    pub fn conifer_f2c_file(h: std::ffi::c_int) -> MPI_File;
    /// `PMPI_Message_f2c`.
    pub fn conifer_f2c_message(h: std::ffi::c_int) -> MPI_Message;
    /// `MPI_ANY_SOURCE`.
    pub fn conifer_any_source() -> std::ffi::c_int;
    /// `MPI_ANY_TAG`.
    pub fn conifer_any_tag() -> std::ffi::c_int;
    /// `MPI_REQUEST_NULL`.
    pub fn conifer_request_null() -> MPI_Request;
    /// `MPI_PROC_NULL`.
    pub fn conifer_proc_null() -> std::ffi::c_int;
    /// `MPI_ROOT`.
    pub fn conifer_root() -> std::ffi::c_int;
    /// `MPI_UNDEFINED`.
    pub fn conifer_undefined() -> std::ffi::c_int;
    /// True (non-zero) for a predefined communicator keyval whose value points to an int.
    pub fn conifer_int_comm_keyval(keyval: std::ffi::c_int) -> std::ffi::c_int;
    /// `MPI_CART` (what `MPI_Topo_test` reports for Cartesian communicators).
    pub fn conifer_cart() -> std::ffi::c_int;
    /// `MPI_ERR_IN_STATUS` (the only return after which statuses carry their errors).
    pub fn conifer_err_in_status() -> std::ffi::c_int;
    /// `MPI_IN_PLACE`.
    pub fn conifer_in_place() -> *const std::ffi::c_void;
    /// `MPI_BOTTOM`.
    pub fn conifer_bottom() -> *const std::ffi::c_void;
    /// `MPI_STATUS_IGNORE`.
    pub fn conifer_status_ignore() -> *const std::ffi::c_void;
    /// `MPI_STATUSES_IGNORE`.
    pub fn conifer_statuses_ignore() -> *const std::ffi::c_void;
    /// `MPI_ERRCODES_IGNORE`.
    pub fn conifer_errcodes_ignore() -> *const std::ffi::c_void;
    /// `MPI_UNWEIGHTED`.
    pub fn conifer_unweighted() -> *const std::ffi::c_void;
    /// `MPI_WEIGHTS_EMPTY`.
    pub fn conifer_weights_empty() -> *const std::ffi::c_void;
}
