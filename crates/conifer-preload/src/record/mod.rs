//! Recording one MPI call: the generated wrappers drive a [`Call`] through its inputs (before
//! the PMPI call), its outputs (after it) and [`Call::finish`]. Each argument is encoded into
//! the call's signature with symbolic ids for objects and buffers and relative ranks; the
//! finished signature goes into the rank's signature table and the thread's grammar.
//!
//! The rank's state is behind one lock, which is never held across the PMPI call itself, so
//! threads of an `MPI_THREAD_MULTIPLE` program never wait on each other's communication.

mod addresses;
mod arguments;
mod callers;
mod comms;
mod completion;
mod completion_state;
pub mod control;
mod elf_sections;
mod global;
mod handles;
mod input_memo;
mod live_table;
mod objects;
pub mod own_status;
mod poll_memo;
mod poll_repeat;
mod ranks;
mod recorder_lock;
mod requests;
mod snapshot;
mod state;
pub mod structure;
mod tick_histograms;
mod tick_timing;
mod timing_env;
pub mod trees;
pub mod untraced;
mod wildcards;
mod word_hash;

use crate::clock;
use crate::mpi::*;
use crate::stack::Anchor;
use crate::thread::{CallBuffers, CallGuard, ThreadState};
pub use arguments::*;
use conifer_format::rank_record::RankRecord;
use conifer_format::value::{
    encode_array_header, encode_buffer, encode_handle, encode_ignored, encode_int, encode_opaque,
    encode_rank, encode_status,
};
use conifer_format::value::{Buffer, HandleKind, HandleRef, Rank, Status, Value};
use conifer_format::varint::put_u64;
use global::{lock, MULTITHREADED};
pub use global::{multithreaded, salvage};
use recorder_lock::Locked;
pub use snapshot::{record_of, write_raw, write_raw_of, ClockOffsets};
use state::State;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::LazyLock;

static RECORDING: AtomicBool = AtomicBool::new(true);
/// `MPI_ERR_IN_STATUS`, read once.
// SAFETY: the shim returns a compile-time constant.
static ERR_IN_STATUS: LazyLock<i64> =
    LazyLock::new(|| i64::from(unsafe { conifer_err_in_status() }));

static NEXT_THREAD: AtomicU32 = AtomicU32::new(0);

/// The rank's record in the form sent to the merge, with its clock `offsets`, taken once at
/// the end of the run: the recorder's live forms are freed as it is made (recording has
/// stopped).
pub fn rank_record(offsets: ClockOffsets) -> RankRecord {
    snapshot::take_record(&mut lock(), offsets)
}

/// Nanoseconds per clock tick, fixed from the first time it is asked on.
pub fn ns_per_tick() -> f64 {
    lock().ns_per_tick()
}

/// The timing the run asked for (`CONIFER_TIMING`; the default when unset or not understood).
pub fn timing_mode() -> conifer_format::timing_mode::TimingMode {
    timing_env::requested()
}

/// True when the run records call sites (`CONIFER_CALLSITES`, by default for programs built
/// with `-g`).
pub fn callers_recorded() -> bool {
    callers::requested()
}

/// The paths of the modules recorded call sites are named in (`CONIFER_CALLSITES`); empty
/// when call sites are not recorded.
pub fn caller_modules() -> Vec<String> {
    if callers::requested() {
        callers::module_paths()
    } else {
        Vec::new()
    }
}

/// Polls appended as repeats of the previous call (see [`poll_repeat`]).
pub fn repeated_polls() -> u64 {
    lock().poll_memo.repeats
}

/// The wrappers' call counters, by function id.
pub fn call_counts() -> Vec<u64> {
    lock().calls.clone()
}

