//! Completion calls in a sliced run: fake requests complete here, without MPI; the real ones
//! of the same call go to MPI (fake entries of an array are set to `MPI_REQUEST_NULL` for it,
//! which MPI skips). Each function has its PMPI namesake's signature; the generated wrappers
//! call it instead of PMPI once [`super::active`] says fakes may exist. `Waitany`, `Testany`,
//! `Waitsome` and `Testsome` complete the pending fakes first (lowest index first), without
//! waiting for real requests: a fake is always complete.

#![allow(non_snake_case)]

use super::{finish_fake, is_fake, peek_fake, Expected};
use crate::mpi::*;
use std::ffi::c_int;

const SUCCESS: c_int = MPI_SUCCESS as c_int;

/// True when `statuses` is a real array (not null, not `MPI_STATUSES_IGNORE`).
unsafe fn real_statuses(statuses: *mut MPI_Status) -> bool {
    !statuses.is_null() && statuses.cast_const().cast() != conifer_statuses_ignore()
}

/// The indices of `requests[..count]` that are fake.
unsafe fn fake_indices(count: c_int, requests: *mut MPI_Request) -> Vec<usize> {
    if requests.is_null() {
        return Vec::new();
    }
    (0..count.max(0) as usize)
        .filter(|&i| is_fake(*requests.add(i)))
        .collect()
}

/// Completes the fake `requests[i]`: the handle becomes `MPI_REQUEST_NULL`.
unsafe fn complete_at(requests: *mut MPI_Request, i: usize) -> Option<Expected> {
    let done = finish_fake(*requests.add(i))?;
    *requests.add(i) = conifer_request_null();
    Some(done)
}

/// `MPI_Wait`.
///
/// # Safety
/// As `PMPI_Wait`.
pub unsafe fn MPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    match (!request.is_null())
        .then(|| complete_at(request, 0))
        .flatten()
    {
        Some(done) => {
            done.write(status);
            SUCCESS
        }
        None => PMPI_Wait(request, status),
    }
}

/// `MPI_Test`.
///
/// # Safety
/// As `PMPI_Test`.
pub unsafe fn MPI_Test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    match (!request.is_null())
        .then(|| complete_at(request, 0))
        .flatten()
    {
        Some(done) => {
            done.write(status);
            if !flag.is_null() {
                *flag = 1;
            }
            SUCCESS
        }
        None => PMPI_Test(request, flag, status),
    }
}

/// `MPI_Request_free`.
///
/// # Safety
/// As `PMPI_Request_free`.
pub unsafe fn MPI_Request_free(request: *mut MPI_Request) -> c_int {
    match (!request.is_null())
        .then(|| complete_at(request, 0))
        .flatten()
    {
        Some(_) => SUCCESS,
        None => PMPI_Request_free(request),
    }
}

/// `MPI_Request_get_status`: a fake request is complete (and stays allocated).
///
/// # Safety
/// As `PMPI_Request_get_status`.
pub unsafe fn MPI_Request_get_status(
    request: MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    match peek_fake(request) {
        Some(done) => {
            done.write(status);
            if !flag.is_null() {
                *flag = 1;
            }
            SUCCESS
        }
        None => PMPI_Request_get_status(request, flag, status),
    }
}

/// `MPI_Cancel`: a fake request stays pending and completes (not cancelled) in the next
/// completion call, as a request whose operation already happened would.
///
/// # Safety
/// As `PMPI_Cancel`.
pub unsafe fn MPI_Cancel(request: *mut MPI_Request) -> c_int {
    if !request.is_null() && is_fake(*request) {
        return SUCCESS;
    }
    PMPI_Cancel(request)
}

/// `MPI_Waitall`.
///
/// # Safety
/// As `PMPI_Waitall`.
pub unsafe fn MPI_Waitall(
    count: c_int,
    requests: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    let fakes = fake_indices(count, requests);
    let done: Vec<(usize, Option<Expected>)> = fakes
        .iter()
        .map(|&i| (i, complete_at(requests, i)))
        .collect();
    let ret = PMPI_Waitall(count, requests, statuses);
    if real_statuses(statuses) {
        for (i, expected) in done {
            if let Some(e) = expected {
                e.write(statuses.add(i));
            }
        }
    }
    ret
}

/// `MPI_Testall`: the fakes complete only when the real requests do (`flag` true), as
/// `MPI_Testall` completes all requests or none.
///
/// # Safety
/// As `PMPI_Testall`.
pub unsafe fn MPI_Testall(
    count: c_int,
    requests: *mut MPI_Request,
    flag: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    let fakes = fake_indices(count, requests);
    let handles: Vec<MPI_Request> = fakes.iter().map(|&i| *requests.add(i)).collect();
    for &i in &fakes {
        *requests.add(i) = conifer_request_null();
    }
    let ret = PMPI_Testall(count, requests, flag, statuses);
    let all = !flag.is_null() && *flag != 0;
    for (&i, &handle) in fakes.iter().zip(&handles) {
        *requests.add(i) = handle;
        if all {
            if let Some(e) = complete_at(requests, i) {
                if real_statuses(statuses) {
                    e.write(statuses.add(i));
                }
            }
        }
    }
    ret
}

/// Completes the first pending fake of `requests[..count]`, if any: its index.
unsafe fn first_fake(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> bool {
    let Some(&i) = fake_indices(count, requests).first() else {
        return false;
    };
    if let Some(e) = complete_at(requests, i) {
        e.write(status);
    }
    if !index.is_null() {
        *index = i as c_int;
    }
    true
}

/// `MPI_Waitany`: the lowest-indexed fake, if one is pending.
///
/// # Safety
/// As `PMPI_Waitany`.
pub unsafe fn MPI_Waitany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    if first_fake(count, requests, index, status) {
        return SUCCESS;
    }
    PMPI_Waitany(count, requests, index, status)
}

/// `MPI_Testany`: the lowest-indexed fake, if one is pending.
///
/// # Safety
/// As `PMPI_Testany`.
pub unsafe fn MPI_Testany(
    count: c_int,
    requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    if first_fake(count, requests, index, status) {
        if !flag.is_null() {
            *flag = 1;
        }
        return SUCCESS;
    }
    PMPI_Testany(count, requests, index, flag, status)
}

/// Completes every pending fake of `requests[..count]`: false when there was none.
unsafe fn all_fakes(
    count: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> bool {
    let fakes = fake_indices(count, requests);
    if fakes.is_empty() {
        return false;
    }
    for (k, &i) in fakes.iter().enumerate() {
        if let Some(e) = complete_at(requests, i) {
            if real_statuses(statuses) {
                e.write(statuses.add(k));
            }
        }
        if !indices.is_null() {
            *indices.add(k) = i as c_int;
        }
    }
    if !outcount.is_null() {
        *outcount = fakes.len() as c_int;
    }
    true
}

/// `MPI_Waitsome`: every pending fake, if there is one (real requests wait for a later call).
///
/// # Safety
/// As `PMPI_Waitsome`.
pub unsafe fn MPI_Waitsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    if all_fakes(incount, requests, outcount, indices, statuses) {
        return SUCCESS;
    }
    PMPI_Waitsome(incount, requests, outcount, indices, statuses)
}

/// `MPI_Testsome`: every pending fake, if there is one.
///
/// # Safety
/// As `PMPI_Testsome`.
pub unsafe fn MPI_Testsome(
    incount: c_int,
    requests: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    if all_fakes(incount, requests, outcount, indices, statuses) {
        return SUCCESS;
    }
    PMPI_Testsome(incount, requests, outcount, indices, statuses)
}
