//! The end of a traced run: at the application's `MPI_Finalize`, rank 0 gathers every rank's
//! record over a private duplicate of `MPI_COMM_WORLD` (through PMPI, so none of it appears in
//! the trace) and writes the `.cft` file. Failures are reported on stderr and never reach the
//! application.

use crate::mpi::*;
use crate::wrappers::{FIRST_FORTRAN_ID, FUNCTION_NAMES, FUNCTION_SLOTS};
use conifer_trace::rank_record::RankRecord;
use conifer_trace::{FunctionCounts, FunctionInfo, Language, Metadata, Trace};
use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static START_MICROS: AtomicU64 = AtomicU64::new(0);

fn now_seconds() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Notes when MPI was initialised.
pub fn remember_start() {
    START_MICROS.store((now_seconds() * 1e6) as u64, Ordering::Relaxed);
}

/// Fails with the name of the MPI call that did not return `MPI_SUCCESS`.
fn check(what: &str, rc: c_int) -> Result<(), String> {
    if rc == MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(format!("{what} failed with MPI error {rc}"))
    }
}

/// Gathers `local` (the same length on every rank) to rank 0 of `comm`.
unsafe fn gather_u64(
    local: &[u64],
    comm: MPI_Comm,
    rank: c_int,
    size: c_int,
) -> Result<Vec<u64>, String> {
    let mut all = vec![
        0u64;
        if rank == 0 {
            local.len() * size as usize
        } else {
            0
        }
    ];
    let n = local.len() as c_int;
    let t = conifer_type_uint64();
    check(
        "PMPI_Gather",
        PMPI_Gather(
            local.as_ptr().cast(),
            n,
            t,
            all.as_mut_ptr().cast(),
            n,
            t,
            0,
            comm,
        ),
    )?;
    Ok(all)
}

/// Gathers a byte string of any length from every rank to rank 0 of `comm`.
unsafe fn gather_bytes(
    mine: &[u8],
    comm: MPI_Comm,
    rank: c_int,
    size: c_int,
) -> Result<Vec<Vec<u8>>, String> {
    let lengths = gather_u64(&[mine.len() as u64], comm, rank, size)?;
    let counts: Vec<c_int> = lengths.iter().map(|&n| n as c_int).collect();
    let mut displs = Vec::with_capacity(counts.len());
    let mut total = 0usize;
    for &n in &counts {
        displs.push(total as c_int);
        total += n as usize;
    }
    if total > c_int::MAX as usize {
        return Err(
            "the ranks' records exceed 2 GiB; the merge is not implemented for that size".into(),
        );
    }
    let mut all = vec![0u8; total];
    let t = conifer_type_byte();
    check(
        "PMPI_Gatherv",
        PMPI_Gatherv(
            mine.as_ptr().cast(),
            mine.len() as c_int,
            t,
            all.as_mut_ptr().cast(),
            counts.as_ptr(),
            displs.as_ptr(),
            t,
            0,
            comm,
        ),
    )?;
    Ok(counts
        .iter()
        .zip(&displs)
        .map(|(&n, &d)| all[d as usize..(d + n) as usize].to_vec())
        .collect())
}

