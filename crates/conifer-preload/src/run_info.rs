//! What a trace says about the run besides the calls: the MPI library, the command line, the
//! recording options, where the trace goes, and the names of the functions its signatures use.

use crate::mpi::*;
use crate::wrappers::{FIRST_FORTRAN_ID, FUNCTION_NAMES, FUNCTION_SLOTS};
use conifer_format::stored::TraceRecord;
use conifer_format::{FunctionInfo, Language, Metadata};
use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static START_MICROS: AtomicU64 = AtomicU64::new(0);

/// Notes when MPI was initialised.
pub fn remember_start() {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    START_MICROS.store(now, Ordering::Relaxed);
}

/// `chars` as bytes.
pub fn c_bytes(chars: &[c_char]) -> &[u8] {
    // SAFETY: c_char and u8 have the same size and alignment.
    unsafe { std::slice::from_raw_parts(chars.as_ptr().cast(), chars.len()) }
}

/// `MPI_Get_library_version`, first line (Open MPI counts the terminating NUL in the length).
///
/// # Safety
/// MPI must be initialised.
pub unsafe fn library_version() -> String {
    let mut buf = vec![0 as c_char; conifer_max_library_version_string() as usize];
    let mut len: c_int = 0;
    if PMPI_Get_library_version(buf.as_mut_ptr(), &mut len) != MPI_SUCCESS as c_int {
        return String::new();
    }
    let bytes = &c_bytes(&buf)[..(len.max(0) as usize).min(buf.len())];
    String::from_utf8_lossy(bytes)
        .trim_end_matches('\0')
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// This rank's host name (`MPI_Get_processor_name`).
///
/// # Safety
/// MPI must be initialised.
pub unsafe fn host_name() -> String {
    let mut buf = vec![0 as c_char; conifer_max_processor_name() as usize];
    let mut len: c_int = 0;
    if PMPI_Get_processor_name(buf.as_mut_ptr(), &mut len) != MPI_SUCCESS as c_int {
        return String::new();
    }
    String::from_utf8_lossy(&c_bytes(&buf)[..(len.max(0) as usize).min(buf.len())]).into_owned()
}

/// Records in `record` (one rank's) how many processors its host has online, for readers
/// to tell an oversubscribed run (more ranks on a host than processors) from one with a
/// core per rank. Not the rank's affinity mask: launchers bind ranks to single cores.
pub fn set_cores(record: &mut TraceRecord) {
    // SAFETY: sysconf has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    for entry in &mut record.ranks {
        entry.cores = u32::try_from(online).unwrap_or(0);
    }
}

/// The program's command line.
pub fn command_line() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Where the trace goes: `CONIFER_OUT`, or `<program>-<ranks>r.cft` in the working directory.
pub fn output_path(ranks: c_int) -> String {
    if let Ok(path) = std::env::var("CONIFER_OUT") {
        if !path.is_empty() {
            return path;
        }
    }
    let program = command_line()
        .first()
        .and_then(|p| std::path::Path::new(p).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "app".into());
    format!("{program}-{ranks}r.cft")
}

/// The recording options in effect, as the trace's metadata lists them.
fn options() -> Vec<String> {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
    let mut options = Vec::new();
    if std::env::var_os("CONIFER_TIMING").is_some_and(|t| !t.is_empty()) {
        // The timing in effect (the default when the value was not understood).
        options.push(format!("timing={}", crate::record::timing_mode()));
    }
    if set("CONIFER_RELATIVE_TAGS") {
        options.push("relative-tags".into());
    }
    if set("CONIFER_RAW") {
        options.push("raw".into());
    }
    if crate::record::callers_recorded() {
        options.push("callsites".into());
    }
    if let Ok(list) = std::env::var("CONIFER_EXCLUDE") {
        if !list.is_empty() {
            options.push(format!("exclude={list}"));
        }
    }
    if set("CONIFER_START_OFF") {
        options.push("start-off".into());
    }
    options
}

/// The trace's metadata for a run of `ranks` ranks.
///
/// # Safety
/// MPI must be initialised.
pub unsafe fn metadata(ranks: u32, partial: bool) -> Metadata {
    Metadata {
        conifer_version: env!("CARGO_PKG_VERSION").to_string(),
        mpi: env!("CONIFER_BUILT_FOR_MPI").to_string(),
        mpi_library_version: library_version(),
        command_line: command_line(),
        ranks,
        start_unix_seconds: START_MICROS.load(Ordering::Relaxed) as f64 / 1e6,
        partial,
        missing_ranks: Vec::new(),
        options: options(),
        partial_reasons: Vec::new(),
        modules: crate::record::caller_modules(),
    }
}

/// The functions (and `free` events) that occur in `record`'s signatures or call counts (calls
/// left out of the record are counted), with their slot names.
pub fn catalog(record: &TraceRecord) -> Vec<FunctionInfo> {
    let counted = record
        .ranks
        .iter()
        .flat_map(|r| r.counts.iter().map(|c| c.0));
    let mut ids: Vec<u16> = record
        .signatures
        .iter()
        .filter_map(|s| conifer_format::varint::Reader::new(s).u64())
        .filter_map(|id| u16::try_from(id).ok())
        .chain(counted)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let free = ids
        .contains(&crate::record::FREE_EVENT)
        .then(|| FunctionInfo {
            id: crate::record::FREE_EVENT,
            name: "free".to_string(),
            language: Language::C,
            slots: vec!["ptr".to_string()],
        });
    ids.into_iter()
        .filter(|&id| (id as usize) < FUNCTION_NAMES.len())
        .map(|id| FunctionInfo {
            id,
            name: FUNCTION_NAMES[id as usize].to_string(),
            language: if id < FIRST_FORTRAN_ID {
                Language::C
            } else {
                Language::Fortran
            },
            slots: FUNCTION_SLOTS[id as usize]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        })
        .chain(free)
        .collect()
}

/// The wrappers' call counters of this rank, sparse: (function id, calls) for every function
/// called at least once.
pub fn sparse_counts(counts: &[u64]) -> Vec<(u16, u64)> {
    counts
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(id, &n)| (id as u16, n))
        .collect()
}
