//! Slicing for Fortran calls (`mpif.h`, `use mpi`, and Open MPI's `mpi_f08`, which enters
//! through the same procedures). A skipped Fortran call is left out as its C namesake is
//! ([`super`]): `ierror` says `MPI_SUCCESS`, a receive's Fortran status is made up from its
//! arguments, a nonblocking call gets a *Fortran fake request* — an `INTEGER` no MPI hands
//! out, standing for the C fake of the same number. Once fakes may exist the Fortran completion
//! calls come here: their requests are converted to C (fakes to their C fakes, others by
//! `MPI_Request_f2c`), completed by [`super::complete`] (fakes locally, the real ones by the
//! C PMPI call, as the MPI's own Fortran binding does), and the results converted back
//! (statuses by `MPI_Status_c2f`, indices made 1-based, `LOGICAL` flags as 0 or 1).
//!
//! Every argument is a Fortran argument: a pointer to the value.

use super::{complete, FakeRequest};
use crate::fortran::FortranInt;
use crate::mpi::*;
use std::ffi::{c_int, c_void};

/// Fortran `INTEGER`s in one status (`MPI_STATUS_SIZE`).
const STATUS_INTS: usize = std::mem::size_of::<MPI_Status>() / std::mem::size_of::<FortranInt>();

/// The C request a Fortran request handle stands for.
unsafe fn c_request(handle: FortranInt) -> MPI_Request {
    match MPI_Request::fortran_fake_index(handle) {
        Some(n) => MPI_Request::fake(n),
        None => conifer_f2c_request(handle),
    }
}

/// The C request handle bits of a Fortran request handle, for the recorder.
pub fn request_bits(handle: FortranInt) -> MPI_Request {
    // SAFETY: f2c accepts any Fortran handle value.
    unsafe { c_request(handle) }
}

/// Reads the `INTEGER` at `ptr`.
unsafe fn int(ptr: *mut c_void) -> c_int {
    *(ptr as *const FortranInt)
}

/// Writes `value` to the `INTEGER` at `ptr` unless it is null (an absent `ierror`).
unsafe fn set(ptr: *mut c_void, value: c_int) {
    if !ptr.is_null() {
        *(ptr as *mut FortranInt) = value;
    }
}

/// True when `ptr` is a Fortran `MPI_STATUS_IGNORE` (`array`: `MPI_STATUSES_IGNORE`).
unsafe fn ignored(ptr: *mut c_void, array: bool) -> bool {
    let sentinel = if array {
        MPI_F_STATUSES_IGNORE
    } else {
        MPI_F_STATUS_IGNORE
    };
    ptr.is_null()
        || ptr.cast::<FortranInt>() == sentinel
        || crate::fortran::is_f08_status_ignore(ptr as usize, array)
}

/// `n` Fortran statuses at `ptr` as C statuses (read first, so entries MPI leaves alone come
/// back unchanged); `None` for `MPI_STATUS(ES)_IGNORE`.
struct Statuses {
    fortran: *mut FortranInt,
    c: Vec<MPI_Status>,
}

impl Statuses {
    unsafe fn new(ptr: *mut c_void, n: usize, array: bool) -> Option<Statuses> {
        if ignored(ptr, array) {
            return None;
        }
        let fortran = ptr.cast::<FortranInt>();
        let c = (0..n)
            .map(|i| {
                let mut status: MPI_Status = std::mem::zeroed();
                PMPI_Status_f2c(fortran.add(i * STATUS_INTS), &mut status);
                status
            })
            .collect();
        Some(Statuses { fortran, c })
    }

    /// Writes the C statuses back into the Fortran array.
    unsafe fn write_back(&self) {
        for (i, status) in self.c.iter().enumerate() {
            PMPI_Status_c2f(status, self.fortran.add(i * STATUS_INTS));
        }
    }
}

/// The C pointer for optional [`Statuses`]: their array, or the C ignore sentinel.
fn status_ptr(statuses: &mut Option<Statuses>, array: bool) -> *mut MPI_Status {
    // SAFETY: constants from mpi.h.
    let ignore = unsafe {
        if array {
            conifer_statuses_ignore()
        } else {
            conifer_status_ignore()
        }
    };
    statuses
        .as_mut()
        .map_or(ignore.cast_mut().cast(), |s| s.c.as_mut_ptr())
}

/// `count` Fortran requests at `ptr`, as C requests.
unsafe fn c_requests(ptr: *mut c_void, count: usize) -> Vec<MPI_Request> {
    let handles = ptr.cast::<FortranInt>();
    (0..count).map(|i| c_request(*handles.add(i))).collect()
}

/// Writes completed C requests back: a request that became `MPI_REQUEST_NULL` becomes the
/// Fortran `MPI_REQUEST_NULL`, any other keeps its Fortran handle.
unsafe fn write_back_requests(ptr: *mut c_void, requests: &[MPI_Request]) {
    let handles = ptr.cast::<FortranInt>();
    let null = conifer_request_null();
    for (i, &request) in requests.iter().enumerate() {
        if request == null {
            *handles.add(i) = conifer_c2f_request(null);
        }
    }
}

