//! The inter-process merge: log2 P pairwise rounds over a private communicator, through PMPI
//! so none of it appears in the trace. In round k (step s = 2^k), a rank whose number is an
//! odd multiple of s sends its partly merged record to the rank s below it and is done; the
//! receiver absorbs it, keeping rank order. Rank 0 ends with the whole run. Each record crosses
//! the network once per round it survives, so the work is O(n log P) for records of size n.

use crate::mpi::*;
use conifer_format::stored::TraceRecord;
use std::ffi::c_int;
use std::time::{Duration, Instant};

/// Largest message piece: MPI counts are `int`.
const PIECE: usize = 1 << 30;
/// Length sent instead of a record when the sender's part of the merge failed.
const FAILED: u64 = u64::MAX;
const TAG: c_int = 7_071;

/// Fails with the name of the MPI call that did not return `MPI_SUCCESS`.
pub fn check(what: &str, rc: c_int) -> Result<(), String> {
    if rc == MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(format!("{what} failed with MPI error {rc}"))
    }
}

unsafe fn send(bytes: Option<&[u8]>, to: c_int, comm: MPI_Comm) -> Result<(), String> {
    let len = bytes.map_or(FAILED, |b| b.len() as u64);
    let u64_type = conifer_type_uint64();
    check(
        "PMPI_Send",
        PMPI_Send((&len as *const u64).cast(), 1, u64_type, to, TAG, comm),
    )?;
    for piece in bytes.unwrap_or_default().chunks(PIECE) {
        check(
            "PMPI_Send",
            PMPI_Send(
                piece.as_ptr().cast(),
                piece.len() as c_int,
                conifer_type_byte(),
                to,
                TAG,
                comm,
            ),
        )?;
    }
    Ok(())
}

unsafe fn receive(from: c_int, comm: MPI_Comm) -> Result<Option<Vec<u8>>, String> {
    let status = conifer_status_ignore() as *mut MPI_Status;
    let mut len = 0u64;
    check(
        "PMPI_Recv",
        PMPI_Recv(
            (&mut len as *mut u64).cast(),
            1,
            conifer_type_uint64(),
            from,
            TAG,
            comm,
            status,
        ),
    )?;
    if len == FAILED {
        return Ok(None);
    }
    let mut bytes = vec![0u8; len as usize];
    for piece in bytes.chunks_mut(PIECE) {
        check(
            "PMPI_Recv",
            PMPI_Recv(
                piece.as_mut_ptr().cast(),
                piece.len() as c_int,
                conifer_type_byte(),
                from,
                TAG,
                comm,
                status,
            ),
        )?;
    }
    Ok(Some(bytes))
}

/// Runs the pairwise merge of `mine` (this rank's record) on `comm`. Rank 0 gets the merged
/// record of all ranks; the others get `Ok(None)` once they have handed theirs on. A failure
/// anywhere reaches rank 0 as an error without leaving any rank waiting.
///
/// `work` accumulates the time spent encoding, decoding and joining records (not waiting for
/// messages): the merge's own cost on this rank.
///
/// # Safety
/// MPI must be initialised and `comm` a valid intra-communicator private to the caller.
pub unsafe fn merge(
    mine: TraceRecord,
    comm: MPI_Comm,
    work: &mut Duration,
) -> Result<Option<TraceRecord>, String> {
    let (mut rank, mut size) = (0, 0);
    check("PMPI_Comm_rank", PMPI_Comm_rank(comm, &mut rank))?;
    check("PMPI_Comm_size", PMPI_Comm_size(comm, &mut size))?;
    let mut acc: Result<TraceRecord, String> = Ok(mine);
    let mut step = 1;
    while step < size {
        if rank % (2 * step) == step {
            let started = Instant::now();
            let bytes = acc.as_ref().ok().map(TraceRecord::to_bytes);
            *work += started.elapsed();
            send(bytes.as_deref(), rank - step, comm)?;
            return match acc {
                Ok(_) => Ok(None),
                Err(e) => Err(e),
            };
        }
        if rank + step < size {
            let received = receive(rank + step, comm)?;
            let started = Instant::now();
            acc = match (acc, received) {
                (Ok(mut left), Some(bytes)) => match TraceRecord::from_bytes(&bytes) {
                    Ok(right) => {
                        conifer_write::merge::absorb(&mut left, right);
                        Ok(left)
                    }
                    Err(e) => Err(format!(
                        "rank {} sent an unreadable record: {e}",
                        rank + step
                    )),
                },
                (Ok(_), None) => Err(format!("the merge failed below rank {}", rank + step)),
                (Err(e), _) => Err(e),
            };
            *work += started.elapsed();
        }
        step *= 2;
    }
    acc.map(Some)
}
