//! Proxy applications from Conifer traces: a C program (and its Makefile) that makes the
//! traced MPI calls with the same arguments, and the comparison of a trace of the proxy with
//! the original that `conifer proxy --check` reports.
//!
//! The generator is straight-line per rank: each rank's calls, decoded through
//! [`conifer_trace::decode::CallReader`], become statements with every rank argument
//! restored for that rank; repeated blocks of consecutive statements fold into `for` loops,
//! and ranks whose code is identical share one function.

mod args;
pub mod compare;
mod fold;
mod objects;
mod program;

pub use program::generate;

/// What the proxy does between calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// Nothing: calls follow each other at once.
    None,
    /// Sleeps for the mean recorded interval before each call.
    Sleep,
    /// Busy-waits for the mean recorded interval before each call.
    Spin,
}

/// Generation options.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The computation reproduced between calls.
    pub compute: Compute,
}

/// A generated proxy application.
pub struct Proxy {
    /// `proxy.c`.
    pub source: String,
    /// `Makefile`, building `proxy` with the traced MPI's `mpicc`.
    pub makefile: String,
    /// What could not be reproduced, one line each with its number of calls.
    pub notes: Vec<String>,
    /// MPI calls in the trace (the heap events among its calls not counted).
    pub calls: u64,
}
