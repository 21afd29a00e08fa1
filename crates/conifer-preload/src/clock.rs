//! A cheap clock for call durations: the CPU's time-stamp counter on x86-64 (a few
//! nanoseconds to read, where a system clock read costs tens), calibrated against the
//! monotonic clock over the whole run when durations are converted to nanoseconds.

use std::sync::OnceLock;
use std::time::Instant;

struct Origin {
    ticks: u64,
    instant: Instant,
}

static ORIGIN: OnceLock<Origin> = OnceLock::new();

/// The current tick count.
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions on x86-64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        origin().instant.elapsed().as_nanos() as u64
    }
}

fn origin() -> &'static Origin {
    ORIGIN.get_or_init(|| Origin {
        ticks: ticks_raw(),
        instant: Instant::now(),
    })
}

#[inline(always)]
fn ticks_raw() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: as above.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// The tick the recorder's clock starts from: 0 ns on the rank's clock (see [`start`]).
pub fn origin_ticks() -> u64 {
    origin().ticks
}

/// Starts the calibration interval (call early: at the first recorded call), and measures
/// [`read_cost`].
pub fn start() {
    origin();
    READ_COST.get_or_init(measure_read_cost);
}

static READ_COST: OnceLock<u64> = OnceLock::new();

/// Ticks one clock read adds to whatever it times (the median of back-to-back reads): each
/// recorded interval and duration is bracketed by reads, so the recorder hides this much
/// from each of them too (0 until [`start`]).
#[inline(always)]
pub fn read_cost() -> u64 {
    READ_COST.get().copied().unwrap_or(0)
}

fn measure_read_cost() -> u64 {
    let mut gaps: Vec<u64> = (0..255)
        .map(|_| {
            let a = ticks();
            ticks().saturating_sub(a)
        })
        .collect();
    gaps.sort_unstable();
    gaps[gaps.len() / 2]
}

/// Nanoseconds per tick, measured from [`start`] to now.
pub fn ns_per_tick() -> f64 {
    if cfg!(not(target_arch = "x86_64")) {
        return 1.0;
    }
    let o = origin();
    let ns = o.instant.elapsed().as_nanos() as f64;
    let ticks = ticks_raw().saturating_sub(o.ticks) as f64;
    if ticks > 0.0 && ns > 0.0 {
        ns / ticks
    } else {
        1.0
    }
}
