//! Launching MPI programs with and without Conifer and timing them: wall time, what they
//! print, the trace they leave, and each rank's peak memory (GNU time's `%M`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Where everything a benchmark needs lives.
pub struct Setup {
    /// The MPI (`openmpi` / `mpich`).
    pub mpi: String,
    /// `target/<mpi>/release`, with `conifer` and `libconifer.so`.
    pub bin: PathBuf,
    /// Built test apps.
    pub apps: PathBuf,
    /// Built benchmark programs.
    pub bench_apps: PathBuf,
    /// The test apps built with `conifer cc/fc` (structure trees).
    pub tree_apps: PathBuf,
    /// The benchmark programs built with `conifer cc`.
    pub tree_bench_apps: PathBuf,
    /// Scratch directory for traces and outputs.
    pub scratch: PathBuf,
    /// The repository root, stripped from commands shown in the report.
    pub root: PathBuf,
}

/// One finished run.
pub struct RunResult {
    /// Wall time of the whole launch, seconds.
    pub seconds: f64,
    /// Standard output.
    pub stdout: String,
    /// Trace size in bytes (traced runs only).
    pub trace_bytes: Option<u64>,
    /// Peak resident memory of each rank in KiB (when measured).
    pub peak_kib: Vec<u64>,
    /// Per rank, the merge's time (ms) and how far it raised resident memory (KiB), as the
    /// tracer reports them with `CONIFER_MERGE_REPORT` (traced runs only).
    pub merge: Vec<MergeCost>,
}

impl Setup {
    /// The launcher prefix for `ranks` ranks, as a user types it on this machine.
    pub fn mpirun(&self, ranks: u32) -> Vec<String> {
        let mut cmd = vec![
            "timeout".into(),
            "600".into(),
            format!("mpirun.{}", self.mpi),
            "-n".into(),
            ranks.to_string(),
        ];
        if self.mpi == "openmpi" {
            cmd.push("--oversubscribe".into());
        }
        cmd
    }

    /// The full command line of one run: launcher, optionally `conifer exec -o TRACE`,
    /// optionally GNU time per rank, then the program.
    pub fn command(
        &self,
        ranks: u32,
        traced: bool,
        measure_memory: bool,
        program: &[String],
    ) -> Vec<String> {
        let mut cmd = self.mpirun(ranks);
        if traced {
            cmd.push(self.bin.join("conifer").display().to_string());
            cmd.extend([
                "exec".into(),
                "-o".into(),
                self.trace_path().display().to_string(),
            ]);
        }
        if measure_memory {
            // Each rank appends one line to a shared file (stderr lines of ranks interleave).
            let file = self.peak_path().display().to_string();
            cmd.extend([
                "/usr/bin/time".into(),
                "-a".into(),
                "-o".into(),
                file,
                "-f".into(),
                "%M".into(),
            ]);
        }
        cmd.extend(program.iter().cloned());
        cmd
    }

    /// A command line as the report shows it: paths relative to the repository root.
    pub fn shown(&self, cmd: &[String]) -> String {
        cmd.join(" ")
            .replace(&format!("{}/", self.root.display()), "")
    }

    fn peak_path(&self) -> PathBuf {
        self.scratch.join("peak-kib.txt")
    }

    fn merge_path(&self) -> PathBuf {
        self.scratch.join("merge.txt")
    }

    fn trace_path(&self) -> PathBuf {
        self.scratch.join("bench.cft")
    }

    /// Runs a command line (from [`Setup::command`]) and measures it.
    pub fn run(&self, cmd: &[String], traced: bool) -> Result<RunResult, String> {
        let trace = self.trace_path();
        let _ = std::fs::remove_file(&trace);
        let _ = std::fs::remove_file(self.peak_path());
        let _ = std::fs::remove_file(self.merge_path());
        let start = Instant::now();
        let out = Command::new(&cmd[0])
            .args(&cmd[1..])
            .current_dir(&self.scratch)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("CONIFER_MERGE_REPORT", self.merge_path())
            .output()
            .map_err(|e| format!("cannot start {}: {e}", cmd[0]))?;
        let seconds = start.elapsed().as_secs_f64();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            return Err(format!(
                "`{}` failed ({}): {}",
                cmd.join(" "),
                out.status,
                last_line(&stderr)
            ));
        }
        let peak_kib = std::fs::read_to_string(self.peak_path())
            .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default();
        let trace_bytes = if traced {
            Some(
                std::fs::metadata(&trace)
                    .map_err(|e| format!("no trace from `{}`: {e}", cmd.join(" ")))?
                    .len(),
            )
        } else {
            None
        };
        let merge = std::fs::read_to_string(self.merge_path())
            .map(|text| text.lines().filter_map(merge_line).collect())
            .unwrap_or_default();
        Ok(RunResult {
            seconds,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            trace_bytes,
            peak_kib,
            merge,
        })
    }

    /// `conifer stats --json` of the last traced run's trace.
    pub fn traced_stats(&self) -> Result<serde_json::Value, String> {
        let out = Command::new(self.bin.join("conifer"))
            .arg("stats")
            .arg("--json")
            .arg(self.trace_path())
            .output()
            .map_err(|e| e.to_string())?;
        serde_json::from_slice(&out.stdout).map_err(|e| format!("stats --json: {e}"))
    }

    /// Calls in the last traced run's trace.
    pub fn traced_calls(&self) -> Result<u64, String> {
        self.traced_stats()?["calls"]
            .as_u64()
            .ok_or_else(|| "stats without calls".into())
    }
}

/// One rank's merge cost, as the tracer reports it.
#[derive(Clone, Copy, Debug)]
pub struct MergeCost {
    /// Wall time of its merge, waits for other ranks included.
    pub ms: f64,
    /// Time it spent computing (building, encoding, decoding, joining records).
    pub work_ms: f64,
    /// Rise of its resident memory during the merge.
    pub kib: u64,
    /// Its resident memory when the merge began.
    pub before_kib: u64,
    /// Its peak resident memory before the end of the run (the recording's peak).
    pub recording_peak_kib: u64,
}

/// `rank=R merge_ms=T merge_work_ms=W merge_peak_kib=K rss_before_kib=B recording_peak_kib=P ...`.
fn merge_line(line: &str) -> Option<MergeCost> {
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    Some(MergeCost {
        ms: field("merge_ms")?.parse().ok()?,
        work_ms: field("merge_work_ms")?.parse().ok()?,
        kib: field("merge_peak_kib")?.parse().ok()?,
        before_kib: field("rss_before_kib")?.parse().ok()?,
        recording_peak_kib: field("recording_peak_kib")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    })
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

/// The median of a non-empty sample.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// Whether a path exists (for optional real programs).
pub fn installed(path: &str) -> bool {
    Path::new(path).exists()
}

/// The host's load averages over 1, 5 and 15 minutes, as `/proc/loadavg` gives them.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(", "))
        .unwrap_or_else(|_| "unknown".into())
}
