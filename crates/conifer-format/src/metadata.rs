//! What a trace says about its run: the metadata, the function catalog and per-function call
//! counts.

/// The run a trace was recorded from.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    /// Version of the Conifer that wrote the trace.
    pub conifer_version: String,
    /// The MPI Conifer was built for (`openmpi` / `mpich`).
    pub mpi: String,
    /// `MPI_Get_library_version` of the run.
    pub mpi_library_version: String,
    /// The application's command line, as rank 0 saw it.
    pub command_line: Vec<String>,
    /// Number of ranks in `MPI_COMM_WORLD`.
    pub ranks: u32,
    /// When rank 0 returned from `MPI_Init`, seconds since the Unix epoch.
    pub start_unix_seconds: f64,
    /// True when some rank did not reach `MPI_Finalize` (a trace made by `conifer merge` from
    /// the partial files of a crashed or aborted run).
    pub partial: bool,
    /// Ranks that left no record at all (killed before they could write one); their entries
    /// in the trace are empty.
    pub missing_ranks: Vec<u32>,
    /// Recording options in effect (`timing=lossless`, `relative-tags`, `raw`).
    pub options: Vec<String>,
    /// In a partial trace, why each rank stopped early (`rank 2: SIGSEGV`).
    pub partial_reasons: Vec<String>,
    /// With `--callsites`: the paths of the executable and the shared libraries rank 0 had
    /// loaded, which the signatures' callers name by [`crate::caller::module_key`].
    pub modules: Vec<String>,
}

/// Which language binding a call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// The C binding (`MPI_Send`).
    C,
    /// The mpif.h / `use mpi` Fortran binding (`mpi_send_`).
    Fortran,
}

/// How often each rank called one function through one binding.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCounts {
    /// C spelling of the function (`MPI_Isend`).
    pub name: String,
    /// Binding the calls came through.
    pub language: Language,
    /// Calls per rank, indexed by `MPI_COMM_WORLD` rank.
    pub per_rank: Vec<u64>,
}

/// One wrapped function: what the function ids in signatures stand for.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionInfo {
    /// The id signatures use.
    pub id: u16,
    /// C spelling (`MPI_Isend`).
    pub name: String,
    /// Binding.
    pub language: Language,
    /// Parameter name of each value a signature of this function records, in order.
    pub slots: Vec<String>,
}
