//! PHANTOM-style replay of one rank alone (`conifer replay`): the program runs as a single
//! process, its MPI calls answered from the rank's message log (`crate::msglog`) — sends
//! checked against the run and dropped, receives, collectives and every other output filled
//! in as the run got them — while the functions on local objects (datatypes, packing,
//! initialisation) run for real on a singleton MPI. The computation between calls is timed,
//! so the run's computation can be measured on the machine the replay runs on.
//!
//! Set by `conifer replay`: `CONIFER_REPLAY=LOG` (the rank's log), `CONIFER_REPLAY_TIMES=FILE`
//! (where the computation times go). The recorder is off during a replay.

mod answer;
mod times;

pub use answer::Answer;
pub use times::{enter, initialized, leave};

use std::sync::OnceLock;

static ACTIVE: OnceLock<bool> = OnceLock::new();

/// True when this process replays a rank from its log.
#[inline(always)]
pub fn active() -> bool {
    *ACTIVE.get_or_init(|| std::env::var_os("CONIFER_REPLAY").is_some_and(|v| !v.is_empty()))
}

/// Ends the replay on a call it cannot answer.
pub fn unsupported<R>(function: &str, why: &str) -> R {
    say!("replay: {function} cannot be replayed from a message log: {why}");
    std::process::exit(5);
}

/// At the program's `MPI_Finalize`: checks the log is used up and writes the times.
pub fn at_finalize() {
    answer::check_finished();
    times::write();
}