/// Gathers each rank's host name to rank 0.
unsafe fn gather_hosts(comm: MPI_Comm, rank: c_int, size: c_int) -> Result<Vec<String>, String> {
    let width = conifer_max_processor_name() as usize;
    let mut mine = vec![0 as c_char; width];
    let mut len: c_int = 0;
    check(
        "PMPI_Get_processor_name",
        PMPI_Get_processor_name(mine.as_mut_ptr(), &mut len),
    )?;
    let mut all = vec![0 as c_char; if rank == 0 { width * size as usize } else { 0 }];
    let t = conifer_type_char();
    let w = width as c_int;
    check(
        "PMPI_Gather",
        PMPI_Gather(
            mine.as_ptr().cast(),
            w,
            t,
            all.as_mut_ptr().cast(),
            w,
            t,
            0,
            comm,
        ),
    )?;
    Ok(all
        .chunks(width.max(1))
        .map(|c| {
            CStr::from_bytes_until_nul(bytemuck_chars(c))
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect())
}

fn bytemuck_chars(chars: &[c_char]) -> &[u8] {
    // SAFETY: c_char and u8 have the same size and alignment.
    unsafe { std::slice::from_raw_parts(chars.as_ptr().cast(), chars.len()) }
}

unsafe fn library_version() -> String {
    let mut buf = vec![0 as c_char; conifer_max_library_version_string() as usize];
    let mut len: c_int = 0;
    if PMPI_Get_library_version(buf.as_mut_ptr(), &mut len) != MPI_SUCCESS as c_int {
        return String::new();
    }
    let bytes = &bytemuck_chars(&buf)[..(len.max(0) as usize).min(buf.len())];
    String::from_utf8_lossy(bytes)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

fn command_line() -> Vec<String> {
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
fn output_path(command: &[String], ranks: c_int) -> String {
    if let Ok(path) = std::env::var("CONIFER_OUT") {
        if !path.is_empty() {
            return path;
        }
    }
    let program = command
        .first()
        .and_then(|p| std::path::Path::new(p).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "app".into());
    format!("{program}-{ranks}r.cft")
}

/// The functions (and `free` events) that occur in `signatures`, with their slot names.
fn catalog(signatures: &[Vec<u8>]) -> Vec<FunctionInfo> {
    let mut ids: Vec<u16> = signatures
        .iter()
        .filter_map(|s| conifer_trace::varint::Reader::new(s).u64())
        .filter_map(|id| u16::try_from(id).ok())
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

fn build_trace(
    all_counts: &[u64],
    ranks: usize,
    hosts: Vec<String>,
    records: Vec<RankRecord>,
) -> Trace {
    let record = conifer_trace::assemble::merge(records);
    let functions = FUNCTION_NAMES.len();
    let mut counts = Vec::new();
    for (id, name) in FUNCTION_NAMES.iter().enumerate() {
        let per_rank: Vec<u64> = (0..ranks).map(|r| all_counts[r * functions + id]).collect();
        if per_rank.iter().any(|&c| c > 0) {
            let language = if id < FIRST_FORTRAN_ID as usize {
                Language::C
            } else {
                Language::Fortran
            };
            counts.push(FunctionCounts {
                name: name.to_string(),
                language,
                per_rank,
            });
        }
    }
    let command = command_line();
    Trace {
        meta: Metadata {
            conifer_version: env!("CARGO_PKG_VERSION").to_string(),
            mpi: env!("CONIFER_BUILT_FOR_MPI").to_string(),
            // SAFETY: MPI is initialised (we are inside MPI_Finalize).
            mpi_library_version: unsafe { library_version() },
            command_line: command,
            ranks: ranks as u32,
            hosts,
            start_unix_seconds: START_MICROS.load(Ordering::Relaxed) as f64 / 1e6,
            partial: false,
        },
        counts,
        catalog: catalog(&record.signatures),
        record,
    }
}

unsafe fn collect_and_write(counts: &[u64]) -> Result<Option<(String, Trace)>, String> {
    let mut comm: MPI_Comm = std::mem::zeroed();
    check(
        "PMPI_Comm_dup",
        PMPI_Comm_dup(conifer_comm_world(), &mut comm),
    )?;
    let (mut rank, mut size) = (0, 0);
    check("PMPI_Comm_rank", PMPI_Comm_rank(comm, &mut rank))?;
    check("PMPI_Comm_size", PMPI_Comm_size(comm, &mut size))?;
    let all = gather_u64(counts, comm, rank, size)?;
    let hosts = gather_hosts(comm, rank, size)?;
    let path = output_path(&command_line(), size);
    let mine = crate::record::rank_record();
    crate::record::write_raw(&format!("{path}.raw"), rank)?;
    let blobs = gather_bytes(&mine.to_bytes(), comm, rank, size)?;
    check("PMPI_Comm_free", PMPI_Comm_free(&mut comm))?;
    if rank != 0 {
        return Ok(None);
    }
    let records = blobs
        .iter()
        .map(|b| RankRecord::from_bytes(b).ok_or("a rank sent an unreadable record"))
        .collect::<Result<Vec<_>, _>>()?;
    let trace = build_trace(&all, size as usize, hosts, records);
    std::fs::write(&path, trace.to_bytes())
        .map_err(|e| format!("cannot write trace to {path}: {e}"))?;
    Ok(Some((path, trace)))
}

/// Gathers all ranks' records and writes the trace; rank 0 reports where it went.
pub fn write_trace(counts: &[u64]) {
    // SAFETY: called from the MPI_Finalize wrapper before PMPI_Finalize, so MPI is usable.
    match unsafe { collect_and_write(counts) } {
        Ok(Some((path, trace))) => {
            let calls: u64 = trace.counts.iter().flat_map(|c| &c.per_rank).sum();
            eprintln!(
                "conifer: trace of {} ranks, {} MPI calls written to {path}",
                trace.meta.ranks, calls
            );
        }
        Ok(None) => {}
        Err(why) => eprintln!("conifer: no trace written: {why}"),
    }
}
