//! `conifer replay T.cft --rank R -- ./app args`: PHANTOM's replay of one rank alone. The
//! program runs as a single process, without a launcher, with libconifer.so answering its MPI
//! calls from the rank's message log (`T.cft.msglog/rank-R.log`, written by `conifer run
//! --log-messages`); the computation between calls is timed on this machine and written to
//! `T.cft.msglog/replay-R.times` for `conifer sim --replayed`. `--concurrent K` replays K
//! ranks at once, so they share the node's memory bandwidth as the run's ranks did.

use crate::installed;
use crate::launch::rank_list;
use crate::replay_times::{self, Times};
use conifer_sim::{replayed, representatives};
use conifer_trace::decode::human_time;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode};

/// What the command line asked for.
pub struct Args<'a> {
    /// The trace whose log is replayed.
    pub file: &'a Path,
    /// Ranks to replay (`0,4-7`).
    pub ranks: &'a str,
    /// Replay one rank per class of ranks whose recorded computation agrees within
    /// `tolerance` (relative) instead.
    pub representatives: bool,
    /// How far a class's recorded computation may spread (0.1: 10% of its smallest).
    pub tolerance: f64,
    /// Replays run at once.
    pub concurrent: usize,
    /// Stop at the first send whose data differs from the run's.
    pub strict: bool,
    /// Replays of each rank; each interval keeps its median.
    pub repeat: usize,
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
    let classes = representatives::classes(&trace, args.tolerance);
    let ranks = if args.representatives {
        describe_classes(&classes, trace.record.ranks.len(), args.tolerance);
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

fn describe_classes(classes: &[representatives::Class], ranks: usize, tolerance: f64) {
    for c in classes {
        let members: Vec<String> = c.members.iter().map(u32::to_string).collect();
        eprintln!(
            "conifer: rank {} stands for ranks {} (steady recorded computation {} to {}; largest distance from rank {} {:.1}%)",
            c.representative,
            members.join(","),
            human_time(c.compute_ns.0),
            human_time(c.compute_ns.1),
            c.representative,
            100.0 * c.distance
        );
    }
    eprintln!(
        "conifer: {} replays instead of {ranks} ({} saved): classes of ranks whose recorded computation agrees within {:.0}%, whatever MPI calls they make",
        classes.len(),
        ranks - classes.len(),
        100.0 * tolerance
    );
}

/// Puts the replayed computation into the trace and writes `T.replayed.cft`: a replayed rank
/// takes its replay's intervals; another rank of a class with a replayed member keeps its
/// steady recorded intervals scaled by that member's replayed over steady recorded
/// computation.
fn write_replayed(
    file: &Path,
    mut trace: conifer_trace::Trace,
    classes: &[representatives::Class],
    replayed: &[u32],
) -> Result<(), String> {
    let mut times = BTreeMap::new();
    let mut clock = None;
    for &r in replayed {
        let t = replay_times::read(&times_path(file, r))?;
        clock = Some((t.clock.clone(), t.repeats));
        times.insert(r, t.intervals);
    }
    let recorded = representatives::computation(&trace);
    let mut scale = BTreeMap::new();
    for class in classes {
        let Some(&r) = class.members.iter().find(|m| replayed.contains(m)) else {
            continue;
        };
        let replayed_ns: u64 = times[&r].iter().sum();
        let factor = replayed_ns as f64 / recorded[r as usize].max(1.0);
        for &m in class.members.iter().filter(|m| !replayed.contains(m)) {
            scale.insert(m, factor);
        }
    }
    let covered = times.len() + scale.len();
    let trace_ranks = trace.record.ranks.len();
    replayed::apply(&mut trace, &times, &scale)?;
    if let Some((clock, repeats)) = clock {
        trace
            .meta
            .options
            .retain(|o| !o.starts_with(replay_times::OPTION_PREFIX));
        trace
            .meta
            .options
            .push(replay_times::option(&clock, repeats));
    }
    let out = replayed_path(file);
    std::fs::write(&out, trace.to_bytes())
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!(
        "conifer: wrote {}: computation of {covered} of {} ranks from replays (the rest as recorded); predict with `conifer sim {}`",
        out.display(),
        trace_ranks,
        out.display()
    );
    Ok(())
}

/// Replays each of `ranks` `args.repeat` times, `args.concurrent` at a time; keeps each
/// interval's median over a rank's replays and reports each rank.
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
    let repeat = args.repeat.max(1);
    let mut queue = ranks.iter().flat_map(|&r| (0..repeat).map(move |k| (r, k)));
    let mut running: Vec<(u32, usize, Child)> = Vec::new();
    let mut runs: BTreeMap<u32, Vec<Times>> = BTreeMap::new();
    let mut failed = None;
    loop {
        while running.len() < concurrent {
            let Some((rank, k)) = queue.next() else { break };
            let child = spawn(args, &library, &dir, rank, &repeat_path(args.file, rank, k))?;
            running.push((rank, k, child));
            runs.entry(rank).or_default();
        }
        if running.is_empty() {
            break;
        }
        let (rank, k, mut child) = running.remove(0);
        let status = child
            .wait()
            .map_err(|e| format!("replay of rank {rank}: {e}"))?;
        if !status.success() {
            failed.get_or_insert((rank, status.code().unwrap_or(1)));
            continue;
        }
        let path = repeat_path(args.file, rank, k);
        let times = replay_times::read(&path)?;
        let _ = std::fs::remove_file(&path);
        runs.entry(rank).or_default().push(times);
    }
    if let Some((rank, code)) = failed {
        return Err(format!(
            "the replay of rank {rank} failed (exit {code}); see its message above"
        ));
    }
    for (rank, replays) in &runs {
        let kept = replay_times::median(replays).map_err(|e| format!("rank {rank}: {e}"))?;
        replay_times::write(&times_path(args.file, *rank), &kept)?;
        eprintln!("conifer: {}", replay_times::describe(*rank, &kept, replays));
    }
    Ok(())
}

/// Where replay `k` of `rank` writes its times, before the median is kept.
fn repeat_path(trace: &Path, rank: u32, k: usize) -> PathBuf {
    log_dir(trace).join(format!("replay-{rank}.times.{k}"))
}

/// Starts the replay of `rank`: the program alone, the preload answering from the log.
fn spawn(
    args: &Args,
    library: &Path,
    dir: &Path,
    rank: u32,
    times: &Path,
) -> Result<Child, String> {
    Command::new(&args.program[0])
        .args(&args.program[1..])
        .env("LD_PRELOAD", library)
        .env("CONIFER_REPLAY", dir.join(format!("rank-{rank}.log")))
        .env("CONIFER_REPLAY_TIMES", times)
        .env("CONIFER_REPLAY_STRICT", if args.strict { "1" } else { "0" })
        .env_remove("CONIFER_LOG_MESSAGES")
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", args.program[0]))
}
