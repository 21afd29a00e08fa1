//! `conifer replay T.cft --rank R -- ./app args`: PHANTOM's replay of one rank alone. The
//! program runs as a single process, without a launcher, with libconifer.so answering its MPI
//! calls from the rank's message log (`T.cft.msglog/rank-R.log`, written by `conifer run
//! --log-messages`); the computation between calls is timed on this machine and written to
//! `T.cft.msglog/replay-R.times` for `conifer sim --replayed`. `--concurrent K` replays K
//! ranks at once, so they share the node's memory bandwidth as the run's ranks did.

use crate::installed;
use crate::launch::rank_list;
use conifer_sim::{replayed, representatives};
use conifer_trace::decode::human_time;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};
use std::time::Instant;

/// What the command line asked for.
pub struct Args<'a> {
    /// The trace whose log is replayed.
    pub file: &'a Path,
    /// Ranks to replay (`0,4-7`).
    pub ranks: &'a str,
    /// Replay one rank per behaviour class instead.
    pub representatives: bool,
    /// Replays run at once.
    pub concurrent: usize,
    /// Stop at the first send whose data differs from the run's.
    pub strict: bool,
    /// The MPI of the program, when not told from it.
    pub mpi: Option<&'a str>,
    /// The program and its arguments.
    pub program: &'a [String],
}

/// The log directory of a trace.
pub fn log_dir(trace: &Path) -> PathBuf {
    PathBuf::from(format!("{}.msglog", trace.display()))
}

/// Where the replay of `rank` writes its computation times.
pub fn times_path(trace: &Path, rank: u32) -> PathBuf {
    log_dir(trace).join(format!("replay-{rank}.times"))
}

/// A replayed rank's times file: the computation before each call, in ns, and the share of
/// the replay the rank was on a CPU (its intervals are already scaled by it).
pub struct Times {
    /// Computation before each call, ns.
    pub intervals: Vec<u64>,
    /// CPU time over wall time of the replay (1 on an idle machine).
    pub on_cpu: f64,
}

/// Reads a replayed rank's times file.
pub fn read_times(path: &Path) -> Result<Times, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bad = || {
        format!(
            "{} is not a replay times file: replay the rank again",
            path.display()
        )
    };
    let at = bytes.iter().position(|&b| b == b'\n').ok_or_else(bad)?;
    let header: serde_json::Value = serde_json::from_slice(&bytes[..at]).map_err(|_| bad())?;
    let body = &bytes[at + 1..];
    if body.len() % 8 != 0 {
        return Err(bad());
    }
    Ok(Times {
        intervals: body
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("eight bytes")))
            .collect(),
        on_cpu: header["on_cpu"].as_f64().unwrap_or(1.0),
    })
}

/// Where the trace with replayed computation goes: `T.replayed.cft` beside `T.cft`.
pub fn replayed_path(trace: &Path) -> PathBuf {
    let stem = trace
        .file_stem()
        .map_or_else(|| "trace".into(), |s| s.to_string_lossy().into_owned());
    trace.with_file_name(format!("{stem}.replayed.cft"))
}

/// Runs `conifer replay`.
pub fn run(args: &Args) -> Result<ExitCode, String> {
    let trace = conifer_trace::open(args.file).map_err(|e| e.to_string())?;
    let classes = representatives::classes(&trace, SIMILAR);
    let ranks = if args.representatives {
        describe_classes(&classes, trace.record.ranks.len());
        classes.iter().map(|c| c.representative).collect()
    } else {
        rank_list(args.ranks).map_err(|e| format!("--rank: {e}"))?
    };
    if let Some(r) = ranks
        .iter()
        .find(|&&r| r as usize >= trace.record.ranks.len())
    {
        return Err(format!(
            "--rank: the trace has ranks 0 to {}, not {r}",
            trace.record.ranks.len() - 1
        ));
    }
    replay_ranks(args, &ranks)?;
    write_replayed(args.file, trace, &classes, &ranks)?;
    Ok(ExitCode::SUCCESS)
}

/// Recorded computation within this fraction puts ranks of the same calls in one class.
const SIMILAR: f64 = 0.10;

