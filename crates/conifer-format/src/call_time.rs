//! The timing of one call, as the timeline codecs store it.

/// One call's timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTime {
    /// Nanoseconds from the end of the previous call of the thread (from the first call's
    /// start for the first call).
    pub interval_ns: u64,
    /// Nanoseconds in the call.
    pub duration_ns: u64,
}
