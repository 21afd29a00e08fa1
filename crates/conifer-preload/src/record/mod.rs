//! Recording one MPI call: the generated wrappers drive a [`Call`] through its inputs (before
//! the PMPI call), its outputs (after it) and [`Call::finish`]. Each argument is encoded into
//! the call's signature with symbolic ids for objects and buffers and relative ranks; the
//! finished signature goes into the rank's signature table and the thread's grammar.
//!
//! The rank's state is behind one lock, which is never held across the PMPI call itself, so
//! threads of an `MPI_THREAD_MULTIPLE` program never wait on each other's communication.

mod addresses;
pub mod callers;
mod clock;
mod comms;
pub mod control;
pub mod handles;
mod ranks;
mod requests;
pub mod state;
mod tick_histograms;
pub mod timing_env;
pub mod trees;

use crate::mpi::*;
use crate::runtime::{CallGuard, ThreadState};
use crate::stack::Anchor;
use conifer_trace::rank_record::{Membership, RankRecord};
use conifer_trace::timeline::CallTime;
use conifer_trace::timing_mode::TimingMode;
use conifer_trace::value::{encode_array_header, encode_buffer, encode_handle, encode_int};
use conifer_trace::value::{Buffer, HandleKind, HandleRef, Rank, Status, Value};
use conifer_trace::varint::put_u64;
use state::State;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| {
    control::read_environment();
    Mutex::new(State::new())
});
static RECORDING: AtomicBool = AtomicBool::new(true);
/// True when MPI was initialised with `MPI_THREAD_MULTIPLE`: only then can two threads be in
/// MPI at once, so only then is the state lock released during the PMPI call.
static MULTITHREADED: AtomicBool = AtomicBool::new(false);

/// `MPI_ERR_IN_STATUS`, read once.
// SAFETY: the shim returns a compile-time constant.
static ERR_IN_STATUS: LazyLock<i64> =
    LazyLock::new(|| i64::from(unsafe { conifer_err_in_status() }));

static NEXT_THREAD: AtomicU32 = AtomicU32::new(0);

fn lock() -> MutexGuard<'static, State> {
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The rank's record in the form sent to the merge.
pub fn rank_record() -> RankRecord {
    record_of(&lock())
}

/// True when MPI runs with `MPI_THREAD_MULTIPLE` (several threads may be inside MPI).
pub fn multithreaded() -> bool {
    MULTITHREADED.load(Ordering::Relaxed)
}

/// The wrappers' call counters, by function id.
pub fn call_counts() -> Vec<u64> {
    lock().calls.clone()
}

/// The state's address, for [`salvage`].
static STATE_ADDRESS: AtomicPtr<State> = AtomicPtr::new(std::ptr::null_mut());

/// Applies `f` to thread `thread`'s trace tree builder, if it has one and the recorder is free
/// (a hook may run inside an MPI call's callback, with the recorder held by its own thread).
pub fn with_tree(thread: u32, f: impl FnOnce(&mut conifer_compress::tree::TreeBuilder)) {
    if let Ok(mut state) = STATE.try_lock() {
        if let Some(Some(builder)) = state.trees.get_mut(thread as usize) {
            f(builder);
        }
    }
}

/// Runs `f` on the recorder's state at a fatal moment (a signal handler, `exit`, `MPI_Abort`):
/// with the lock when it is free; without it when this very thread holds it — in a
/// single-threaded program the lock is held across the PMPI call, where a `SIGTERM` from the
/// launcher usually finds the rank, and that thread is stopped here, so nothing else touches
/// the state. With other threads in MPI it waits up to two seconds for the lock, else gives up.
///
/// # Safety
/// Only for code that ends the process afterwards: the state may be read while a wrapper of
/// this thread, interrupted, holds it.
pub unsafe fn salvage<R>(f: impl Fn(&State) -> R) -> Option<R> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match STATE.try_lock() {
            Ok(state) => return Some(f(&state)),
            Err(std::sync::TryLockError::Poisoned(p)) => return Some(f(&p.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => {
                let address = STATE_ADDRESS.load(Ordering::Acquire);
                let mine =
                    crate::runtime::inside_wrapper() && !MULTITHREADED.load(Ordering::Relaxed);
                if mine && !address.is_null() {
                    return Some(f(&*address));
                }
                if std::time::Instant::now() > deadline {
                    return None;
                }
                std::thread::yield_now();
            }
        }
    }
}

