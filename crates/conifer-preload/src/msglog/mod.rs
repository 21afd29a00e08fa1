//! The message log (`conifer run --log-messages`, PHANTOM's message-log database): for the
//! ranks chosen (`CONIFER_LOG_MESSAGES=1`, `CONIFER_LOG_RANKS=LIST`, default all), everything
//! MPI hands back to the program that a replay of the rank alone needs (`crate::replay`):
//! return values, output arguments (statuses, counts, flags, indices, ranks, sizes, handles),
//! received data and collective results, packed with the call's datatype and stored once per
//! distinct payload. Each rank writes `T.cft.msglog/rank-R.log` as it runs, zstd-compressed,
//! and a summary `rank-R.json` at the end.
//!
//! The generated wrappers log every call the replay does not run for real
//! (`conifer_spec::message_log::runs_locally`); the layout of received data is computed here
//! ([`layout`]), nonblocking receives wait in [`pending`] until their completion call.

pub mod completion;
pub mod entry;
pub mod layout;
pub mod pending;
pub mod predefined;
mod value;
pub mod wire;

pub use entry::Entry;
pub use value::ProgramValue;

use crate::mpi::*;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

static LOGGING: AtomicBool = AtomicBool::new(false);

/// True while this rank logs its calls.
#[inline(always)]
pub fn logging() -> bool {
    LOGGING.load(Ordering::Relaxed)
}

/// The log directory of the trace at `trace`: `T.cft.msglog`.
pub fn directory(trace: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("{trace}.msglog"))
}

/// True when `rank` is in the comma-separated list of ranks and ranges (`0,4-7`).
fn listed(list: &str, rank: i64) -> bool {
    list.split(',').any(|part| match part.trim().split_once('-') {
        Some((a, b)) => matches!((a.trim().parse::<i64>(), b.trim().parse::<i64>()), (Ok(a), Ok(b)) if (a..=b).contains(&rank)),
        None => part.trim().parse::<i64>() == Ok(rank),
    })
}

/// A checksum of the running executable, so a replay can tell it runs the program the log
/// was taken from.
pub fn executable_checksum() -> u64 {
    std::fs::read("/proc/self/exe").map_or(0, |bytes| wire::checksum(&bytes))
}

/// Starts this rank's log when asked to; called once MPI is initialised.
pub fn after_init() {
    if !std::env::var("CONIFER_LOG_MESSAGES").is_ok_and(|v| !v.is_empty() && v != "0") {
        return;
    }
    let (mut rank, mut size): (c_int, c_int) = (0, 0);
    // SAFETY: MPI is initialised.
    unsafe {
        PMPI_Comm_rank(conifer_comm_world(), &mut rank);
        PMPI_Comm_size(conifer_comm_world(), &mut size);
    }
    if let Ok(list) = std::env::var("CONIFER_LOG_RANKS") {
        if !list.is_empty() && !listed(&list, i64::from(rank)) {
            return;
        }
    }
    let dir = directory(&crate::run_info::output_path(size));
    let path = dir.join(format!("rank-{rank}.log"));
    let header = format!(
        "{{\"rank\": {rank}, \"ranks\": {size}, \"mpi\": \"{}\", \"functions\": {}, \"executable\": \"{:016x}\"}}",
        env!("CONIFER_BUILT_FOR_MPI"),
        crate::wrappers::FUNCTION_NAMES.len(),
        executable_checksum()
    );
    match std::fs::create_dir_all(&dir).and_then(|()| entry::open(&path, &header)) {
        Ok(()) => LOGGING.store(true, Ordering::Relaxed),
        Err(e) => say!(
            "cannot write the message log {}: {e}; logging is off",
            path.display()
        ),
    }
}

/// Ends this rank's log (at the program's `MPI_Finalize`) and writes its summary.
pub fn at_finalize() {
    if !LOGGING.swap(false, Ordering::Relaxed) {
        return;
    }
    let (mut rank, mut size): (c_int, c_int) = (0, 0);
    // SAFETY: MPI is still initialised.
    unsafe {
        PMPI_Comm_rank(conifer_comm_world(), &mut rank);
        PMPI_Comm_size(conifer_comm_world(), &mut size);
    }
    let dir = directory(&crate::run_info::output_path(size));
    match entry::close() {
        Some(t) => {
            let summary = format!(
                "{{\"rank\": {rank}, \"entries\": {}, \"data_bytes\": {}, \"unique_bytes\": {}}}\n",
                t.entries, t.data_bytes, t.unique_bytes
            );
            let _ = std::fs::write(dir.join(format!("rank-{rank}.json")), summary);
        }
        None => say!("the message log of rank {rank} could not be completed"),
    }
}

/// A checksum of the data a send passes (`count` × `datatype` at `buf`), as an input the
/// replay compares; 0 for `MPI_IN_PLACE` or no data.
///
/// # Safety
/// `buf` and `datatype` describe readable memory for `count` elements.
pub unsafe fn sent_checksum(
    buf: *const c_void,
    count: impl crate::record::AsI64,
    datatype: impl layout::CDatatype,
) -> i64 {
    if buf == conifer_in_place() {
        return 0;
    }
    let mut packed = Vec::new();
    layout::pack(buf, datatype.datatype(), &layout::one(count), &mut packed);
    if packed.is_empty() {
        0
    } else {
        wire::checksum(&packed) as i64
    }
}

/// The handles of a request array before the call (`n` of them at `requests`).
///
/// # Safety
/// `requests` is null or points to `n` handles.
pub unsafe fn saved<H: ProgramValue>(requests: *const H, n: usize) -> Vec<u64> {
    if requests.is_null() {
        return Vec::new();
    }
    (0..n).map(|i| (*requests.add(i)).to_bits()).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn rank_lists() {
        assert!(super::listed("0,4-7", 0));
        assert!(super::listed("0,4-7", 5));
        assert!(!super::listed("0,4-7", 3));
        assert!(!super::listed("x", 0));
    }
}