fn describe_classes(classes: &[representatives::Class], ranks: usize) {
    for c in classes {
        let members: Vec<String> = c.members.iter().map(u32::to_string).collect();
        eprintln!(
            "conifer: rank {} stands for ranks {} (the same calls; recorded computation {} to {})",
            c.representative,
            members.join(","),
            human_time(c.compute_ns.0),
            human_time(c.compute_ns.1)
        );
    }
    eprintln!(
        "conifer: {} replays instead of {ranks} ({} saved)",
        classes.len(),
        ranks - classes.len()
    );
}

/// Puts the replayed computation into the trace and writes `T.replayed.cft`: every rank takes
/// its own replay's, or that of the replayed rank of its class.
fn write_replayed(
    file: &Path,
    mut trace: conifer_trace::Trace,
    classes: &[representatives::Class],
    replayed: &[u32],
) -> Result<(), String> {
    let mut source: Vec<u32> = (0..trace.record.ranks.len() as u32).collect();
    for class in classes {
        if let Some(&r) = class.members.iter().find(|m| replayed.contains(m)) {
            for &m in &class.members {
                if !replayed.contains(&m) {
                    source[m as usize] = r;
                }
            }
        }
    }
    let mut times = BTreeMap::new();
    for &r in replayed {
        times.insert(r, read_times(&times_path(file, r))?.intervals);
    }
    let covered = source.iter().filter(|s| times.contains_key(s)).count();
    replayed::apply(&mut trace, &times, &source)?;
    let out = replayed_path(file);
    std::fs::write(&out, trace.to_bytes())
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!(
        "conifer: wrote {}: computation of {covered} of {} ranks from replays (the rest as recorded); predict with `conifer sim {}`",
        out.display(),
        source.len(),
        out.display()
    );
    Ok(())
}

/// Replays `ranks`, `args.concurrent` at a time, and reports each.
fn replay_ranks(args: &Args, ranks: &[u32]) -> Result<(), String> {
    let dir = log_dir(args.file);
    for rank in ranks {
        let log = dir.join(format!("rank-{rank}.log"));
        if !log.is_file() {
            return Err(format!(
                "no message log for rank {rank} ({} is missing): trace with `conifer run --log-messages`{}",
                log.display(),
                if dir.is_dir() { " and include the rank in --log-ranks" } else { "" }
            ));
        }
    }
    let (mpi, _) = installed::mpi_of(&args.program[0], args.mpi)?;
    let library = installed::preload_library(mpi)?;
    let concurrent = args.concurrent.max(1);
    let mut queue = ranks.iter().copied();
    let mut running: Vec<(u32, Child, Instant)> = Vec::new();
    let mut failed = None;
    loop {
        while running.len() < concurrent {
            let Some(rank) = queue.next() else { break };
            let child = spawn(args, &library, &dir, rank)?;
            running.push((rank, child, Instant::now()));
        }
        if running.is_empty() {
            break;
        }
        let (rank, mut child, started) = running.remove(0);
        let status = child
            .wait()
            .map_err(|e| format!("replay of rank {rank}: {e}"))?;
        let wall = started.elapsed().as_secs_f64();
        if !status.success() {
            failed.get_or_insert((rank, status.code().unwrap_or(1)));
            continue;
        }
        let times = read_times(&times_path(args.file, rank))?;
        let compute: u64 = times.intervals.iter().sum();
        eprintln!(
            "conifer: replayed rank {rank}: {} calls in {wall:.2} s; computation {} (measured here, between calls; on a CPU {:.0}% of the replay, intervals scaled by that)",
            times.intervals.len(),
            human_time(compute as f64),
            100.0 * times.on_cpu
        );
    }
    match failed {
        Some((rank, code)) => Err(format!(
            "the replay of rank {rank} failed (exit {code}); see its message above"
        )),
        None => Ok(()),
    }
}

/// Starts the replay of `rank`: the program alone, the preload answering from the log.
fn spawn(args: &Args, library: &Path, dir: &Path, rank: u32) -> Result<Child, String> {
    Command::new(&args.program[0])
        .args(&args.program[1..])
        .env("LD_PRELOAD", library)
        .env("CONIFER_REPLAY", dir.join(format!("rank-{rank}.log")))
        .env("CONIFER_REPLAY_TIMES", times_path(args.file, rank))
        .env("CONIFER_REPLAY_STRICT", if args.strict { "1" } else { "0" })
        .env_remove("CONIFER_LOG_MESSAGES")
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", args.program[0]))
}
