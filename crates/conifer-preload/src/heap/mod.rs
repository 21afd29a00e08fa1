//! Heap segments for buffer arguments: `malloc`, `calloc`, `realloc`, `free`,
//! `posix_memalign`, `aligned_alloc` and `memalign` are intercepted (forwarding to glibc's
//! `__libc_*` implementations), as are anonymous `mmap`s and `munmap` (large buffers programs
//! map themselves; forwarded to the system calls), and kept in an interval map, so a buffer argument is recorded
//! as (segment id, offset) whatever address the allocator chose. Segment ids are handed out
//! when MPI first sees a segment and returned when it is freed: the lowest id that was already
//! free when the segment was allocated, else a new one. So a buffer allocated anew every
//! iteration keeps its id, and a segment allocated early but first passed to MPI late (after
//! some temporary was freed) takes a new id rather than the temporary's, which the
//! temporary's next incarnation would then miss. Static data is one segment per loaded
//! object's writable segment ([`static_data`]); other addresses outside the heap and the
//! calling thread's stack (memory MPI allocated) become one-byte segments on first use, as in
//! Pilgrim. Both count as allocated at the start of the run, so they never take a recycled
//! id. Stack buffers are named by [`crate::stack`].
//!
//! `CONIFER_HEAP=0` turns the interception off (every buffer not on the stack is then named
//! by its address's first use).

pub mod emergency;
mod static_data;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(count: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_free(ptr: *mut c_void);
    fn __libc_memalign(alignment: usize, size: usize) -> *mut c_void;
}

/// One live segment: its length, when it was allocated ([`SegmentIds::now`]) and, once MPI
/// has seen it, its id.
struct Segment {
    len: usize,
    born: u64,
    id: Option<u32>,
}

/// Segment ids: each is taken by the segment MPI sees, and free again once that segment is.
struct SegmentIds {
    /// The free ids, each with the [`SegmentIds::now`] its segment was freed at.
    free: BTreeMap<u32, u64>,
    /// The next id never handed out.
    next: u32,
    /// How many segments MPI had seen were freed so far: the clock that tells which ids were
    /// free when a segment was allocated.
    frees: u64,
}

impl SegmentIds {
    const fn new() -> SegmentIds {
        SegmentIds {
            free: BTreeMap::new(),
            next: 0,
            frees: 0,
        }
    }

    /// The time a segment allocated now is born at.
    fn now(&self) -> u64 {
        self.frees
    }

    /// An id for a segment born at `born`: the lowest one free since before then, else a new
    /// one.
    fn take(&mut self, born: u64) -> u32 {
        let reusable = self
            .free
            .iter()
            .find(|&(_, &freed)| freed <= born)
            .map(|(&id, _)| id);
        match reusable {
            Some(id) => {
                self.free.remove(&id);
                id
            }
            None => {
                self.next += 1;
                self.next - 1
            }
        }
    }

    /// Frees `id`.
    fn give_back(&mut self, id: u32) {
        self.frees += 1;
        self.free.insert(id, self.frees);
    }
}

struct Heap {
    segments: BTreeMap<usize, Segment>,
    ids: SegmentIds,
    /// Ids of segments MPI had seen that were freed since the last [`take_freed`].
    freed: Vec<u32>,
}

static HEAP: Mutex<Heap> = Mutex::new(Heap {
    segments: BTreeMap::new(),
    ids: SegmentIds::new(),
    freed: Vec::new(),
});

/// Bumped whenever a segment MPI has seen goes away: invalidates the threads' [`LAST_HITS`].
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// A segment a thread located recently: (start, length, id, epoch).
type Hit = (usize, usize, u32, u64);
const HITS: usize = 4;

thread_local! {
    /// The last few segments this thread located: the buffers of a loop's calls are found
    /// again without the lock. Replaced round-robin.
    static LAST_HITS: Cell<([Hit; HITS], usize)> =
        const { Cell::new(([(0, 0, 0, u64::MAX); HITS], 0)) };
}

/// Set when `freed` is not empty, so MPI calls need not take the heap lock to find out.
static HAS_FREED: AtomicBool = AtomicBool::new(false);

/// 0: not decided yet, 1: tracking, 2: off (`CONIFER_HEAP=0`, or recording has ended).
static MODE: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// Set while this thread is inside the tracker: allocations it makes itself are not tracked.
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

fn tracking() -> bool {
    match MODE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            // getenv does not allocate.
            // SAFETY: a NUL-terminated literal.
            let value = unsafe { libc::getenv(c"CONIFER_HEAP".as_ptr()) };
            let off = !value.is_null() && unsafe { *value } == b'0' as libc::c_char;
            MODE.store(if off { 2 } else { 1 }, Ordering::Relaxed);
            !off
        }
    }
}

