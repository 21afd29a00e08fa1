//! Clock offsets to rank 0, measured by ping-pong when `MPI_Init` returns and again at
//! `MPI_Finalize`, as Scalasca does: the round trip with the smallest time gives the offset
//! (the partner's reading against the midpoint of the round trip). The ranks measure in a
//! binomial tree, log2 P rounds with every pair of a round measuring at once: in round k
//! (step s = 2^k), rank r with r mod 2s = s measures against its parent r − s. At
//! `MPI_Finalize` the offsets are carried down the tree, each rank adding its parent's offset
//! to rank 0 to its own to its parent (interpolated linearly between the two measurements,
//! so drift is corrected), and each rank keeps its two offsets to rank 0 for its record.
//!
//! Everything goes through PMPI on a private duplicate of `MPI_COMM_WORLD`, so none of it
//! appears in the trace; its time is the recorder's own. A failure leaves the rank without
//! offsets (readers then take 0) and never reaches the application.

use crate::clock;
use crate::mpi::*;
use crate::pairwise::check;
use conifer_format::clock::ClockSample;
use std::ffi::c_int;
use std::sync::Mutex;

/// Round trips per measurement; the fastest counts.
const ROUND_TRIPS: usize = 10;
const TAG: c_int = 7_072;

/// One measurement against the parent, in raw clock ticks of each side.
#[derive(Debug, Clone, Copy)]
struct Measured {
    /// This rank's reading.
    mine: u64,
    /// The parent's reading at the same moment (the midpoint of its fastest round trip).
    parents: u64,
}

/// What the rank knows of its clock.
struct Sync {
    comm: MPI_Comm,
    rank: c_int,
    size: c_int,
    init: Option<Measured>,
    /// The offsets to rank 0 worked out at `MPI_Finalize`.
    offsets: Option<(ClockSample, ClockSample)>,
}

// SAFETY: MPI handles are plain values (ints or pointers to library objects) used only
// under the mutex.
unsafe impl Send for Sync {}

static SYNC: Mutex<Option<Sync>> = Mutex::new(None);

/// Sends `values` to `to`.
unsafe fn send(values: &[u64], to: c_int, comm: MPI_Comm) -> Result<(), String> {
    check(
        "PMPI_Send",
        PMPI_Send(
            values.as_ptr().cast(),
            values.len() as c_int,
            conifer_type_uint64(),
            to,
            TAG,
            comm,
        ),
    )
}

/// Receives `N` values from `from`.
unsafe fn receive<const N: usize>(from: c_int, comm: MPI_Comm) -> Result<[u64; N], String> {
    let mut values = [0u64; N];
    check(
        "PMPI_Recv",
        PMPI_Recv(
            values.as_mut_ptr().cast(),
            N as c_int,
            conifer_type_uint64(),
            from,
            TAG,
            comm,
            conifer_status_ignore() as *mut MPI_Status,
        ),
    )?;
    Ok(values)
}

/// The lowest set bit of `rank` (its round as a child); `None` for rank 0.
fn child_step(rank: c_int) -> Option<c_int> {
    (rank > 0).then(|| rank & rank.wrapping_neg())
}

/// The parent's and the child's readings at one moment, from round trips `(sent, child's
/// reading, received)` in raw ticks: the offset θ (parent − child) must lie in `[sent −
/// child's, received − child's]` for every trip. When 0 does (the two share one counter, as
/// ranks of one host do), θ is 0, exactly; otherwise the middle of the narrowest bounds
/// (their intersection, or the fastest trip's when noise leaves none).
fn reading_pair(trips: &[(u64, u64, u64)]) -> (u64, u64) {
    let theta = |t: u64, theirs: u64| t as i128 - theirs as i128;
    let lower = trips
        .iter()
        .map(|&(a, c, _)| theta(a, c))
        .max()
        .unwrap_or(0);
    let upper = trips
        .iter()
        .map(|&(_, c, b)| theta(b, c))
        .min()
        .unwrap_or(0);
    let (_, theirs, _) = trips[0];
    let offset = if lower <= 0 && 0 <= upper {
        0
    } else if lower <= upper {
        (lower + upper) / 2
    } else {
        let &(a, c, b) = trips
            .iter()
            .min_by_key(|&&(a, _, b)| b.wrapping_sub(a))
            .expect("at least one round trip");
        return ((a / 2 + b / 2 + (a % 2 + b % 2) / 2), c);
    };
    ((theirs as i128 + offset) as u64, theirs)
}