/// Places a call (terminal `terminal`, made at structure-tree site `site`) in its thread's
/// trace tree `tree`, made on the thread's first call when the binary embeds a structure tree,
/// after applying the thread's structure events not yet applied; false when the thread has no
/// tree or the tree leaves the call to the grammar.
#[inline(always)]
fn place_in_tree(
    tree: &mut Option<conifer_compress::tree::TreeBuilder>,
    site: Option<u32>,
    terminal: u32,
) -> bool {
    if tree.is_none() && trees::binary_has_tree() {
        *tree = trees::new_builder();
    }
    tree.as_mut().is_some_and(|builder| {
        structure::catch_up(builder);
        builder.call(site, terminal)
    })
}

/// Function id of the `free` events: one past the wrapped functions.
pub const FREE_EVENT: u16 = crate::wrappers::FUNCTION_NAMES.len() as u16;

/// Appends a `free(ptr=segN+0)` event for every segment MPI had seen that the program freed
/// since the last MPI call, so a trace shows when buffers went away.
/// `now` is the tick the call entered its wrapper, on the real clock.
fn record_frees(state: &mut State, scratch: &mut Vec<u8>, thread: u32, now: u64) {
    let mut freed = Vec::new();
    crate::heap::take_freed(&mut freed);
    if freed.is_empty() {
        return;
    }
    let now = state.recorder_free(thread, now);
    for id in freed {
        scratch.clear();
        put_u64(scratch, FREE_EVENT.into());
        put_u64(scratch, thread.into());
        encode_buffer(scratch, Buffer::Segment { id, offset: 0 });
        encode_int(scratch, 0);
        state.append(thread, scratch, now, now, None, place_in_tree);
    }
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
    state.tables_changed();
}

/// The communicator the generated code names for the statuses and requests of file I/O,
/// which have none: their statuses carry no message source or tag.
pub const FILE_IO: u64 = u64::MAX;

/// [`Call::site`] of a call without a known call site.
const NO_SITE: u32 = u32::MAX;

/// A call's locked state (held from its start to its finish, except across the PMPI call of
/// a multithreaded program); a field of its own, so it can be borrowed beside the buffers.
fn locked_state<'a>(state: &'a mut Option<Locked<'static, State>>) -> &'a mut State {
    state
        .as_mut()
        .expect("state is locked outside the PMPI call")
}

/// One MPI call being recorded, by the outermost wrapper of its thread. It lives in the
/// wrapper's frame and is never moved: the generated code works on it in place, and its
/// buffers are the thread's own ([`CallBuffers`]), so no call copies them in or out.
pub struct Call<'t> {
    /// The call's signature, encoded so far.
    sig: &'t mut Vec<u8>,
    /// In-out handles as they were before the PMPI call ([`Call::handles_before`]).
    saved: &'t mut Vec<u64>,
    state: Option<Locked<'static, State>>,
    /// Real tick the PMPI call started (the wrapper's entry and the PMPI call's end are kept
    /// in the thread's [`ThreadState`]). The recorder's work before the start and after the
    /// end is hidden from recorded times ([`State::hidden`]).
    start: u64,
    thread: u32,
    /// Structure-tree call site of the call, when the program announced one ([`NO_SITE`]
    /// otherwise).
    site: u32,
    /// The communicator of the requests the call completes (for their statuses' sources).
    request_comm: Option<u64>,
    /// True when the call posts a receive with a wildcard source or tag ([`Call::mark_wildcard`]).
    wildcard: bool,
    /// What the PMPI call returned (statuses' errors are read only after
    /// `MPI_ERR_IN_STATUS`).
    returned: i64,
    /// The stack pointer the program had at the call (0: unknown): stack buffers are
    /// recorded as offsets from it.
    frame: usize,
    /// The calling thread's runtime state.
    thread_state: &'t ThreadState,
    /// False when the call is left out of the record ([`control`]): counted and kept track
    /// of, not appended.
    keep: bool,
    /// True when this poll repeats the remembered one, its inputs not encoded (see
    /// [`poll_repeat`]).
    repeated: bool,
    /// A poll's end of the inputs in the signature ([`Call::end_poll_inputs`]).
    inputs_end: u32,
}