/// A 0-based C index as Fortran's 1-based one (`MPI_UNDEFINED` stays).
unsafe fn fortran_index(index: c_int) -> c_int {
    if index == conifer_undefined() {
        index
    } else {
        index + 1
    }
}

/// A skipped Fortran send or blocking collective.
///
/// # Safety
/// `ierror` is null or writable.
pub unsafe fn skipped(ierror: *mut c_void) -> bool {
    set(ierror, super::skipped().unwrap_or(0));
    true
}

/// A skipped Fortran blocking receive: its status made up from its arguments.
///
/// # Safety
/// The arguments are those the program passed.
pub unsafe fn skipped_receive(
    status: *mut c_void,
    source: *mut c_void,
    tag: *mut c_void,
    count: *mut c_void,
    datatype: *mut c_void,
    ierror: *mut c_void,
) -> bool {
    let mut statuses = Statuses::new(status, 1, false);
    let c_status = status_ptr(&mut statuses, false);
    let ty = conifer_f2c_type(int(datatype));
    let ret = super::skipped_receive(c_status, int(source), int(tag), int(count), ty);
    if let Some(s) = &statuses {
        s.write_back();
    }
    set(ierror, ret.unwrap_or(0));
    true
}

/// A skipped Fortran nonblocking send or collective: a Fortran fake request; false (execute
/// the call) when too many fakes are alive.
///
/// # Safety
/// `request` is writable; `ierror` null or writable.
pub unsafe fn skipped_start(request: *mut c_void, ierror: *mut c_void) -> bool {
    let mut c: MPI_Request = conifer_request_null();
    fake_out(super::skipped_start(&mut c), c, request, ierror)
}

/// A skipped Fortran nonblocking receive: a Fortran fake request completing with the
/// receive's made-up status; false (execute the call) when too many fakes are alive.
///
/// # Safety
/// The arguments are those the program passed.
pub unsafe fn skipped_receive_start(
    request: *mut c_void,
    source: *mut c_void,
    tag: *mut c_void,
    count: *mut c_void,
    datatype: *mut c_void,
    ierror: *mut c_void,
) -> bool {
    let mut c: MPI_Request = conifer_request_null();
    let ty = conifer_f2c_type(int(datatype));
    let started = super::skipped_receive_start(&mut c, int(source), int(tag), int(count), ty);
    fake_out(started, c, request, ierror)
}

/// Hands the program the Fortran fake standing for C fake `c`, if one was made.
unsafe fn fake_out(
    started: Option<c_int>,
    c: MPI_Request,
    request: *mut c_void,
    ierror: *mut c_void,
) -> bool {
    let (Some(ret), Some(n)) = (started, c.fake_index()) else {
        return false;
    };
    set(request, MPI_Request::fortran_fake(n));
    set(ierror, ret);
    true
}

/// A Fortran completion call's requests and statuses as C ones, written back by
/// [`Converted::finish`].
struct Converted {
    fortran: *mut c_void,
    requests: Vec<MPI_Request>,
    statuses: Option<Statuses>,
    array: bool,
}

impl Converted {
    /// `count` Fortran requests at `requests`; `statuses` holds `count` statuses when `array`,
    /// else one.
    unsafe fn new(requests: *mut c_void, count: c_int, statuses: *mut c_void, array: bool) -> Self {
        let requests_c = c_requests(requests, count.max(0) as usize);
        let n = if array { requests_c.len() } else { 1 };
        Converted {
            fortran: requests,
            statuses: Statuses::new(statuses, n, array),
            requests: requests_c,
            array,
        }
    }

    fn requests(&mut self) -> *mut MPI_Request {
        self.requests.as_mut_ptr()
    }

    fn statuses(&mut self) -> *mut MPI_Status {
        status_ptr(&mut self.statuses, self.array)
    }

    /// Writes the requests, statuses and `ierror` (`ret`) back.
    unsafe fn finish(self, ierror: *mut c_void, ret: c_int) {
        write_back_requests(self.fortran, &self.requests);
        if let Some(s) = &self.statuses {
            s.write_back();
        }
        set(ierror, ret);
    }
}

/// `MPI_WAIT` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_WAIT`.
pub unsafe fn wait(request: *mut c_void, status: *mut c_void, ierror: *mut c_void) {
    let mut c = Converted::new(request, 1, status, false);
    let ret = complete::MPI_Wait(c.requests(), c.statuses());
    c.finish(ierror, ret);
}

/// `MPI_TEST` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_TEST`.
pub unsafe fn test(
    request: *mut c_void,
    flag: *mut c_void,
    status: *mut c_void,
    ierror: *mut c_void,
) {
    let mut c = Converted::new(request, 1, status, false);
    let mut done: c_int = 0;
    let ret = complete::MPI_Test(c.requests(), &mut done, c.statuses());
    set(flag, done);
    c.finish(ierror, ret);
}

/// `MPI_REQUEST_FREE` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_REQUEST_FREE`.
pub unsafe fn request_free(request: *mut c_void, ierror: *mut c_void) {
    let mut c = Converted::new(request, 1, std::ptr::null_mut(), false);
    let ret = complete::MPI_Request_free(c.requests());
    c.finish(ierror, ret);
}

