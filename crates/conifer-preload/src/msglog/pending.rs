//! Nonblocking receives waiting for their completion call, by request handle: the run logs
//! their data when a completion call finishes them, and the replay writes it there, into the
//! buffer the receive named. One table serves both sides.
//!
//! A handle may stand for several requests at once (Open MPI returns one shared request for
//! every `MPI_PROC_NULL` operation): each handle keeps its receives in the order they started.

use super::layout::Blocks;
use crate::mpi::MPI_Datatype;
use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::Mutex;

/// A started receive.
pub struct Pending {
    /// Its buffer.
    pub buf: *mut c_void,
    /// Its datatype.
    pub datatype: MPI_Datatype,
    /// Its layout as posted (the run only).
    pub blocks: Blocks,
    /// A point-to-point receive: what arrived is its status's count.
    pub point_to_point: bool,
    /// Persistent (`MPI_Recv_init`): stays after completion until `MPI_Request_free`.
    pub persistent: bool,
}

// SAFETY: the pointers are the program's buffer and datatype handle, only ever handed back to
// MPI calls of the program's own threads.
unsafe impl Send for Pending {}

static TABLE: Mutex<Option<HashMap<u64, VecDeque<Pending>>>> = Mutex::new(None);

/// Notes that the request `request` started the receive `pending`.
pub fn start(request: u64, pending: Pending) {
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    table
        .get_or_insert_with(HashMap::new)
        .entry(request)
        .or_default()
        .push_back(pending);
}

/// Calls `f` with the receive that the completion of `request` finishes, if the request
/// started one, and forgets it unless it is persistent.
pub fn complete<R>(request: u64, f: impl FnOnce(&Pending) -> R) -> Option<R> {
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let queue = table.as_mut()?.get_mut(&request)?;
    let front = queue.front()?;
    let result = f(front);
    if !front.persistent {
        queue.pop_front();
        if queue.is_empty() {
            table.as_mut()?.remove(&request);
        }
    }
    Some(result)
}

/// Forgets the receives of a freed request (`MPI_Request_free`).
pub fn forget(request: u64) {
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(table) = table.as_mut() {
        if let Some(queue) = table.get_mut(&request) {
            queue.pop_front();
            if queue.is_empty() {
                table.remove(&request);
            }
        }
    }
}
