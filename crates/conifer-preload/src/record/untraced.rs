//! What a program tells the recorder about requests it completed through PMPI, where no
//! wrapper sees it: a proxy's forced completions (`conifer proxy` waits, untraced, for what
//! the original's poll completed). Without it the request would stay live in the recorder,
//! and a later request MPI gives the same handle would be named by the old one's id.

use super::global::lock;
use crate::mpi::MPI_Request;

/// The request whose handle was `request` completed and was freed without a wrapper
/// seeing it: its oldest live id is given back.
#[no_mangle]
pub extern "C" fn conifer_request_completed(request: MPI_Request) {
    let bits = super::bits(request);
    lock().requests.complete(bits);
}
