/* Values that mpi.h defines as macros (their representation differs between MPIs), exposed as
 * functions so the Rust runtime gets them exactly as the application does. */
#include <mpi.h>
#include <stdint.h>

MPI_Comm conifer_comm_world(void) { return MPI_COMM_WORLD; }
MPI_Comm conifer_comm_self(void) { return MPI_COMM_SELF; }
MPI_Comm conifer_comm_null(void) { return MPI_COMM_NULL; }
MPI_Datatype conifer_type_uint64(void) { return MPI_UINT64_T; }
MPI_Datatype conifer_type_char(void) { return MPI_CHAR; }
MPI_Datatype conifer_type_byte(void) { return MPI_BYTE; }
MPI_Op conifer_op_band(void) { return MPI_BAND; }
MPI_Op conifer_op_max(void) { return MPI_MAX; }
int conifer_max_library_version_string(void) { return MPI_MAX_LIBRARY_VERSION_STRING; }
int conifer_max_processor_name(void) { return MPI_MAX_PROCESSOR_NAME; }
int conifer_thread_multiple(void) { return MPI_THREAD_MULTIPLE; }
int conifer_any_source(void) { return MPI_ANY_SOURCE; }
int conifer_proc_null(void) { return MPI_PROC_NULL; }
int conifer_root(void) { return MPI_ROOT; }
int conifer_undefined(void) { return MPI_UNDEFINED; }
/* True for the predefined communicator attributes, whose value is a pointer to an int. */
int conifer_int_comm_keyval(int k) {
    return k == MPI_TAG_UB || k == MPI_HOST || k == MPI_IO || k == MPI_WTIME_IS_GLOBAL ||
           k == MPI_UNIVERSE_SIZE || k == MPI_APPNUM || k == MPI_LASTUSEDCODE;
}
int conifer_cart(void) { return MPI_CART; }
int conifer_err_in_status(void) { return MPI_ERR_IN_STATUS; }
const void *conifer_in_place(void) { return MPI_IN_PLACE; }
const void *conifer_bottom(void) { return MPI_BOTTOM; }
const void *conifer_status_ignore(void) { return MPI_STATUS_IGNORE; }
const void *conifer_statuses_ignore(void) { return MPI_STATUSES_IGNORE; }
const void *conifer_errcodes_ignore(void) { return MPI_ERRCODES_IGNORE; }
const void *conifer_unweighted(void) { return MPI_UNWEIGHTED; }
const void *conifer_weights_empty(void) { return MPI_WEIGHTS_EMPTY; }

/* Fortran handle conversion: functions in Open MPI, macros in MPICH; the profiling versions,
 * so the conversions Conifer makes are not themselves intercepted. */
MPI_Comm conifer_f2c_comm(MPI_Fint h) { return PMPI_Comm_f2c(h); }
MPI_Datatype conifer_f2c_type(MPI_Fint h) { return PMPI_Type_f2c(h); }
MPI_Op conifer_f2c_op(MPI_Fint h) { return PMPI_Op_f2c(h); }
MPI_Group conifer_f2c_group(MPI_Fint h) { return PMPI_Group_f2c(h); }
MPI_Info conifer_f2c_info(MPI_Fint h) { return PMPI_Info_f2c(h); }
MPI_Errhandler conifer_f2c_errhandler(MPI_Fint h) { return PMPI_Errhandler_f2c(h); }
MPI_Request conifer_f2c_request(MPI_Fint h) { return PMPI_Request_f2c(h); }
MPI_Win conifer_f2c_win(MPI_Fint h) { return PMPI_Win_f2c(h); }
MPI_File conifer_f2c_file(MPI_Fint h) { return PMPI_File_f2c(h); }
MPI_Message conifer_f2c_message(MPI_Fint h) { return PMPI_Message_f2c(h); }
MPI_Fint conifer_c2f_request(MPI_Request r) { return PMPI_Request_c2f(r); }
int conifer_any_tag(void) { return MPI_ANY_TAG; }
MPI_Request conifer_request_null(void) { return MPI_REQUEST_NULL; }
