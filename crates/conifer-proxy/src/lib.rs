//! Proxy applications from Conifer traces: a C program (and its Makefile) that makes the
//! traced MPI calls with the same arguments, and the comparison of a trace of the proxy with
//! the original that `conifer proxy --check` reports.
//!
//! The generator follows the compressed trace: each rank's calls, decoded through
//! [`conifer_trace::decode::CallReader`], become statements with every rank argument
//! restored for that rank; threads with the same grammar (a behaviour class) share one C
//! function per grammar rule, with a loop for each repetition exponent, threads recorded into
//! trace trees one function per loop or branch vertex, and what differs between their calls
//! at one place (a peer, an irregular message size, a loop's trip count) is read from data
//! tables. `main` switches on the rank only to pick the class and
//! where its tables start. A rank's other threads run as POSIX threads, each with its own
//! class, started and joined by the first where the objects they use exist.

mod args;
pub mod compare;
mod lines;
mod objects;
mod program;
mod rules;
mod source;
mod tables;
mod threads;
mod tree;

pub use program::generate;

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
    /// Behaviour classes: distinct grammars of the ranks' first threads.
    pub classes: usize,
    /// C functions generated for grammar rules.
    pub functions: usize,
    /// Numbers in the data tables.
    pub table_values: usize,
}