/// Runs `f` on the heap map unless this thread is already inside the tracker.
fn with_heap<R>(f: impl FnOnce(&mut Heap) -> R) -> Option<R> {
    if !tracking() || BUSY.with(Cell::get) {
        return None;
    }
    BUSY.with(|b| b.set(true));
    let result = {
        let mut heap = HEAP.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut heap)
    };
    BUSY.with(|b| b.set(false));
    Some(result)
}

/// Records a change of the heap unless it is MPI's own: allocations and frees made inside an
/// MPI call (request objects, internal buffers) are never the application's buffers, and
/// skipping them keeps the tracker's lock off the MPI call path.
fn track_change(f: impl FnOnce(&mut Heap)) {
    // The global mode first: after the trace is written no thread-local lookup is paid.
    if tracking() && !crate::thread::inside_wrapper() {
        with_heap(f);
    }
}

/// Stops tracking for the rest of the process: called when recording ends for good, so the
/// allocations of merging and writing the trace (millions with large signature tables) and
/// everything after them go straight to glibc.
pub fn stop_tracking() {
    MODE.store(2, Ordering::Relaxed);
}

fn added(ptr: *mut c_void, len: usize) -> *mut c_void {
    if !ptr.is_null() {
        track_change(|h| {
            let replaced = h.segments.insert(
                ptr as usize,
                Segment {
                    len: len.max(1),
                    born: h.ids.now(),
                    id: None,
                },
            );
            if let Some(Segment { id: Some(id), .. }) = replaced {
                // A segment whose free was not seen (MPI freed it): its id is free again.
                h.ids.give_back(id);
                EPOCH.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    ptr
}

fn removed(ptr: *mut c_void) {
    if !ptr.is_null() {
        track_change(|h| {
            if let Some(Segment { id: Some(id), .. }) = h.segments.remove(&(ptr as usize)) {
                h.ids.give_back(id);
                EPOCH.fetch_add(1, Ordering::Relaxed);
                h.freed.push(id);
                HAS_FREED.store(true, Ordering::Relaxed);
            }
        });
    }
}

/// Bumped whenever a segment MPI has seen goes away (see [`EPOCH`]): a buffer's segment id
/// found before is still right while it is unchanged.
pub fn epoch() -> u64 {
    EPOCH.load(Ordering::Relaxed)
}

/// Moves the ids of MPI-used segments freed since the last call into `out` (the recorder
/// turns them into `free` events of the calling thread).
#[inline(always)]
pub fn take_freed(out: &mut Vec<u32>) {
    // A plain load first, inlined in every call's path: the swap's locked read-modify-write
    // is paid only when there is news.
    if HAS_FREED.load(Ordering::Relaxed) {
        take_news(out);
    }
}

/// [`take_freed`] once a segment was freed.
#[cold]
fn take_news(out: &mut Vec<u32>) {
    if HAS_FREED.swap(false, Ordering::Relaxed) {
        with_heap(|h| out.append(&mut h.freed));
    }
}

/// The segment id and offset of an address MPI was given; `None` when heap tracking is off.
pub fn locate(address: usize) -> Option<(u32, i64)> {
    let epoch = EPOCH.load(Ordering::Relaxed);
    let (hits, next) = LAST_HITS.with(Cell::get);
    for &(start, len, id, seen) in &hits {
        if seen == epoch && address >= start && address - start < len {
            return Some((id, (address - start) as i64));
        }
    }
    let remember = |start: usize, len: usize, id: u32| {
        let mut hits = hits;
        hits[next] = (start, len, id, epoch);
        LAST_HITS.with(|c| c.set((hits, (next + 1) % HITS)));
    };
    if let Some((start, len, id)) = with_heap(|h| h.find(address))? {
        remember(start, len, id);
        return Some((id, (address - start) as i64));
    }
    // Not a known segment: static data or memory MPI allocated, seen for the first time.
    // The loader is asked without the heap lock (see `static_data`).
    let object = static_data::containing_segment(address);
    let (start, len, id) = with_heap(|h| h.add_static(address, object))?;
    remember(start, len, id);
    Some((id, (address - start) as i64))
}

impl Heap {
    /// The (start, length, id) of the segment holding `address`, giving it an id if MPI has
    /// not seen it before.
    fn find(&mut self, address: usize) -> Option<(usize, usize, u32)> {
        let (&start, segment) = self
            .segments
            .range_mut(..=address)
            .next_back()
            .filter(|(start, s)| address < **start + s.len)?;
        let id = *segment
            .id
            .get_or_insert_with(|| self.ids.take(segment.born));
        Some((start, segment.len, id))
    }

    /// Adds the segment of an address outside the heap: `object`, the writable segment of a
    /// loaded object holding it, or else a one-byte segment at the address (memory MPI
    /// allocated). Static data exists from the start: it never takes an id freed since.
    fn add_static(
        &mut self,
        address: usize,
        object: Option<(usize, usize)>,
    ) -> (usize, usize, u32) {
        if let Some(known) = self.find(address) {
            // Another thread added it meanwhile.
            return known;
        }
        let (start, len) = object.unwrap_or((address, 1));
        let id = self.ids.take(0);
        self.segments.insert(
            start,
            Segment {
                len,
                born: 0,
                id: Some(id),
            },
        );
        (start, len, id)
    }
}

/// # Safety
/// The C `malloc` contract.
#[no_mangle]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    if emergency::active() {
        return emergency::alloc(size, 16);
    }
    added(__libc_malloc(size), size)
}

/// # Safety
/// The C `calloc` contract.
#[no_mangle]
pub unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
    if emergency::active() {
        // Fresh anonymous memory is already zero.
        return count
            .checked_mul(size)
            .map_or(std::ptr::null_mut(), |n| emergency::alloc(n, 16));
    }
    added(__libc_calloc(count, size), count.saturating_mul(size))
}

/// # Safety
/// The C `realloc` contract.
#[no_mangle]
pub unsafe extern "C" fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    if emergency::active() {
        return emergency::realloc(ptr, size);
    }
    let moved = __libc_realloc(ptr, size);
    if !moved.is_null() || size == 0 {
        removed(ptr);
    }
    added(moved, size)
}

