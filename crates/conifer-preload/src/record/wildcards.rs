//! How many receive requests posted with a wildcard source or tag are live in the process:
//! while none is, completion calls skip looking for one (see [`super::own_status`]).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Live receive requests posted with a wildcard, in the whole process.
static WILDCARD_REQUESTS: AtomicUsize = AtomicUsize::new(0);

/// True while some receive request posted with a wildcard is live.
#[inline]
pub fn wildcard_requests_live() -> bool {
    WILDCARD_REQUESTS.load(Ordering::Relaxed) > 0
}

/// A receive request posted with a wildcard was created.
pub fn wildcard_request_created() {
    WILDCARD_REQUESTS.fetch_add(1, Ordering::Relaxed);
}

/// A receive request posted with a wildcard completed or was freed.
pub fn wildcard_request_done() {
    let _ =
        WILDCARD_REQUESTS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
}
