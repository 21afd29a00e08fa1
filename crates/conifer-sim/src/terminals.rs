//! What each terminal (distinct signature) of a trace is: the MPI function it calls, or a
//! memory record (the program's `free` of a buffer MPI used), which is not an MPI call.

use conifer_trace::Trace;

/// Per terminal, the catalog id of its MPI function; `None` for memory records.
pub fn mpi_functions(trace: &Trace) -> Vec<Option<u16>> {
    let free: Vec<u16> = trace
        .catalog
        .iter()
        .filter(|f| f.name == "free")
        .map(|f| f.id)
        .collect();
    trace
        .record
        .signatures
        .iter()
        .map(|s| {
            let function = conifer_trace::varint::Reader::new(s).u64();
            function
                .and_then(|f| u16::try_from(f).ok())
                .filter(|f| !free.contains(f))
        })
        .collect()
}
