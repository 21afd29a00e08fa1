//! The end of a traced run: at the application's `MPI_Finalize`, every rank hands its record to
//! the pairwise merge (see [`crate::pairwise`]) on a private duplicate of `MPI_COMM_WORLD`, and
//! rank 0 writes the `.cft` file. Failures are reported on stderr and never reach the
//! application.

use crate::mpi::*;
use crate::pairwise::check;
use crate::run_info;
use conifer_format::stored::TraceRecord;
use conifer_format::Trace;
use std::ffi::c_int;

/// This rank's record with its call counters, host name and the host's processors.
///
/// # Safety
/// MPI must be initialised.
pub unsafe fn own_record(rank: u32, counts: &[u64]) -> TraceRecord {
    let mut record = conifer_write::merge::of_rank(
        rank,
        crate::record::rank_record(crate::clock_sync::offsets()),
        run_info::sparse_counts(counts),
        run_info::host_name(),
    );
    run_info::set_cores(&mut record);
    record
}

/// A line of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
fn status_kib(field: &str) -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// With `CONIFER_MERGE_REPORT=FILE`, what the merge cost this rank: its time and how far it
/// raised the rank's resident memory above what it was before (the kernel's high-water mark,
/// reset through `/proc/self/clear_refs` when the merge starts); the rank's peak before the
/// end of the run (the recording's); and how many polls the recorder appended as repeats of
/// the previous one. One line per rank is appended.
struct MergeReport {
    path: String,
    started: std::time::Instant,
    rss_before_kib: u64,
    recording_peak_kib: u64,
}

impl MergeReport {
    fn start() -> Option<MergeReport> {
        let path = std::env::var("CONIFER_MERGE_REPORT")
            .ok()
            .filter(|p| !p.is_empty())?;
        let recording_peak_kib = status_kib("VmHWM").unwrap_or(0);
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        Some(MergeReport {
            path,
            started: std::time::Instant::now(),
            rss_before_kib: status_kib("VmRSS").unwrap_or(0),
            recording_peak_kib,
        })
    }

    /// Appends the rank's line; `work` is the time its merge computed (see
    /// [`crate::pairwise::merge`]), the rest of `merge_ms` being waits for other ranks.
    fn finish(self, rank: c_int, work: std::time::Duration) {
        let line = format!(
            "rank={rank} merge_ms={:.3} merge_work_ms={:.3} merge_peak_kib={} rss_before_kib={} \
             recording_peak_kib={} repeated_polls={}\n",
            self.started.elapsed().as_secs_f64() * 1e3,
            work.as_secs_f64() * 1e3,
            status_kib("VmHWM")
                .unwrap_or(0)
                .saturating_sub(self.rss_before_kib),
            self.rss_before_kib,
            self.recording_peak_kib,
            crate::record::repeated_polls()
        );
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
        {
            let _ = f.write_all(line.as_bytes());
        }
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
    let path = run_info::output_path(size);
    crate::record::write_raw(&format!("{path}.raw"), rank)?;
    let report = MergeReport::start();
    let started = std::time::Instant::now();
    let own = own_record(rank as u32, counts);
    let mut work = started.elapsed();
    let merged = crate::pairwise::merge(own, comm, &mut work);
    check("PMPI_Comm_free", PMPI_Comm_free(&mut comm))?;
    let written = match merged? {
        None => None,
        Some(mut record) => {
            conifer_write::codes::choose_codes(&mut record);
            let mut meta = run_info::metadata(size as u32, false);
            conifer_write::merge::keep_named_modules(&mut meta.modules, &record.signatures);
            let trace = Trace {
                meta,
                catalog: run_info::catalog(&record),
                record,
            };
            std::fs::write(&path, trace.to_bytes())
                .map_err(|e| format!("cannot write trace to {path}: {e}"))?;
            Some((path, trace))
        }
    };
    if let Some(report) = report {
        report.finish(rank, work);
    }
    Ok(written)
}

/// Merges all ranks' records and writes the trace; rank 0 reports where it went.
pub fn write_trace(counts: &[u64]) {
    // SAFETY: called from the MPI_Finalize wrapper before PMPI_Finalize, so MPI is usable.
    match unsafe { collect_and_write(counts) } {
        Ok(Some((path, trace))) => {
            let calls: u64 = trace
                .record
                .ranks
                .iter()
                .flat_map(|r| &r.counts)
                .map(|c| c.1)
                .sum();
            say!(
                "trace of {} ranks, {} MPI calls written to {path}",
                trace.meta.ranks,
                calls
            );
        }
        Ok(None) => {}
        Err(why) => say!("no trace written: {why}"),
    }
}
