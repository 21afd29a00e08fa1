//! The runtime side of FACT slicing (`conifer cc --slice`). The static pass puts a call to
//! [`conifer_slice_skip`] before every unmarked MPI call the runtime may leave out; the flag
//! it sets is consumed by the thread's next wrapped MPI call ([`crate::thread::CallGuard`]).
//! A skippable wrapper entered with the flag set records the call exactly as usual but makes
//! no PMPI call: sends and collectives just return `MPI_SUCCESS`, receives fill their status
//! from their own arguments, nonblocking calls get a *fake request* — a handle no MPI hands
//! out — that the completion calls ([`complete`]) finish locally, passing only the real
//! requests on to MPI. Programs that never call [`conifer_slice_skip`] pay a bit test on the
//! thread's wrapper nesting depth, which every wrapper reads anyway, and one relaxed atomic
//! load per completion call.

pub mod complete;
pub mod fortran;

use crate::mpi::*;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Most fake requests alive at once; a skipped nonblocking call beyond that executes.
const MAX_FAKES: usize = 1 << 20;

/// Set once the program asked for a skip: completion calls look for fake requests from then on.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Calls left unexecuted so far in this process.
static SKIPPED: AtomicU64 = AtomicU64::new(0);
/// The fake requests alive.
static FAKES: Mutex<Fakes> = Mutex::new(Fakes {
    slots: Vec::new(),
    free: Vec::new(),
});
/// Open MPI requests are pointers: fake ones point into this reserved (never touched, so
/// never resident: zeroed, writable, so in `.bss`) space, which no MPI object can occupy.
static FAKE_SPACE: [AtomicU8; MAX_FAKES] = [const { AtomicU8::new(0) }; MAX_FAKES];
/// MPICH requests are integers: `MPI_REQUEST_NULL` is `0x2c000000`, a handle of the
/// "invalid" kind MPICH never allocates; fake ones add their index + 1 to it.
const MPICH_FAKE_BASE: u32 = 0x2c00_0000;

/// Called by a sliced program right before an unmarked MPI call: the thread's next wrapped
/// MPI call is recorded but, when the runtime may leave it out, not executed.
#[no_mangle]
pub extern "C" fn conifer_slice_skip() {
    ACTIVE.store(true, Ordering::Relaxed);
    crate::thread::skip_next_call();
}

/// True once the program has asked for a skip (fake requests may exist).
#[inline(always)]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// Calls left unexecuted so far in this process.
pub fn skipped_calls() -> u64 {
    SKIPPED.load(Ordering::Relaxed)
}

/// What the status of a skipped receive (or of a fake request's completion) says.
#[derive(Clone, Copy)]
pub struct Expected {
    source: c_int,
    tag: c_int,
    /// Bytes the receive could hold (its count times its datatype's size).
    bytes: c_int,
}

impl Expected {
    /// The status a receive of `count` × `datatype` from `source` with `tag` would most
    /// plausibly get: the given source and tag (wildcards stay wildcards), the full count;
    /// from `MPI_PROC_NULL` the empty status MPI defines.
    ///
    /// # Safety
    /// `datatype` is a valid datatype handle.
    unsafe fn receive(source: c_int, tag: c_int, count: c_int, datatype: MPI_Datatype) -> Self {
        if source == conifer_proc_null() {
            return Expected {
                source,
                tag: conifer_any_tag(),
                bytes: 0,
            };
        }
        let mut size: c_int = 0;
        if PMPI_Type_size(datatype, &mut size) != MPI_SUCCESS as c_int {
            size = 0;
        }
        Expected {
            source,
            tag,
            bytes: count.saturating_mul(size),
        }
    }

    /// The status of a completed send or collective request: MPI's empty status.
    fn empty() -> Self {
        // SAFETY: constants from the shim.
        unsafe {
            Expected {
                source: conifer_any_source(),
                tag: conifer_any_tag(),
                bytes: 0,
            }
        }
    }

    /// Writes the status to `status` unless it is null or `MPI_STATUS_IGNORE`.
    ///
    /// # Safety
    /// `status` is null, the ignore sentinel, or a writable status.
    pub unsafe fn write(self, status: *mut MPI_Status) {
        if status.is_null() || status.cast_const().cast() == conifer_status_ignore() {
            return;
        }
        (*status).MPI_SOURCE = self.source;
        (*status).MPI_TAG = self.tag;
        (*status).MPI_ERROR = MPI_SUCCESS as c_int;
        PMPI_Status_set_elements(status, conifer_type_byte(), self.bytes);
        PMPI_Status_set_cancelled(status, 0);
    }
}

/// The live fake requests: a slot per index, free indices reused.
struct Fakes {
    slots: Vec<Option<Expected>>,
    free: Vec<usize>,
}

fn fakes() -> MutexGuard<'static, Fakes> {
    FAKES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Open MPI's Fortran request handles are indices (`MPI_REQUEST_NULL` is 0): Fortran fakes
/// count down from this negative `INTEGER`, which is never an index.
const OPEN_MPI_FORTRAN_FAKE_BASE: c_int = -0x4000_0000;