impl<'t> Call<'t> {
    /// Starts recording a call of function `id` made through the wrapper symbol of `anchor`,
    /// or `None` when not recording. Only the thread's outermost wrapper may start one.
    #[inline(always)]
    pub fn start(guard: &'t CallGuard, id: u16, anchor: &Anchor) -> Option<Call<'t>> {
        if !RECORDING.load(Ordering::Relaxed) {
            return None;
        }
        Call::begin(guard, id, anchor)
    }

    /// [`Call::start`] when recording: always `Some`, built in the caller's slot (returning
    /// a bare `Call` made the wrapper copy it, reading stores still in flight).
    fn begin(guard: &'t CallGuard, id: u16, anchor: &Anchor) -> Option<Call<'t>> {
        let entered = guard.entered;
        let state = guard.thread();
        if state.ordinal.get() == u32::MAX {
            state
                .ordinal
                .set(NEXT_THREAD.fetch_add(1, Ordering::Relaxed));
        }
        let thread = state.ordinal.get();
        // Before the lock and the clock: the first call through a wrapper symbol unwinds.
        let frame = guard.caller_sp(anchor).unwrap_or(0);
        // SAFETY: only the thread's outermost wrapper records a call, so this call is the
        // only user of the thread's buffers until it is dropped.
        let CallBuffers { sig, saved } = unsafe { &mut *state.buffers.get() };
        let mut locked = lock();
        locked.add_thread(thread);
        state.entered.set(entered);
        let exited = state.exited.replace(0);
        if exited != 0 {
            let post = exited.saturating_sub(state.pmpi_end.get());
            locked.hide(thread, post);
            locked.note_post(thread, post);
        }
        if let Some(n) = locked.calls.get_mut(usize::from(id)) {
            *n += 1;
        }
        locked.poll_memo.call_started();
        record_frees(&mut locked, sig, thread, entered);
        sig.clear();
        put_u64(sig, id.into());
        put_u64(sig, thread.into());
        if let Some(modules) = &mut locked.callers {
            if let Some(caller) = guard.return_address(anchor).and_then(|a| modules.locate(a)) {
                caller.encode(sig);
            }
        }
        Some(Call {
            sig,
            saved,
            state: Some(locked),
            start: entered,
            thread,
            site: trees::binary_has_tree()
                .then(structure::take_site)
                .flatten()
                .unwrap_or(NO_SITE),
            request_comm: None,
            wildcard: false,
            returned: 0,
            frame,
            thread_state: state,
            keep: control::keeps(id),
            repeated: false,
            inputs_end: 0,
        })
    }
}

impl Call<'_> {
    fn st(&mut self) -> &mut State {
        locked_state(&mut self.state)
    }

    /// Releases the lock for the PMPI call when other threads may call MPI meanwhile.
    pub fn before_pmpi(&mut self) {
        if MULTITHREADED.load(Ordering::Relaxed) {
            self.state = None;
        }
        self.start = clock::ticks();
    }

    /// Takes the lock again after the PMPI call, if it was released.
    pub fn after_pmpi<R: ReturnValue>(&mut self, ret: &R) {
        let end = clock::ticks();
        self.thread_state.ended(end);
        if self.state.is_none() {
            self.state = Some(lock());
        }
        self.returned = ret.recorded();
    }

    /// Records the return value and appends the call to the rank's record; the call is
    /// done (the generated code drops it right after).
    pub fn finish<R: ReturnValue>(&mut self, ret: &R) {
        encode_int(self.sig, ret.recorded());
        self.append_finished(None);
        self.state = None;
    }

    /// Appends the finished call (its signature complete) to the rank's record as `terminal`,
    /// or as its signature's terminal when `None`, with its timing; the lock stays held.
    #[inline(always)]
    fn append_finished(&mut self, terminal: Option<u32>) {
        let thread = self.thread;
        let site = Some(self.site).filter(|&s| s != NO_SITE);
        let (entered, start, keep) = (self.thread_state.entered.get(), self.start, self.keep);
        // The PMPI call's end, or (a call finished before its PMPI call) its start.
        let end = self.thread_state.pmpi_end.get().max(start);
        let st = locked_state(&mut self.state);
        let read = clock::read_cost();
        let pre = start.saturating_sub(entered);
        st.hide(thread, pre + read);
        if keep {
            let start = st.recorder_free(thread, start);
            st.hide(thread, read);
            let end = st.recorder_free(thread, end);
            match terminal {
                Some(terminal) => {
                    st.append_terminal(thread, terminal, start, end, site, place_in_tree);
                    st.repeat_completion(thread, terminal);
                }
                None => {
                    let sig = &**self.sig;
                    let streamed = completion::layout_of(sig).is_some_and(|layout| {
                        st.append_completion(thread, sig, layout, start, end, site, place_in_tree)
                    });
                    if !streamed {
                        st.append(thread, sig, start, end, site, place_in_tree);
                    }
                }
            }
            st.note_pre(thread, pre);
        } else {
            st.hide(thread, read);
        }
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

    /// Appends the call's inputs, as `encode` writes them; copied instead from the last call
    /// of `function` made with the same raw arguments `key` from the same frame, when the
    /// recorder's tables are unchanged since (see [`input_memo`]).
    #[inline(always)]
    pub fn inputs<const N: usize>(
        &mut self,
        function: u16,
        key: &[u64; N],
        encode: impl FnOnce(&mut Self),
    ) {
        let st = locked_state(&mut self.state);
        let stamp = st.tables_stamp();
        if let Some(bytes) = st.input_memo.find(function, key, self.frame, stamp) {
            self.sig.extend_from_slice(bytes);
            return;
        }
        let from = self.sig.len();
        encode(self);
        let st = locked_state(&mut self.state);
        st.input_memo
            .remember(function, key, self.frame, stamp, &self.sig[from..]);
    }

    /// An integer argument.
    pub fn int(&mut self, v: i64) {
        encode_int(self.sig, v);
    }

    /// A value Conifer does not interpret.
    pub fn opaque(&mut self) {
        encode_opaque(self.sig);
    }

    /// An argument that was not read (not significant here, or an ignored output).
    pub fn ignored(&mut self) {
        encode_ignored(self.sig);
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
        encode_handle(self.sig, kind, h);
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
        encode_buffer(self.sig, b);
    }

    /// The offset of `address` from the program's stack pointer at the call, when the address
    /// is on the calling thread's stack above it (in a live frame of the program).
    fn stack_offset(&self, address: usize) -> Option<i64> {
        if self.frame == 0 || address < self.frame {
            return None;
        }
        let top = self.thread_state.stack_top();
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
        Value::Str(CStr::from_ptr(ptr).to_string_lossy().into_owned()).encode(self.sig);
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
        Value::Str(text).encode(self.sig);
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
    fn array(&mut self, len: usize, mut item: impl FnMut(&mut Self, usize)) {
        encode_array_header(self.sig, len);
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

    /// The index `MPI_Waitany` / `MPI_Testany` returns: `MPI_UNDEFINED` (none completed, or
    /// no active request) as such, else the integer.
    ///
    /// # Safety
    /// `ptr` is null, a sentinel, or points to a readable integer.
    pub unsafe fn index_out<T: AsI64>(&mut self, ptr: *const T) {
        if !ptr.is_null()
            && !Self::is_sentinel(ptr.cast())
            && (*ptr).as_i64() == i64::from(conifer_undefined())
        {
            return encode_rank(self.sig, Rank::Undefined);
        }
        self.int_out(ptr);
    }

    /// An integer output (skipped when the pointer is null or a sentinel).
    ///
    /// # Safety
    /// `ptr` is null, a sentinel, or points to a readable integer.
    pub unsafe fn int_out<T: AsI64>(&mut self, ptr: *const T) {
        if ptr.is_null() || Self::is_sentinel(ptr.cast()) {
            return self.ignored();
        }
        self.int((*ptr).as_i64());
    }
}
