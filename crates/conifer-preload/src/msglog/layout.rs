//! Where a receive put its data: blocks of elements of the call's datatype at displacements
//! (in extents) from the buffer's start, and the packing of those blocks into the log and
//! back (`MPI_Pack`/`MPI_Unpack`, so derived datatypes with holes write only what MPI wrote).

use crate::mpi::*;
use crate::record::{AsI64, CommHandle, StatusSlot};
use std::ffi::{c_int, c_void};

/// A buffer's layout: `(displacement in extents, elements)` per block.
pub type Blocks = Vec<(i64, usize)>;

/// One block of `count` elements at the buffer's start.
pub fn one(count: impl AsI64) -> Blocks {
    vec![(0, count.as_i64().max(0) as usize)]
}

/// A datatype handle of either binding, as the C datatype.
pub trait CDatatype: Copy {
    /// The C datatype.
    fn datatype(self) -> MPI_Datatype;
}

impl CDatatype for MPI_Datatype {
    fn datatype(self) -> MPI_Datatype {
        self
    }
}

/// What a receive of at most `count` elements got: the status's count when it has one
/// (a status-ignoring receive logs its whole capacity).
///
/// # Safety
/// `status` is null, an ignore sentinel, or a status MPI filled in; `datatype` is valid.
pub unsafe fn received<S: StatusSlot>(
    count: impl AsI64,
    status: *const S,
    datatype: impl CDatatype,
) -> Blocks {
    let capacity = count.as_i64().max(0) as usize;
    let got = status_count(S::read(status), datatype.datatype()).unwrap_or(capacity);
    vec![(0, got.min(capacity))]
}

/// The elements a status says arrived, when there is a status and it says.
pub fn status_count(status: Option<MPI_Status>, datatype: MPI_Datatype) -> Option<usize> {
    let status = status?;
    let mut n: c_int = 0;
    // SAFETY: a status MPI filled in, an out-pointer to a local.
    let ok = unsafe { PMPI_Get_count(&status, datatype, &mut n) } == MPI_SUCCESS as c_int;
    (ok && n >= 0).then_some(n as usize)
}

/// The number of ranks a collective on `comm` gathers from (its remote group's size on an
/// intercommunicator).
///
/// # Safety
/// `comm` is a valid communicator.
pub unsafe fn peer_count(comm: impl CommHandle) -> usize {
    let comm = comm.comm();
    let (mut inter, mut size) = (0, 0);
    PMPI_Comm_test_inter(comm, &mut inter);
    if inter != 0 {
        PMPI_Comm_remote_size(comm, &mut size);
    } else {
        PMPI_Comm_size(comm, &mut size);
    }
    size.max(0) as usize
}

/// One block of `count` per peer, one after the other (`MPI_Allgather`, `MPI_Alltoall`).
///
/// # Safety
/// `comm` is a valid communicator.
pub unsafe fn per_peer(count: impl AsI64, comm: impl CommHandle) -> Blocks {
    let n = count.as_i64().max(0);
    (0..peer_count(comm) as i64)
        .map(|i| (i * n, n as usize))
        .collect()
}

/// One block per peer with its own count and displacement (`MPI_Gatherv`, `MPI_Alltoallv`).
///
/// # Safety
/// `counts` and `displs` hold one entry per peer of `comm`.
pub unsafe fn varied<C: AsI64, D: AsI64>(
    counts: *const C,
    displs: *const D,
    comm: impl CommHandle,
) -> Blocks {
    if counts.is_null() || displs.is_null() {
        return Vec::new();
    }
    (0..peer_count(comm))
        .map(|i| {
            (
                (*displs.add(i)).as_i64(),
                (*counts.add(i)).as_i64().max(0) as usize,
            )
        })
        .collect()
}

/// This rank's entry of a per-rank count array, at the buffer's start (`MPI_Reduce_scatter`).
///
/// # Safety
/// `counts` holds one entry per rank of `comm`.
pub unsafe fn own_of<C: AsI64>(counts: *const C, comm: impl CommHandle) -> Blocks {
    let mut rank = 0;
    PMPI_Comm_rank(comm.comm(), &mut rank);
    if counts.is_null() || rank < 0 {
        return Vec::new();
    }
    one((*counts.add(rank as usize)).as_i64())
}

/// True when this rank is `root` of `comm` (root-only outputs are logged there only).
///
/// # Safety
/// `comm` is a valid communicator.
pub unsafe fn is_root(root: impl AsI64, comm: impl CommHandle) -> bool {
    let comm = comm.comm();
    let mut inter = 0;
    PMPI_Comm_test_inter(comm, &mut inter);
    if inter != 0 {
        return root.as_i64() == i64::from(conifer_root());
    }
    let mut rank = 0;
    PMPI_Comm_rank(comm, &mut rank);
    i64::from(rank) == root.as_i64()
}

fn extent(datatype: MPI_Datatype) -> isize {
    let (mut lb, mut extent): (MPI_Aint, MPI_Aint) = (0, 0);
    // SAFETY: out-pointers to locals; an invalid datatype leaves 0.
    unsafe { PMPI_Type_get_extent(datatype, &mut lb, &mut extent) };
    // `MPI_Aint` is `isize` in one MPI's header, `i64` in another's.
    #[allow(clippy::unnecessary_cast)]
    let extent = extent as isize;
    extent
}

/// Appends the data of `blocks` of `buf` to `out`, packed.
///
/// # Safety
/// `buf` and `datatype` describe memory MPI wrote for every block.
pub unsafe fn pack(buf: *const c_void, datatype: MPI_Datatype, blocks: &Blocks, out: &mut Vec<u8>) {
    let extent = extent(datatype);
    for &(displacement, count) in blocks {
        if count == 0 || buf.is_null() {
            continue;
        }
        let mut size: c_int = 0;
        PMPI_Pack_size(count as c_int, datatype, conifer_comm_self(), &mut size);
        let start = out.len();
        out.resize(start + size.max(0) as usize, 0);
        let mut position: c_int = 0;
        let at = buf.cast::<u8>().offset(displacement as isize * extent);
        PMPI_Pack(
            at.cast(),
            count as c_int,
            datatype,
            out.as_mut_ptr().add(start).cast(),
            size,
            &mut position,
            conifer_comm_self(),
        );
        out.truncate(start + position.max(0) as usize);
    }
}

/// Writes `bytes`, packed by [`pack`] with the same `blocks`, into `buf`.
///
/// # Safety
/// `buf` and `datatype` describe writable memory for every block.
pub unsafe fn unpack(buf: *mut c_void, datatype: MPI_Datatype, blocks: &Blocks, bytes: &[u8]) {
    let extent = extent(datatype);
    let mut position: c_int = 0;
    for &(displacement, count) in blocks {
        if count == 0 || buf.is_null() {
            continue;
        }
        let at = buf.cast::<u8>().offset(displacement as isize * extent);
        PMPI_Unpack(
            bytes.as_ptr().cast(),
            bytes.len() as c_int,
            &mut position,
            at.cast(),
            count as c_int,
            datatype,
            conifer_comm_self(),
        );
    }
}