/// `MPI_REQUEST_GET_STATUS` once fakes may exist (the request stays as it is).
///
/// # Safety
/// As the Fortran `MPI_REQUEST_GET_STATUS`.
pub unsafe fn request_get_status(
    request: *mut c_void,
    flag: *mut c_void,
    status: *mut c_void,
    ierror: *mut c_void,
) {
    let mut c = Converted::new(request, 1, status, false);
    let mut done: c_int = 0;
    let ret = complete::MPI_Request_get_status(c.requests[0], &mut done, c.statuses());
    set(flag, done);
    c.finish(ierror, ret);
}

/// `MPI_CANCEL` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_CANCEL`.
pub unsafe fn cancel(request: *mut c_void, ierror: *mut c_void) {
    let mut c = c_requests(request, 1);
    set(ierror, complete::MPI_Cancel(c.as_mut_ptr()));
}

/// `MPI_WAITALL` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_WAITALL`.
pub unsafe fn waitall(
    count: *mut c_void,
    requests: *mut c_void,
    statuses: *mut c_void,
    ierror: *mut c_void,
) {
    let mut c = Converted::new(requests, int(count), statuses, true);
    let ret = complete::MPI_Waitall(int(count), c.requests(), c.statuses());
    c.finish(ierror, ret);
}

/// `MPI_TESTALL` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_TESTALL`.
pub unsafe fn testall(
    count: *mut c_void,
    requests: *mut c_void,
    flag: *mut c_void,
    statuses: *mut c_void,
    ierror: *mut c_void,
) {
    let mut c = Converted::new(requests, int(count), statuses, true);
    let mut done: c_int = 0;
    let ret = complete::MPI_Testall(int(count), c.requests(), &mut done, c.statuses());
    set(flag, done);
    c.finish(ierror, ret);
}

/// `MPI_WAITANY` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_WAITANY`.
pub unsafe fn waitany(
    count: *mut c_void,
    requests: *mut c_void,
    index: *mut c_void,
    status: *mut c_void,
    ierror: *mut c_void,
) {
    let mut c = Converted::new(requests, int(count), status, false);
    let mut which: c_int = 0;
    let ret = complete::MPI_Waitany(int(count), c.requests(), &mut which, c.statuses());
    set(index, fortran_index(which));
    c.finish(ierror, ret);
}

/// `MPI_TESTANY` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_TESTANY`.
pub unsafe fn testany(
    count: *mut c_void,
    requests: *mut c_void,
    index: *mut c_void,
    flag: *mut c_void,
    status: *mut c_void,
    ierror: *mut c_void,
) {
    let mut c = Converted::new(requests, int(count), status, false);
    let (mut which, mut done): (c_int, c_int) = (0, 0);
    let ret = complete::MPI_Testany(
        int(count),
        c.requests(),
        &mut which,
        &mut done,
        c.statuses(),
    );
    set(index, fortran_index(which));
    set(flag, done);
    c.finish(ierror, ret);
}

/// `MPI_WAITSOME` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_WAITSOME`.
pub unsafe fn waitsome(
    incount: *mut c_void,
    requests: *mut c_void,
    outcount: *mut c_void,
    indices: *mut c_void,
    statuses: *mut c_void,
    ierror: *mut c_void,
) {
    let args = [incount, requests, outcount, indices, statuses, ierror];
    some(args, complete::MPI_Waitsome);
}

/// `MPI_TESTSOME` once fakes may exist.
///
/// # Safety
/// As the Fortran `MPI_TESTSOME`.
pub unsafe fn testsome(
    incount: *mut c_void,
    requests: *mut c_void,
    outcount: *mut c_void,
    indices: *mut c_void,
    statuses: *mut c_void,
    ierror: *mut c_void,
) {
    let args = [incount, requests, outcount, indices, statuses, ierror];
    some(args, complete::MPI_Testsome);
}

/// The C signature of `MPI_Waitsome` and `MPI_Testsome`.
type SomeCall =
    unsafe fn(c_int, *mut MPI_Request, *mut c_int, *mut c_int, *mut MPI_Status) -> c_int;

/// `MPI_WAITSOME` or `MPI_TESTSOME` (`call`), from its Fortran arguments in order.
unsafe fn some(args: [*mut c_void; 6], call: SomeCall) {
    let [incount, requests, outcount, indices, statuses, ierror] = args;
    let n = int(incount);
    let mut c = Converted::new(requests, n, statuses, true);
    let mut which = vec![0 as c_int; c.requests.len()];
    let mut out: c_int = 0;
    let ret = call(n, c.requests(), &mut out, which.as_mut_ptr(), c.statuses());
    set(outcount, out);
    let listed = if out == conifer_undefined() { 0 } else { out };
    for (k, &i) in which.iter().take(listed.max(0) as usize).enumerate() {
        *(indices as *mut FortranInt).add(k) = i + 1;
    }
    c.finish(ierror, ret);
}
