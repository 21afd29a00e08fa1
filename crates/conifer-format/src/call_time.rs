//! The timing of one call, and the recorder's own time around it, as the timeline codecs
//! store them.

/// One call's timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTime {
    /// Nanoseconds from the end of the previous call of the thread (from the first call's
    /// start for the first call).
    pub interval_ns: u64,
    /// Nanoseconds in the call.
    pub duration_ns: u64,
}

/// The recorder's own time around one call, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecorderTime {
    /// From the wrapper's entry to the start of the MPI part.
    pub pre_ns: u64,
    /// From the end of the MPI part to the wrapper's return (0 for a thread's last call).
    pub post_ns: u64,
}

impl RecorderTime {
    /// As stored: a timeline whose "interval" is `pre` and "duration" `post`
    /// ([`crate::timeline`] and [`crate::lossy_timeline`] encode it).
    pub fn as_call_time(self) -> CallTime {
        CallTime {
            interval_ns: self.pre_ns,
            duration_ns: self.post_ns,
        }
    }

    /// What [`RecorderTime::as_call_time`] stored.
    pub fn from_call_time(t: CallTime) -> RecorderTime {
        RecorderTime {
            pre_ns: t.interval_ns,
            post_ns: t.duration_ns,
        }
    }
}