/// The rank's record, built from `state`.
pub fn record_of(state: &State) -> RankRecord {
    let trees: Vec<_> = state
        .trees
        .iter()
        .map(|b| b.as_ref().map(|b| b.record()))
        .collect();
    let comms: Vec<Membership> = state
        .comms
        .as_ref()
        .map(|c| {
            let groups = c.group_memberships().map(|(kind, handle, my_rank)| {
                let mut group = Vec::new();
                encode_handle(&mut group, kind, handle);
                Membership {
                    comm: group,
                    my_rank,
                    grid: None,
                }
            });
            c.memberships()
                .map(|(handle, my_rank, grid)| {
                    let mut comm = Vec::new();
                    encode_handle(&mut comm, HandleKind::Comm, handle);
                    Membership {
                        comm,
                        my_rank,
                        grid,
                    }
                })
                .chain(groups)
                .collect()
        })
        .unwrap_or_default();
    RankRecord {
        signatures: state.signatures.iter().map(|s| s.to_vec()).collect(),
        timing: state
            .timing
            .iter()
            .map(|t| t.scaled(state.ns_per_tick()))
            .collect(),
        grammars: state.grammars.iter().map(|g| g.freeze()).collect(),
        comms,
        timelines: call_times(state)
            .iter()
            .map(|times| match state.timing_mode {
                TimingMode::Lossy(rel) => conifer_trace::lossy_timeline::encode(times, rel),
                _ => conifer_trace::timeline::encode(times),
            })
            .collect(),
        histograms: state.histograms.as_ref().map_or_else(Vec::new, |h| {
            h.in_ns(state.signatures.len(), state.ns_per_tick())
        }),
        structure: trees
            .iter()
            .any(Option::is_some)
            .then(trees::structure)
            .flatten()
            .cloned(),
        trees,
        streams: Vec::new(),
    }
}

/// Function id of the `free` events: one past the wrapped functions.
pub const FREE_EVENT: u16 = crate::wrappers::FUNCTION_NAMES.len() as u16;

/// Appends a `free(ptr=segN+0)` event for every segment MPI had seen that the program freed
/// since the last MPI call, so a trace shows when buffers went away.
fn record_frees(state: &mut State, scratch: &mut Vec<u8>, thread: u32) {
    let mut freed = Vec::new();
    crate::heap::take_freed(&mut freed);
    for id in freed {
        scratch.clear();
        put_u64(scratch, FREE_EVENT.into());
        put_u64(scratch, thread.into());
        encode_buffer(scratch, Buffer::Segment { id, offset: 0 });
        encode_int(scratch, 0);
        let now = clock::ticks();
        state.append(thread, scratch, now, now, None);
    }
}

/// Per thread, its calls' intervals and durations in ns (none unless every call's times are
/// kept).
fn call_times(state: &State) -> Vec<Vec<CallTime>> {
    state.timelines.as_ref().map_or_else(Vec::new, |threads| {
        threads
            .iter()
            .map(|calls| thread_times(calls, state.ns_per_tick()))
            .collect()
    })
}

/// A thread's (start, end) ticks as intervals and durations in ns.
fn thread_times(calls: &[(u64, u64)], ns_per_tick: f64) -> Vec<CallTime> {
    let ns = |ticks: u64| (ticks as f64 * ns_per_tick).round() as u64;
    let mut previous_end = calls.first().map_or(0, |c| c.0);
    calls
        .iter()
        .map(|&(start, end)| {
            let t = CallTime {
                interval_ns: ns(start.saturating_sub(previous_end)),
                duration_ns: ns(end.saturating_sub(start)),
            };
            previous_end = end;
            t
        })
        .collect()
}

/// With `CONIFER_RAW` set, writes this rank's uncompressed record to `dir/rank<R>.raw`: per
/// call, its thread, then its signature (both length-prefixed varints), in call order; and
/// when every call's times are kept, the exact times to `dir/rank<R>.times`: per call, in
/// call order thread by thread, a line `thread interval_ns duration_ns`.
pub fn write_raw(dir: &str, rank: c_int) -> Result<(), String> {
    write_raw_of(&lock(), dir, rank)
}

