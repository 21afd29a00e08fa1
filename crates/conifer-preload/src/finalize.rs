//! The end of a traced run: at the application's `MPI_Finalize`, every rank hands its record to
//! the pairwise merge (see [`crate::pairwise`]) on a private duplicate of `MPI_COMM_WORLD`, and
//! rank 0 writes the `.cft` file. Failures are reported on stderr and never reach the
//! application.

use crate::mpi::*;
use crate::run_info;
use conifer_trace::merge::Merged;
use conifer_trace::Trace;
use std::ffi::c_int;

fn check(what: &str, rc: c_int) -> Result<(), String> {
    if rc == MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(format!("{what} failed with MPI error {rc}"))
    }
}

/// This rank's record with its call counters and host name.
///
/// # Safety
/// MPI must be initialised.
pub unsafe fn own_record(rank: u32, counts: &[u64]) -> Merged {
    Merged::of_rank(
        rank,
        crate::record::rank_record(),
        run_info::sparse_counts(counts),
        run_info::host_name(),
    )
}

unsafe fn collect_and_write(counts: &[u64]) -> Result<Option<(String, Trace)>, String> {
    let mut comm: MPI_Comm = std::mem::zeroed();
    check(
        "PMPI_Comm_dup",
        PMPI_Comm_dup(conifer_comm_world(), &mut comm),
    )?;
    let (mut rank, mut size) = (0, 0);
    check("PMPI_Comm_rank", PMPI_Comm_rank(comm, &mut rank))?;
    check("PMPI_Comm_size", PMPI_Comm_size(comm, &mut size))?;
    let path = run_info::output_path(size);
    crate::record::write_raw(&format!("{path}.raw"), rank)?;
    let merged = crate::pairwise::merge(own_record(rank as u32, counts), comm);
    check("PMPI_Comm_free", PMPI_Comm_free(&mut comm))?;
    let Some(record) = merged? else {
        return Ok(None);
    };
    let trace = Trace {
        meta: run_info::metadata(size as u32, false),
        catalog: run_info::catalog(&record.signatures),
        record,
    };
    std::fs::write(&path, trace.to_bytes())
        .map_err(|e| format!("cannot write trace to {path}: {e}"))?;
    Ok(Some((path, trace)))
}

/// Merges all ranks' records and writes the trace; rank 0 reports where it went.
pub fn write_trace(counts: &[u64]) {
    // SAFETY: called from the MPI_Finalize wrapper before PMPI_Finalize, so MPI is usable.
    match unsafe { collect_and_write(counts) } {
        Ok(Some((path, trace))) => {
            let calls: u64 = trace
                .record
                .ranks
                .iter()
                .flat_map(|r| &r.counts)
                .map(|c| c.1)
                .sum();
            eprintln!(
                "conifer: trace of {} ranks, {} MPI calls written to {path}",
                trace.meta.ranks, calls
            );
        }
        Ok(None) => {}
        Err(why) => eprintln!("conifer: no trace written: {why}"),
    }
}
