//! What generation is asked for: the computation the proxy reproduces between calls.

/// What the proxy does between calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// Nothing: calls follow each other at once.
    None,
    /// Sleeps for the recorded interval before each call (the call's own with per-call
    /// timing, else its timing family's mean), kept to three significant bits; intervals
    /// add up until they are worth a sleep (100 µs).
    Sleep,
    /// Busy-waits for those intervals instead.
    Spin,
}

/// Generation options.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The computation reproduced between calls.
    pub compute: Compute,
}