/// [`write_raw`] from `state`.
pub fn write_raw_of(state: &State, dir: &str, rank: c_int) -> Result<(), String> {
    let Some(raw) = &state.raw else { return Ok(()) };
    let mut out = Vec::new();
    for (thread, sig) in raw {
        put_u64(&mut out, (*thread).into());
        put_u64(&mut out, sig.len() as u64);
        out.extend_from_slice(sig);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {dir}: {e}"))?;
    let path = format!("{dir}/rank{rank}.raw");
    std::fs::write(&path, out).map_err(|e| format!("cannot write {path}: {e}"))?;
    if state.timelines.is_some() {
        let mut text = String::new();
        for (thread, times) in call_times(state).iter().enumerate() {
            for t in times {
                text.push_str(&format!("{thread} {} {}\n", t.interval_ns, t.duration_ns));
            }
        }
        let path = format!("{dir}/rank{rank}.times");
        std::fs::write(&path, text).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}

/// Stops recording (from `MPI_Finalize` on, nothing more is appended).
pub fn stop() {
    RECORDING.store(false, Ordering::Relaxed);
}

/// Learns the predefined communicators; called once MPI is initialised.
pub fn after_init() {
    clock::start();
    let mut provided = 0;
    // SAFETY: MPI is initialised.
    unsafe { PMPI_Query_thread(&mut provided) };
    MULTITHREADED.store(
        provided == unsafe { conifer_thread_multiple() },
        Ordering::Relaxed,
    );
    let mut state = lock();
    state.comms = Some(comms::Comms::new());
    STATE_ADDRESS.store(&mut *state, Ordering::Release);
}

/// A handle (pointer in Open MPI, integer in MPICH) as the integer the maps are keyed by,
/// equal to C's `(intptr_t)handle`.
pub trait HandleBits: Copy {
    /// The handle's bits.
    fn bits(self) -> u64;
}
impl<T> HandleBits for *mut T {
    fn bits(self) -> u64 {
        self as usize as u64
    }
}
impl<T> HandleBits for *const T {
    fn bits(self) -> u64 {
        self as usize as u64
    }
}
impl HandleBits for c_int {
    fn bits(self) -> u64 {
        self as i64 as u64
    }
}

/// The bits of a handle.
pub fn bits<H: HandleBits>(handle: H) -> u64 {
    handle.bits()
}

/// Integer types MPI passes, widened for recording.
pub trait AsI64: Copy {
    /// The value as `i64`.
    fn as_i64(self) -> i64;
}
macro_rules! as_i64 {
    ($($t:ty),*) => {$(impl AsI64 for $t { fn as_i64(self) -> i64 { self as i64 } })*};
}
as_i64!(i32, u32, i64, u64, isize, usize, i16, u16);

/// A length read from an output count (`*outcount`), zero when absent or negative.
///
/// # Safety
/// `ptr` is null or points to a readable integer.
pub unsafe fn read_len<T: AsI64>(ptr: *const T) -> usize {
    if ptr.is_null() {
        0
    } else {
        (*ptr).as_i64().max(0) as usize
    }
}

/// Sum of the first `n` integers at `ptr` as a length (0 for a null pointer or `n` ≤ 0).
///
/// # Safety
/// `ptr` is null or points to at least `n` readable integers.
pub unsafe fn sum_len<T: AsI64>(ptr: *const T, n: impl AsI64) -> usize {
    let n = n.as_i64();
    if ptr.is_null() || n <= 0 {
        return 0;
    }
    (0..n as usize)
        .map(|i| (*ptr.add(i)).as_i64().max(0) as usize)
        .sum()
}

/// The integer `ptr[n - 1]` as a length (0 for a null pointer or `n` ≤ 0): the total of a
/// cumulative array such as a graph's `index`.
///
/// # Safety
/// `ptr` is null or points to at least `n` readable integers.
pub unsafe fn last_len<T: AsI64>(ptr: *const T, n: impl AsI64) -> usize {
    let n = n.as_i64();
    if ptr.is_null() || n <= 0 {
        0
    } else {
        (*ptr.add(n as usize - 1)).as_i64().max(0) as usize
    }
}

/// True when a `flag` output says the operation completed.
///
/// # Safety
/// `flag` is null or points to a readable int.
pub unsafe fn flag_set(flag: *const c_int) -> bool {
    !flag.is_null() && *flag != 0
}

/// Values an MPI function returns, as recorded: error codes by value, anything else (times,
/// converted handles) as 0, since it is not part of what the call did.
pub trait ReturnValue {
    /// The recorded value.
    fn recorded(&self) -> i64;
}
impl ReturnValue for c_int {
    fn recorded(&self) -> i64 {
        i64::from(*self)
    }
}
impl ReturnValue for f64 {
    fn recorded(&self) -> i64 {
        0
    }
}
impl<T> ReturnValue for *mut T {
    fn recorded(&self) -> i64 {
        0
    }
}
impl ReturnValue for i64 {
    fn recorded(&self) -> i64 {
        0
    }
}
impl ReturnValue for () {
    fn recorded(&self) -> i64 {
        0
    }
}

/// The communicator the generated code names for the statuses and requests of file I/O,
/// which have none: their statuses carry no message source or tag.
pub const FILE_IO: u64 = u64::MAX;

/// [`Call::site`] of a call without a known call site.
const NO_SITE: u32 = u32::MAX;

/// One MPI call being recorded.
pub struct Call {
    sig: Vec<u8>,
    saved: Vec<u64>,
    state: Option<MutexGuard<'static, State>>,
    start: u64,
    thread: u32,
    /// Structure-tree call site of the call, when the program announced one ([`NO_SITE`]
    /// otherwise: a plain integer beside `thread` keeps the struct small enough to move
    /// without a `memcpy` call on every MPI call).
    site: u32,
    /// The communicator of the requests the call completes (for their statuses' sources).
    request_comm: Option<u64>,
    /// What the PMPI call returned (statuses' errors are read only after
    /// `MPI_ERR_IN_STATUS`).
    returned: i64,
    /// The stack pointer the program had at the call (0: unknown): stack buffers are
    /// recorded as offsets from it.
    frame: usize,
    /// The calling thread's runtime state, where the buffers go back when the call is
    /// finished.
    thread_state: *const ThreadState,
    /// False when the call is left out of the record ([`control`]): counted and kept track
    /// of, not appended.
    keep: bool,
}

impl Call {
    /// Starts recording a call of function `id` made through the wrapper symbol of `anchor`,
    /// or `None` when not recording.
    pub fn start(guard: &CallGuard, id: u16, anchor: &Anchor) -> Option<Call> {
        if !RECORDING.load(Ordering::Relaxed) {
            return None;
        }
        let state = guard.thread();
        if state.ordinal.get() == u32::MAX {
            state
                .ordinal
                .set(NEXT_THREAD.fetch_add(1, Ordering::Relaxed));
        }
        let thread = state.ordinal.get();
        // Before the lock and the clock: the first call through a wrapper symbol unwinds.
        let frame = guard.caller_sp(anchor).unwrap_or(0);
        let (mut sig, saved) = std::mem::take(&mut *state.scratch.borrow_mut());
        let mut locked = lock();
        if let Some(n) = locked.calls.get_mut(usize::from(id)) {
            *n += 1;
        }
        record_frees(&mut locked, &mut sig, thread);
        sig.clear();
        put_u64(&mut sig, id.into());
        put_u64(&mut sig, thread.into());
        if let Some(modules) = &mut locked.callers {
            if let Some(caller) = guard.return_address(anchor).and_then(|a| modules.locate(a)) {
                caller.encode(&mut sig);
            }
        }
        Some(Call {
            sig,
            saved,
            state: Some(locked),
            start: clock::ticks(),
            thread,
            site: trees::binary_has_tree()
                .then(crate::structure::take_site)
                .flatten()
                .unwrap_or(NO_SITE),
            request_comm: None,
            returned: 0,
            frame,
            thread_state: state,
            keep: control::keeps(id),
        })
    }

    fn st(&mut self) -> &mut State {
        self.state
            .as_mut()
            .expect("state is locked outside the PMPI call")
    }

    /// Releases the lock for the PMPI call when other threads may call MPI meanwhile.
    pub fn before_pmpi(&mut self) {
        if MULTITHREADED.load(Ordering::Relaxed) {
            self.state = None;
        }
    }

    /// Takes the lock again after the PMPI call, if it was released.
    pub fn after_pmpi<R: ReturnValue>(&mut self, ret: &R) {
        if self.state.is_none() {
            self.state = Some(lock());
        }
        self.returned = ret.recorded();
    }

    /// Records the return value and appends the call to the rank's record.
    pub fn finish<R: ReturnValue>(mut self, ret: &R) {
        encode_int(&mut self.sig, ret.recorded());
        let end = clock::ticks();
        let thread = self.thread;
        let sig = std::mem::take(&mut self.sig);
        let (start, site) = (self.start, Some(self.site).filter(|&s| s != NO_SITE));
        if self.keep {
            self.st().append(thread, &sig, start, end, site);
        }
        self.state = None;
        let saved = std::mem::take(&mut self.saved);
        // SAFETY: the thread-local outlives the call, and the call runs on its thread.
        unsafe { *(*self.thread_state).scratch.borrow_mut() = (sig, saved) };
    }

    /// Number of peers a v/w collective's per-peer arrays cover: the remote group of an
    /// inter-communicator, else the group.
    pub fn peer_count<H: HandleBits>(&mut self, comm: H) -> usize {
        let info = self
            .st()
            .comms
            .as_ref()
            .and_then(|c| c.get(comm.bits()))
            .copied();
        info.map_or(0, |i| i.remote_size.unwrap_or(i.size).max(0) as usize)
    }

    /// Number of dimensions of `comm`'s Cartesian grid (0 when it has none).
    pub fn grid_dims<H: HandleBits>(&mut self, comm: H) -> usize {
        let comms = self.st().comms.as_ref();
        comms
            .and_then(|c| c.grid(comm.bits()))
            .map_or(0, |g| g.dims.len())
    }

    /// True when the caller is `root` of `comm` (root-only arguments are read only there).
    pub fn is_root(&mut self, root: i64, comm: u64) -> bool {
        let info = self.st().comms.as_ref().and_then(|c| c.get(comm)).copied();
        match info {
            // SAFETY: constant from mpi.h.
            Some(i) if i.remote_size.is_some() => root == i64::from(unsafe { conifer_root() }),
            Some(i) => i.my_rank == root,
            None => false,
        }
    }

    /// An integer argument.
    pub fn int(&mut self, v: i64) {
        encode_int(&mut self.sig, v);
    }

    /// A value Conifer does not interpret.
    pub fn opaque(&mut self) {
        Value::Opaque.encode(&mut self.sig);
    }

    /// An argument that was not read (not significant here, or an ignored output).
    pub fn ignored(&mut self) {
        Value::Ignored.encode(&mut self.sig);
    }

    fn handle_ref(&mut self, kind: HandleKind, bits: u64) -> HandleRef {
        let st = self.st();
        match kind {
            HandleKind::Comm => st
                .comms
                .as_ref()
                .and_then(|c| c.get(bits))
                .map_or(HandleRef::Unknown, |i| i.handle),
            HandleKind::Request => match st.handles.named(kind, bits) {
                Some(code) => HandleRef::Named(code),
                None => st
                    .requests
                    .lookup(bits)
                    .map_or(HandleRef::Unknown, |r| HandleRef::Id(r.id)),
            },
            _ => st.handles.lookup(kind, bits),
        }
    }

    /// An input handle.
    pub fn handle(&mut self, kind: HandleKind, bits: u64) {
        let h = self.handle_ref(kind, bits);
        encode_handle(&mut self.sig, kind, h);
    }

    /// An input buffer address.
    pub fn buffer(&mut self, ptr: *const c_void) {
        // SAFETY: constants from mpi.h.
        let (in_place, bottom) = unsafe { (conifer_in_place(), conifer_bottom()) };
        let b = if ptr.is_null() {
            Buffer::Null
        } else if ptr == in_place {
            Buffer::InPlace
        } else if ptr == bottom {
            Buffer::Bottom
        } else if let Some(offset) = self.stack_offset(ptr as usize) {
            Buffer::Stack { offset }
        } else {
            match crate::heap::locate(ptr as usize) {
                Some((id, offset)) => Buffer::Segment { id, offset },
                None => {
                    let segments = &mut self.st().segments;
                    let next = segments.len() as u32;
                    let id = *segments.entry(ptr as usize).or_insert(next);
                    Buffer::Segment { id, offset: 0 }
                }
            }
        };
        encode_buffer(&mut self.sig, b);
    }

    /// The offset of `address` from the program's stack pointer at the call, when the address
    /// is on the calling thread's stack above it (in a live frame of the program).
    fn stack_offset(&self, address: usize) -> Option<i64> {
        if self.frame == 0 || address < self.frame {
            return None;
        }
        // SAFETY: the thread-local outlives the call, and the call runs on its thread.
        let top = unsafe { (*self.thread_state).stack_top() };
        (address < top).then(|| (address - self.frame) as i64)
    }

    /// A NUL-terminated string (input, or output read after the call).
    ///
    /// # Safety
    /// `ptr` is null or a NUL-terminated string.
    pub unsafe fn string(&mut self, ptr: *const c_char) {
        if ptr.is_null() {
            return self.ignored();
        }
        Value::Str(CStr::from_ptr(ptr).to_string_lossy().into_owned()).encode(&mut self.sig);
    }

    /// A Fortran CHARACTER argument: `len` bytes, blank-padded, not NUL-terminated.
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable bytes.
    pub unsafe fn fortran_string(&mut self, ptr: *const c_char, len: usize) {
        if ptr.is_null() {
            return self.ignored();
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        let text = String::from_utf8_lossy(bytes)
            .trim_end_matches(' ')
            .to_string();
        Value::Str(text).encode(&mut self.sig);
    }

    fn is_sentinel(ptr: *const c_void) -> bool {
        // SAFETY: constants from mpi.h.
        unsafe {
            ptr == conifer_errcodes_ignore()
                || ptr == conifer_unweighted()
                || ptr == conifer_weights_empty()
        }
    }

    /// Appends an array of `len` values, each appended by `item` straight into the signature.
    fn array(&mut self, len: usize, mut item: impl FnMut(&mut Call, usize)) {
        encode_array_header(&mut self.sig, len);
        for i in 0..len {
            item(self, i);
        }
    }

    /// An array of integers.
    ///
    /// # Safety
    /// `ptr` is null, an MPI sentinel, or points to `len` readable integers.
    pub unsafe fn ints<T: AsI64>(&mut self, ptr: *const T, len: usize) {
        if ptr.is_null() || Self::is_sentinel(ptr.cast()) {
            return self.ignored();
        }
        self.array(len, |c, i| c.int((*ptr.add(i)).as_i64()));
    }

    /// An integer output.
    ///
    /// # Safety
    /// `ptr` is null or points to a readable integer.
    pub unsafe fn int_out<T: AsI64>(&mut self, ptr: *const T) {
        if ptr.is_null() || Self::is_sentinel(ptr.cast()) {
            return self.ignored();
        }
        self.int((*ptr).as_i64());
    }

    /// An array of input handles.
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable handles.
    pub unsafe fn handles<H: HandleBits>(&mut self, kind: HandleKind, ptr: *const H, len: usize) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.array(len, |c, i| c.handle(kind, (*ptr.add(i)).bits()));
    }

    /// In-out handles (requests to complete, objects to free): records them and remembers
    /// their values so that [`Call::release_completed`] can tell which ones MPI released.
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable handles.
    pub unsafe fn handles_before<H: HandleBits>(
        &mut self,
        kind: HandleKind,
        ptr: *const H,
        len: usize,
        array: bool,
    ) {
        self.saved.clear();
        if ptr.is_null() {
            return self.ignored();
        }
        self.saved.extend((0..len).map(|i| (*ptr.add(i)).bits()));
        if kind == HandleKind::Request {
            let st = self
                .state
                .as_mut()
                .expect("state is locked outside the PMPI call");
            self.request_comm = self
                .saved
                .iter()
                .find_map(|b| st.requests.lookup(*b).and_then(|r| r.comm));
        }
        if array {
            encode_array_header(&mut self.sig, len);
        }
        for i in 0..if array { len } else { len.min(1) } {
            let bits = self.saved[i];
            let h = if kind == HandleKind::Request {
                // The n-th occurrence of a shared request handle is the n-th request made with it.
                let n = self.saved[..i].iter().filter(|&&b| b == bits).count();
                match self.st().requests.nth(bits, n) {
                    Some(live) => HandleRef::Id(live.id),
                    None => self.handle_ref(kind, bits),
                }
            } else {
                self.handle_ref(kind, bits)
            };
            encode_handle(&mut self.sig, kind, h);
        }
        if !array && len == 0 {
            self.ignored();
        }
    }

    /// After the call: the in-out handles MPI set to the null handle were completed or freed.
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable handles.
    pub unsafe fn release_completed<H: HandleBits>(
        &mut self,
        kind: HandleKind,
        ptr: *const H,
        len: usize,
    ) {
        if ptr.is_null() {
            return;
        }
        let saved = std::mem::take(&mut self.saved);
        for (i, before) in saved.iter().enumerate().take(len) {
            let now = (*ptr.add(i)).bits();
            let st = self.st();
            let became_null = st.handles.named(kind, now) == Some(0)
                && st.handles.named(kind, *before) != Some(0);
            if !became_null {
                continue;
            }
            match kind {
                HandleKind::Request => st.requests.complete(*before),
                HandleKind::Comm => {
                    if let Some(c) = st.comms.as_mut() {
                        c.release(*before)
                    }
                }
                _ => st.handles.release(kind, *before),
            }
        }
        self.saved = saved;
    }

    /// A handle MPI returned: existing id, or a new one.
    ///
    /// # Safety
    /// `ptr` is null or points to a readable handle.
    pub unsafe fn new_handle<H: HandleBits>(&mut self, kind: HandleKind, ptr: *const H) {
        if ptr.is_null() {
            return self.ignored();
        }
        let h = self.st().handles.register(kind, (*ptr).bits());
        encode_handle(&mut self.sig, kind, h);
    }

    /// A group MPI created: an id like any handle, plus the caller's rank in it, so ranks of
    /// the group are recorded relative to it.
    ///
    /// # Safety
    /// `ptr` is null or points to a group handle MPI just wrote.
    pub unsafe fn new_group<G: GroupHandle>(&mut self, ptr: *const G) {
        if ptr.is_null() {
            return self.ignored();
        }
        let bits = (*ptr).bits();
        let group = (*ptr).group();
        let h = self.st().handles.register(HandleKind::Group, bits);
        encode_handle(&mut self.sig, HandleKind::Group, h);
        let (mut rank, mut size) = (0, 0);
        if PMPI_Group_rank(group, &mut rank) != 0 || PMPI_Group_size(group, &mut size) != 0 {
            return;
        }
        if rank != conifer_undefined() {
            if let Some(comms) = self.st().comms.as_mut() {
                comms.insert_group(HandleKind::Group, bits, h, rank.into(), size.into());
            }
        }
    }

    /// A window MPI created: an id like any handle, plus the caller's rank in the window's
    /// group, so the target ranks of one-sided calls are recorded relative to it.
    ///
    /// # Safety
    /// `ptr` is null or points to a window handle MPI just wrote.
    pub unsafe fn new_window<W: WindowHandle>(&mut self, ptr: *const W) {
        if ptr.is_null() {
            return self.ignored();
        }
        let bits = (*ptr).bits();
        let h = self.st().handles.register(HandleKind::Win, bits);
        encode_handle(&mut self.sig, HandleKind::Win, h);
        let mut group = std::mem::zeroed();
        if PMPI_Win_get_group((*ptr).window(), &mut group) != 0 {
            return;
        }
        let (mut rank, mut size) = (0, 0);
        let known =
            PMPI_Group_rank(group, &mut rank) == 0 && PMPI_Group_size(group, &mut size) == 0;
        PMPI_Group_free(&mut group);
        if known && rank != conifer_undefined() {
            if let Some(comms) = self.st().comms.as_mut() {
                comms.insert_group(HandleKind::Win, bits, h, rank.into(), size.into());
            }
        }
    }

    /// Handles MPI returned in an array.
    ///
    /// # Safety
    /// `ptr` is null or points to `len` readable handles.
    pub unsafe fn new_handles<H: HandleBits>(
        &mut self,
        kind: HandleKind,
        ptr: *const H,
        len: usize,
    ) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.array(len, |c, i| {
            let h = c.st().handles.register(kind, (*ptr.add(i)).bits());
            encode_handle(&mut c.sig, kind, h);
        });
    }

    /// A communicator MPI created: its id is agreed with all members (a collective over it).
    ///
    /// # Safety
    /// `ptr` is null or points to a communicator every member is receiving from the same call.
    pub unsafe fn new_comm<C: CommHandle>(&mut self, ptr: *const C) {
        if ptr.is_null() {
            return self.ignored();
        }
        let comm = (*ptr).comm();
        let bits = comms::comm_bits(comm);
        if bits == comms::comm_bits(conifer_comm_null()) {
            return encode_handle(&mut self.sig, HandleKind::Comm, HandleRef::Named(0));
        }
        let (offer, fallback) = match self.st().comms.as_ref() {
            Some(c) => (c.offer(), c.fallback_id()),
            None => return self.local_comm(&comm),
        };
        // The agreement is a collective: never hold the lock across it.
        self.state = None;
        let agreed = comms::agree(comm, offer, fallback);
        self.state = Some(lock());
        let comms = self
            .st()
            .comms
            .as_mut()
            .expect("comms exist after MPI_Init");
        let h = match agreed {
            Some(id) => comms.insert_agreed(comm, id),
            None => comms.insert_local(comm),
        };
        encode_handle(&mut self.sig, HandleKind::Comm, h);
    }

    /// The communicator `MPI_Comm_idup` creates from `parent`: it cannot be used, so not agreed
    /// on, before the request completes, but all members duplicate a communicator in the same
    /// order, so its id is derived from the parent's and the duplicate's number, identically on
    /// every member; rank, size and topology are the parent's.
    ///
    /// # Safety
    /// `ptr` is null or points to a communicator handle.
    pub unsafe fn idup_comm<C: CommHandle>(&mut self, ptr: *const C, parent: Option<u64>) {
        if ptr.is_null() {
            return self.ignored();
        }
        let comm = (*ptr).comm();
        let h = match (self.st().comms.as_mut(), parent) {
            (Some(c), Some(parent)) => c.insert_duplicate(comm, parent),
            (Some(c), None) => c.insert_local(comm),
            (None, _) => HandleRef::Unknown,
        };
        encode_handle(&mut self.sig, HandleKind::Comm, h);
    }

    /// A communicator whose id cannot be agreed at creation (`MPI_Comm_get_parent`).
    ///
    /// # Safety
    /// `ptr` is null or points to a communicator handle.
    pub unsafe fn local_comm<C: CommHandle>(&mut self, ptr: *const C) {
        if ptr.is_null() {
            return self.ignored();
        }
        let h = match self.st().comms.as_mut() {
            Some(c) => c.insert_local((*ptr).comm()),
            None => HandleRef::Unknown,
        };
        encode_handle(&mut self.sig, HandleKind::Comm, h);
    }

    /// A request MPI created: an id from the pool of this call's signature, made at its call
    /// site when the program announced one. Every pool then belongs to one call site
    /// (CYPRESS maps each request to its creating call site, so the calls completing it name
    /// that site) and still repeats whatever order requests complete in.
    ///
    /// # Safety
    /// `ptr` is null or points to a request handle.
    pub unsafe fn new_request<H: HandleBits>(&mut self, ptr: *const H, comm: Option<u64>) {
        if ptr.is_null() {
            return self.ignored();
        }
        let bits = (*ptr).bits();
        if let Some(code) = self.st().handles.named(HandleKind::Request, bits) {
            return encode_handle(&mut self.sig, HandleKind::Request, HandleRef::Named(code));
        }
        let signature = state::hash_bytes(&self.sig);
        let creator = match Some(self.site).filter(|&s| s != NO_SITE) {
            Some(site) => signature ^ (u64::from(site) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            None => signature,
        };
        let id = self.st().requests.create(creator, bits, comm);
        encode_handle(&mut self.sig, HandleKind::Request, HandleRef::Id(id));
    }

    unsafe fn status_value(&mut self, status: MPI_Status, comm: Option<u64>) -> Value {
        let s = &status;
        let mut count: c_int = 0;
        let bytes = if PMPI_Get_count(s, conifer_type_byte(), &mut count) == 0 {
            count
        } else {
            -1
        };
        let context = comm.or(self.request_comm);
        // A file operation's status has no message: its source and tag are undefined (and
        // differ between ranks and runs), so they are recorded as UNDEFINED and 0.
        let (source, tag) = match context {
            Some(FILE_IO) => (Rank::Undefined, 0),
            _ => (
                self.rank_value(s.MPI_SOURCE.into(), context),
                s.MPI_TAG.into(),
            ),
        };
        Value::Status(Status {
            source,
            tag,
            // MPI sets a status's MPI_ERROR only when the call returns MPI_ERR_IN_STATUS;
            // elsewhere it is undefined (often stack garbage) and recorded as 0.
            error: if self.returned == *ERR_IN_STATUS {
                s.MPI_ERROR.into()
            } else {
                0
            },
            bytes: bytes.into(),
        })
    }

    /// A status output.
    ///
    /// # Safety
    /// `ptr` is null, the status-ignore sentinel, or a status MPI filled in.
    pub unsafe fn status<S: StatusSlot>(&mut self, ptr: *const S, comm: Option<u64>) {
        match S::read(ptr) {
            Some(status) => {
                let v = self.status_value(status, comm);
                v.encode(&mut self.sig);
            }
            None => self.ignored(),
        }
    }

    /// An array of statuses.
    ///
    /// # Safety
    /// `ptr` is null, the statuses-ignore sentinel, or `len` statuses MPI filled in.
    pub unsafe fn statuses<S: StatusSlot>(&mut self, ptr: *const S, len: usize, comm: Option<u64>) {
        if ptr.is_null() || S::is_ignore_array(ptr) {
            return self.ignored();
        }
        self.array(len, |c, i| match S::read(ptr.add(i)) {
            Some(status) => {
                let v = c.status_value(status, comm);
                v.encode(&mut c.sig);
            }
            None => c.ignored(),
        });
    }
}

/// A communicator handle as the application holds it (C `MPI_Comm`, or a Fortran integer).
pub trait CommHandle: HandleBits {
    /// The C communicator.
    fn comm(self) -> MPI_Comm;
}

impl CommHandle for MPI_Comm {
    fn comm(self) -> MPI_Comm {
        self
    }
}

/// A group handle of either binding, as the C group.
pub trait GroupHandle: HandleBits {
    /// The C group.
    fn group(self) -> MPI_Group;
}

impl GroupHandle for MPI_Group {
    fn group(self) -> MPI_Group {
        self
    }
}

/// A window handle MPI wrote (C `MPI_Win`, or a Fortran `INTEGER`).
pub trait WindowHandle: HandleBits {
    /// The C window.
    fn window(self) -> MPI_Win;
}

impl WindowHandle for MPI_Win {
    fn window(self) -> MPI_Win {
        self
    }
}

/// Where MPI writes a status (C `MPI_Status`, or a Fortran `INTEGER` array).
pub trait StatusSlot: Sized {
    /// The status, or `None` for null and the status-ignore sentinel.
    ///
    /// # Safety
    /// `ptr` is null, a sentinel, or a status MPI filled in.
    unsafe fn read(ptr: *const Self) -> Option<MPI_Status>;
    /// True for the statuses-ignore sentinel.
    ///
    /// # Safety
    /// None: compares addresses only.
    unsafe fn is_ignore_array(ptr: *const Self) -> bool;
}

impl StatusSlot for MPI_Status {
    unsafe fn read(ptr: *const Self) -> Option<MPI_Status> {
        (!ptr.is_null() && ptr.cast() != conifer_status_ignore()).then(|| *ptr)
    }
    unsafe fn is_ignore_array(ptr: *const Self) -> bool {
        ptr.cast() == conifer_statuses_ignore()
    }
}

/// The `ierror` a Fortran procedure set (its last argument), as the recorded result.
///
/// # Safety
/// `ierror` is null or points to a Fortran `INTEGER` the procedure wrote.
pub unsafe fn read_ierror(ierror: *mut c_void) -> c_int {
    if ierror.is_null() {
        0
    } else {
        *(ierror as *const c_int)
    }
}
