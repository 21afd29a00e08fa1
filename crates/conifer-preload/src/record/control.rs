//! What the user leaves out of the record: phases switched off with `MPI_Pcontrol(0)` (or from
//! the start with `CONIFER_START_OFF=1`) until `MPI_Pcontrol` with another level, and the
//! functions `CONIFER_EXCLUDE` names ([`conifer_spec::recording`]).
//!
//! A call left out still goes through its wrapper's bookkeeping (the symbolic ids of the
//! objects it creates or frees stay those of a full recording) and is counted, but is not
//! appended to the record. The functions of [`ALWAYS_RECORDED`] are recorded in every phase,
//! so a trace shows where recording was switched off and on.

use conifer_spec::recording::{excluded_by, ALWAYS_RECORDED};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::LazyLock;

/// False between `MPI_Pcontrol(0)` and the next `MPI_Pcontrol` (per process, so per rank).
static ON: LazyLock<AtomicBool> = LazyLock::new(|| {
    let off = std::env::var("CONIFER_START_OFF").is_ok_and(|v| !v.is_empty() && v != "0");
    AtomicBool::new(!off)
});

/// Per function id: whether the function is excluded.
static EXCLUDED: LazyLock<Vec<bool>> = LazyLock::new(|| {
    excluded_ids(
        &std::env::var("CONIFER_EXCLUDE").unwrap_or_default(),
        &crate::wrappers::FUNCTION_NAMES,
    )
});

/// Per function id: whether the function is one of [`ALWAYS_RECORDED`].
static PINNED: LazyLock<Vec<bool>> = LazyLock::new(|| {
    crate::wrappers::FUNCTION_NAMES
        .iter()
        .map(|n| ALWAYS_RECORDED.iter().any(|a| a.eq_ignore_ascii_case(n)))
        .collect()
});

/// Whether a call of function `id` starting now goes into the record.
pub fn keeps(id: u16) -> bool {
    let id = usize::from(id);
    if PINNED.get(id).copied().unwrap_or(false) {
        return true;
    }
    ON.load(Ordering::Relaxed) && !EXCLUDED.get(id).copied().unwrap_or(false)
}

/// `MPI_Pcontrol(level)` returned: level 0 switches recording off, any other level on.
pub fn pcontrol(level: i64) {
    ON.store(level != 0, Ordering::Relaxed);
}

/// The exclusion flags, by function id in `names` (C and Fortran entries alike), for a
/// `CONIFER_EXCLUDE` value: comma-separated items of [`excluded_by`]. An item it refuses is
/// reported on stderr and ignored: the application runs on.
fn excluded_ids(list: &str, names: &[&str]) -> Vec<bool> {
    let mut excluded = vec![false; names.len()];
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match excluded_by(item) {
            Ok(functions) => {
                for (flag, name) in excluded.iter_mut().zip(names) {
                    *flag |= functions.iter().any(|f| f.eq_ignore_ascii_case(name));
                }
            }
            Err(why) => eprintln!("conifer: CONIFER_EXCLUDE: {why}; ignoring it"),
        }
    }
    excluded
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