/// One measurement round of the tree: this rank measures its children (ranks `rank + s` for
/// steps `s` below its own child step), then is measured by its parent. Returns its own
/// measurement against its parent.
unsafe fn measure_tree(
    comm: MPI_Comm,
    rank: c_int,
    size: c_int,
) -> Result<Option<Measured>, String> {
    let own_step = child_step(rank).unwrap_or(c_int::MAX);
    let mut step = 1;
    while step < size && step < own_step {
        let child = rank + step;
        if child < size {
            let mut trips = [(0u64, 0u64, 0u64); ROUND_TRIPS];
            for trip in &mut trips {
                let before = clock::ticks();
                send(&[before], child, comm)?;
                let [theirs] = receive::<1>(child, comm)?;
                *trip = (before, theirs, clock::ticks());
            }
            let (mine, theirs) = reading_pair(&trips);
            send(&[mine, theirs], child, comm)?;
        }
        step *= 2;
    }
    let Some(step) = child_step(rank) else {
        return Ok(None);
    };
    let parent = rank - step;
    for _ in 0..ROUND_TRIPS {
        receive::<1>(parent, comm)?;
        send(&[clock::ticks()], parent, comm)?;
    }
    let [parents, mine] = receive::<2>(parent, comm)?;
    Ok(Some(Measured { mine, parents }))
}

/// Measures this rank's clock against its parent's; called once `MPI_Init` returned and the
/// recorder's clock started. Keeps the private communicator for [`at_finalize`].
pub fn at_init() {
    // SAFETY: MPI is initialised.
    let sync = unsafe {
        let mut comm: MPI_Comm = std::mem::zeroed();
        if PMPI_Comm_dup(conifer_comm_world(), &mut comm) != MPI_SUCCESS as c_int {
            return;
        }
        let (mut rank, mut size) = (0, 0);
        PMPI_Comm_rank(comm, &mut rank);
        PMPI_Comm_size(comm, &mut size);
        let init = match measure_tree(comm, rank, size) {
            Ok(m) => m,
            Err(e) => {
                say!(
                    "clock synchronisation at MPI_Init: {e}; this rank's times keep its own clock"
                );
                None
            }
        };
        Sync {
            comm,
            rank,
            size,
            init,
            offsets: None,
        }
    };
    *SYNC.lock().unwrap_or_else(|e| e.into_inner()) = Some(sync);
}

/// Waits, as the application's `MPI_Finalize` does, until every rank has called it (a
/// barrier on the private communicator): that wait is `MPI_Finalize`'s recorded duration.
pub fn finalize_wait() {
    let guard = SYNC.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(sync) = guard.as_ref() {
        // SAFETY: MPI is initialised and not yet finalised.
        unsafe { PMPI_Barrier(sync.comm) };
    }
}

/// A local clock: ticks to nanoseconds from the recorder's origin.
#[derive(Debug, Clone, Copy)]
struct Local {
    origin: u64,
    ns_per_tick: f64,
}

impl Local {
    fn ns(&self, ticks: u64) -> f64 {
        (ticks as i128 - self.origin as i128) as f64 * self.ns_per_tick
    }
}

/// Rank 0's reading at `local`, by a rank with offsets `(a, b)` to rank 0.
fn to_rank0(offsets: (ClockSample, ClockSample), local: f64) -> f64 {
    let clock = conifer_format::clock::RankClock {
        init: Some(offsets.0),
        finalize: Some(offsets.1),
        ..Default::default()
    };
    clock.to_global(local)
}

/// Measures again and works out this rank's offsets to rank 0 at both measurements; called
/// at `MPI_Finalize` once recording stopped, with the rank's nanoseconds per tick fixed.
pub fn at_finalize(ns_per_tick: f64) {
    let mut guard = SYNC.lock().unwrap_or_else(|e| e.into_inner());
    let Some(sync) = guard.as_mut() else {
        return;
    };
    let local = Local {
        origin: clock::origin_ticks(),
        ns_per_tick,
    };
    // SAFETY: MPI is initialised and not yet finalised.
    match unsafe { finalize_offsets(sync, local) } {
        Ok(offsets) => sync.offsets = offsets,
        Err(e) => {
            say!("clock synchronisation at MPI_Finalize: {e}; this rank's times keep its own clock")
        }
    }
}

