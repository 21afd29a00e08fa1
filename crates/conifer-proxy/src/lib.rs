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
mod options;
mod program;
mod rules;
mod source;
mod tables;
mod threads;
mod tree;

pub use options::{Compute, Options};
pub use program::{generate, Proxy};
