//! What the user leaves out of the record: phases switched off with `MPI_Pcontrol(0)` (or from
//! the start with `CONIFER_START_OFF=1`) until `MPI_Pcontrol` with another level, and the
//! functions `CONIFER_EXCLUDE` names ([`conifer_spec::recording`]).
//!
//! A call left out still goes through its wrapper's bookkeeping (the symbolic ids of the
//! objects it creates or frees stay those of a full recording) and is counted, but is not
//! appended to the record. The functions of [`ALWAYS_RECORDED`] are recorded in every phase,
//! so a trace shows where recording was switched off and on.

use conifer_spec::recording::{excluded_functions, ALWAYS_RECORDED};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// False between `MPI_Pcontrol(0)` and the next `MPI_Pcontrol` (per process, so per rank).
static ON: AtomicBool = AtomicBool::new(true);

/// A function's flag: recorded in every phase ([`ALWAYS_RECORDED`]).
const PINNED: u8 = 1;
/// A function's flag: excluded by `CONIFER_EXCLUDE`.
const EXCLUDED: u8 = 2;

/// Per function id, its [`PINNED`] and [`EXCLUDED`] flags, set by [`read_environment`]: a
/// plain table, so a call's check is one load from it and one of [`ON`].
static FLAGS: [AtomicU8; FUNCTIONS] = [const { AtomicU8::new(0) }; FUNCTIONS];
const FUNCTIONS: usize = crate::wrappers::FUNCTION_NAMES.len();

/// Reads `CONIFER_START_OFF` and `CONIFER_EXCLUDE`. Runs when the rank's recording state is
/// made, before any call is recorded.
pub fn read_environment() {
    let off = std::env::var("CONIFER_START_OFF").is_ok_and(|v| !v.is_empty() && v != "0");
    ON.store(!off, Ordering::Relaxed);
    let names = &crate::wrappers::FUNCTION_NAMES;
    let excluded = excluded_ids(&std::env::var("CONIFER_EXCLUDE").unwrap_or_default(), names);
    for ((flag, name), excluded) in FLAGS.iter().zip(names).zip(excluded) {
        let pinned = ALWAYS_RECORDED.iter().any(|a| a.eq_ignore_ascii_case(name));
        let value = match (pinned, excluded) {
            (true, _) => PINNED,
            (false, true) => EXCLUDED,
            (false, false) => 0,
        };
        flag.store(value, Ordering::Relaxed);
    }
}

/// Whether a call of function `id` starting now goes into the record.
#[inline]
pub fn keeps(id: u16) -> bool {
    let flags = FLAGS
        .get(usize::from(id))
        .map_or(0, |f| f.load(Ordering::Relaxed));
    flags & PINNED != 0 || (flags & EXCLUDED == 0 && ON.load(Ordering::Relaxed))
}

/// `MPI_Pcontrol(level)` returned: level 0 switches recording off, any other level on.
pub fn pcontrol(level: i64) {
    ON.store(level != 0, Ordering::Relaxed);
}

/// The exclusion flags, by function id in `names` (C and Fortran entries alike), for a
/// `CONIFER_EXCLUDE` value ([`excluded_functions`]). An item it refuses is reported on stderr
/// and ignored: the application runs on.
fn excluded_ids(list: &str, names: &[&str]) -> Vec<bool> {
    let (functions, refused) = excluded_functions(list);
    for why in refused {
        say!("CONIFER_EXCLUDE: {why}; ignoring it");
    }
    names
        .iter()
        .map(|name| functions.iter().any(|f| f.eq_ignore_ascii_case(name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &[
        "MPI_Init",
        "MPI_Send",
        "MPI_Wtime",
        "MPI_Comm_rank",
        "mpi_wtime",
    ];

    #[test]
    fn names_any_case_and_every_language_entry() {
        let got = excluded_ids("mpi_wtime, MPI_Send", NAMES);
        assert_eq!(got, vec![false, true, true, false, true]);
    }

    #[test]
    fn the_queries_class_and_refused_items() {
        let got = excluded_ids("queries,MPI_Nonsense,MPI_Init", NAMES);
        assert_eq!(got, vec![false, false, true, true, true]);
    }
}