unsafe fn finalize_offsets(
    sync: &Sync,
    local: Local,
) -> Result<Option<(ClockSample, ClockSample)>, String> {
    let (comm, rank, size) = (sync.comm, sync.rank, sync.size);
    let finalize = measure_tree(comm, rank, size)?;
    let sample = |at: f64| ClockSample {
        local_ns: at.round() as i64,
        offset_ns: 0,
    };
    // Rank 0's offsets are 0; the others' come from their parent's, received below.
    let own = match (child_step(rank), sync.init, finalize) {
        (None, _, _) => {
            let now = local.ns(clock::ticks());
            Some((sample(0.0), sample(now)))
        }
        (Some(step), Some(init), Some(fin)) => {
            let parent = rank - step;
            let [valid, origin, npt_bits, a_local, a_offset, b_local, b_offset] =
                receive::<7>(parent, comm)?;
            let parents_local = Local {
                origin,
                ns_per_tick: f64::from_bits(npt_bits),
            };
            let parents = (
                ClockSample {
                    local_ns: a_local as i64,
                    offset_ns: a_offset as i64,
                },
                ClockSample {
                    local_ns: b_local as i64,
                    offset_ns: b_offset as i64,
                },
            );
            let offset = |m: Measured| {
                let mine = local.ns(m.mine);
                let rank0 = to_rank0(parents, parents_local.ns(m.parents));
                ClockSample {
                    local_ns: mine.round() as i64,
                    offset_ns: (rank0 - mine).round() as i64,
                }
            };
            (valid == 1).then(|| (offset(init), offset(fin)))
        }
        (Some(step), _, _) => {
            // Still take the parent's message, so the tree below goes on.
            receive::<7>(rank - step, comm)?;
            None
        }
    };
    // Pass this rank's offsets down to its children (a child whose parent has none is told
    // so, and keeps its own clock).
    let own_step = child_step(rank).unwrap_or(c_int::MAX);
    let mut step = 1;
    while step < size && step < own_step {
        step *= 2;
    }
    while step > 1 {
        step /= 2;
        let child = rank + step;
        if child < size {
            let (a, b) = own.unwrap_or_default();
            send(
                &[
                    u64::from(own.is_some()),
                    local.origin,
                    local.ns_per_tick.to_bits(),
                    a.local_ns as u64,
                    a.offset_ns as u64,
                    b.local_ns as u64,
                    b.offset_ns as u64,
                ],
                child,
                comm,
            )?;
        }
    }
    Ok(own)
}

/// This rank's offsets to rank 0, for its record: at `MPI_Init` and at `MPI_Finalize`
/// (both `None` before [`at_finalize`] or when a measurement failed).
pub fn offsets() -> (Option<ClockSample>, Option<ClockSample>) {
    let guard = SYNC.lock().unwrap_or_else(|e| e.into_inner());
    match guard.as_ref().and_then(|s| s.offsets) {
        Some((a, b)) => (Some(a), Some(b)),
        None => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::reading_pair;

    #[test]
    fn a_shared_counter_gives_offset_zero() {
        // Child readings inside every trip: one counter, so the pair is (its reading, same).
        assert_eq!(
            reading_pair(&[(100, 150, 210), (300, 340, 400)]),
            (150, 150)
        );
    }

    #[test]
    fn other_counters_take_the_middle_of_the_bounds() {
        // Child 1,000 ticks behind: θ in [100 − (−880), 210 − (−880)] ∩ [300 − (−670), 400 −
        // (−670)] = [980, 1090] ∩ [970, 1070] = [980, 1070]: θ = 1025, so the parent read
        // −880 + 1025 = 145 when the child read −880 (as u64, wrapping).
        let c1 = (-880i64) as u64;
        let c2 = (-670i64) as u64;
        let (parent, child) = reading_pair(&[(100, c1, 210), (300, c2, 400)]);
        assert_eq!((parent, child), (145, c1));
    }
}
