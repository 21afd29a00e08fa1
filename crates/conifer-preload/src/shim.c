/* Values that mpi.h defines as macros (their representation differs between MPIs), exposed as
 * functions so the Rust runtime gets them exactly as the application does. */
#include <mpi.h>

MPI_Comm conifer_comm_world(void) { return MPI_COMM_WORLD; }
MPI_Datatype conifer_type_uint64(void) { return MPI_UINT64_T; }
MPI_Datatype conifer_type_char(void) { return MPI_CHAR; }
int conifer_max_library_version_string(void) { return MPI_MAX_LIBRARY_VERSION_STRING; }
int conifer_max_processor_name(void) { return MPI_MAX_PROCESSOR_NAME; }