/// # Safety
/// The C `free` contract.
#[no_mangle]
pub unsafe extern "C" fn free(ptr: *mut c_void) {
    if emergency::active() {
        return;
    }
    removed(ptr);
    __libc_free(ptr);
}

/// # Safety
/// The POSIX `posix_memalign` contract.
#[no_mangle]
pub unsafe extern "C" fn posix_memalign(
    out: *mut *mut c_void,
    alignment: usize,
    size: usize,
) -> i32 {
    if alignment < std::mem::size_of::<usize>() || !alignment.is_power_of_two() {
        return libc::EINVAL;
    }
    if emergency::active() {
        *out = emergency::alloc(size, alignment);
        return if (*out).is_null() { libc::ENOMEM } else { 0 };
    }
    let ptr = __libc_memalign(alignment, size);
    if ptr.is_null() {
        return libc::ENOMEM;
    }
    *out = added(ptr, size);
    0
}

/// # Safety
/// The C11 `aligned_alloc` contract.
#[no_mangle]
pub unsafe extern "C" fn aligned_alloc(alignment: usize, size: usize) -> *mut c_void {
    if emergency::active() {
        return emergency::alloc(size, alignment.next_power_of_two());
    }
    added(__libc_memalign(alignment, size), size)
}

/// # Safety
/// The glibc `memalign` contract.
#[no_mangle]
pub unsafe extern "C" fn memalign(alignment: usize, size: usize) -> *mut c_void {
    if emergency::active() {
        return emergency::alloc(size, alignment.next_power_of_two());
    }
    added(__libc_memalign(alignment, size), size)
}

/// # Safety
/// The POSIX `mmap` contract.
#[no_mangle]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: libc::c_int,
    flags: libc::c_int,
    fd: libc::c_int,
    offset: libc::off_t,
) -> *mut c_void {
    let mapped = libc::syscall(libc::SYS_mmap, addr, len, prot, flags, fd, offset) as *mut c_void;
    if mapped != libc::MAP_FAILED && flags & libc::MAP_ANONYMOUS != 0 && !emergency::active() {
        added(mapped, len);
    }
    mapped
}

/// # Safety
/// The POSIX `mmap` contract (`mmap64` is the same call on 64-bit Linux).
#[no_mangle]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: usize,
    prot: libc::c_int,
    flags: libc::c_int,
    fd: libc::c_int,
    offset: libc::off_t,
) -> *mut c_void {
    mmap(addr, len, prot, flags, fd, offset)
}

/// # Safety
/// The POSIX `munmap` contract.
#[no_mangle]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> libc::c_int {
    if !emergency::active() {
        removed(addr);
    }
    libc::syscall(libc::SYS_munmap, addr, len) as libc::c_int
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_takes_only_ids_free_before_it_was_allocated() {
        let mut ids = SegmentIds::new();
        // A long-lived block (and static data) allocated first, a temporary after it.
        let early = ids.now();
        let temporary = ids.take(ids.now());
        assert_eq!(temporary, 0);
        ids.give_back(temporary);
        // First passed to MPI only now: the temporary's id was freed after it was allocated.
        assert_eq!(ids.take(early), 1);
        assert_eq!(ids.take(0), 2);
        // The temporary's next incarnation gets its id back.
        assert_eq!(ids.take(ids.now()), temporary);
        assert_eq!(ids.take(ids.now()), 3);
    }
}