/// A request handle of the installed MPI (pointer or integer) that can stand for a fake, and
/// the Fortran `INTEGER` handles standing for the same fakes.
pub trait FakeRequest: Copy {
    /// The handle of fake number `n` (`n < MAX_FAKES`).
    fn fake(n: usize) -> Self;
    /// The fake number this handle stands for, if it is a fake.
    fn fake_index(self) -> Option<usize>;
    /// The Fortran handle of fake number `n`.
    fn fortran_fake(n: usize) -> c_int;
    /// The fake number a Fortran handle stands for, if it is a fake.
    fn fortran_fake_index(handle: c_int) -> Option<usize>;
}

impl<T> FakeRequest for *mut T {
    fn fake(n: usize) -> Self {
        FAKE_SPACE.as_ptr().wrapping_add(n) as *mut T
    }
    fn fake_index(self) -> Option<usize> {
        let offset = (self as usize).wrapping_sub(FAKE_SPACE.as_ptr() as usize);
        (offset < MAX_FAKES).then_some(offset)
    }
    fn fortran_fake(n: usize) -> c_int {
        OPEN_MPI_FORTRAN_FAKE_BASE - n as c_int
    }
    fn fortran_fake_index(handle: c_int) -> Option<usize> {
        let offset = i64::from(OPEN_MPI_FORTRAN_FAKE_BASE) - i64::from(handle);
        (0..MAX_FAKES as i64)
            .contains(&offset)
            .then_some(offset as usize)
    }
}

/// MPICH's Fortran handles are its C handles: a Fortran fake is the C fake's integer.
impl FakeRequest for c_int {
    fn fake(n: usize) -> Self {
        (MPICH_FAKE_BASE + 1 + n as u32) as c_int
    }
    fn fake_index(self) -> Option<usize> {
        let offset = (self as u32).wrapping_sub(MPICH_FAKE_BASE + 1) as usize;
        (offset < MAX_FAKES).then_some(offset)
    }
    fn fortran_fake(n: usize) -> c_int {
        Self::fake(n)
    }
    fn fortran_fake_index(handle: c_int) -> Option<usize> {
        handle.fake_index()
    }
}

/// What the status of live fake request `request` says; `None` when it is not one.
pub fn peek_fake(request: MPI_Request) -> Option<Expected> {
    let n = request.fake_index()?;
    fakes().slots.get(n).copied().flatten()
}

/// True when `request` is a live fake request.
pub fn is_fake(request: MPI_Request) -> bool {
    peek_fake(request).is_some()
}

/// Ends fake request `request` (if it is one): what its status says.
pub fn finish_fake(request: MPI_Request) -> Option<Expected> {
    let n = request.fake_index()?;
    let mut f = fakes();
    let done = f.slots.get_mut(n)?.take()?;
    f.free.push(n);
    Some(done)
}

/// A skipped send or blocking collective: nothing happens.
pub fn skipped() -> Option<c_int> {
    SKIPPED.fetch_add(1, Ordering::Relaxed);
    Some(MPI_SUCCESS as c_int)
}

/// A skipped blocking receive (`MPI_Recv`, `MPI_Sendrecv`, `MPI_Sendrecv_replace`): its
/// status made up from its arguments; the receive buffer is left as it was.
///
/// # Safety
/// The arguments are those the program passed to the call.
pub unsafe fn skipped_receive(
    status: *mut MPI_Status,
    source: c_int,
    tag: c_int,
    count: c_int,
    datatype: MPI_Datatype,
) -> Option<c_int> {
    Expected::receive(source, tag, count, datatype).write(status);
    skipped()
}

/// A skipped nonblocking receive: a fake request whose completion reports the receive's
/// made-up status; `None` (execute the call) when too many fakes are alive.
///
/// # Safety
/// `request` is writable; the other arguments are those the program passed.
pub unsafe fn skipped_receive_start(
    request: *mut MPI_Request,
    source: c_int,
    tag: c_int,
    count: c_int,
    datatype: MPI_Datatype,
) -> Option<c_int> {
    start(request, Expected::receive(source, tag, count, datatype))
}

/// A skipped nonblocking send or collective: a fake request with MPI's empty status;
/// `None` (execute the call) when too many fakes are alive.
///
/// # Safety
/// `request` is writable.
pub unsafe fn skipped_start(request: *mut MPI_Request) -> Option<c_int> {
    start(request, Expected::empty())
}

unsafe fn start(request: *mut MPI_Request, expected: Expected) -> Option<c_int> {
    if request.is_null() {
        return skipped();
    }
    let n = {
        let mut f = fakes();
        match f.free.pop() {
            Some(n) => {
                f.slots[n] = Some(expected);
                n
            }
            None if f.slots.len() < MAX_FAKES => {
                f.slots.push(Some(expected));
                f.slots.len() - 1
            }
            None => return None,
        }
    };
    *request = MPI_Request::fake(n);
    skipped()
}

/// At `MPI_Finalize` (MPI still usable): says how many calls were left out, when
/// `CONIFER_VERBOSE` is set.
pub fn report() {
    let n = skipped_calls();
    if n > 0 && std::env::var_os("CONIFER_VERBOSE").is_some() {
        let mut rank: c_int = -1;
        // SAFETY: MPI is initialised until PMPI_Finalize; `rank` is a local.
        unsafe { PMPI_Comm_rank(conifer_comm_world(), &mut rank) };
        say!("rank {rank}: slicing skipped {n} MPI calls");
    }
}
