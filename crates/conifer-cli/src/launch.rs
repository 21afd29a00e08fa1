//! `conifer exec` and `conifer run`: start programs with libconifer.so preloaded.

use crate::installed;
use clap::Args;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// Options that control tracing, shared by `exec` and `run`; passed to the ranks as
/// environment variables so they reach the preload library under any launcher.
#[derive(Args, Clone)]
pub struct TraceOptions {
    /// Trace file to write (default: `<program>-<ranks>r.cft` in the working directory;
    /// also `CONIFER_OUT`).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Also write each rank's uncompressed record to FILE.raw/ (for `conifer verify`; also
    /// `CONIFER_RAW=1`).
    #[arg(long)]
    pub raw: bool,
    /// Timing kept: `aggregate` (count, mean, min, max, stddev per timing family),
    /// `histogram` (also log-binned durations and intervals per family), `lossy:REL` (every
    /// call's duration and the interval before it within relative error REL, e.g.
    /// `lossy:0.1`) or `lossless` (every call's, exact); also `CONIFER_TIMING`.
    #[arg(long)]
    pub timing: Option<String>,
    /// Record message tags relative to the caller's rank, for codes that tag messages by rank
    /// (decoding restores the values; also `CONIFER_RELATIVE_TAGS=1`).
    #[arg(long)]
    pub relative_tags: bool,
    /// The MPI the program uses (`openmpi`, `mpich`); by default told from the launcher or
    /// the program's libraries (also `CONIFER_MPI`).
    #[arg(long, value_parser = ["openmpi", "mpich"])]
    pub mpi: Option<String>,
    /// Record each call's call site (its return address, as module and offset) so `profile`
    /// can name the source line of calls in programs not built with `conifer cc`: the
    /// default for programs built with `-g` (their debug information names the lines);
    /// without it, sites are named by the symbol table (also `CONIFER_CALLSITES=1`).
    #[arg(long, conflicts_with = "no_callsites")]
    pub callsites: bool,
    /// Do not record call sites, even for a program built with `-g` (also
    /// `CONIFER_CALLSITES=0`).
    #[arg(long)]
    pub no_callsites: bool,
    /// Leave these functions out of the record — counted, not recorded: comma-separated MPI
    /// function names (any case) or `queries` (MPI_Wtime, MPI_Comm_rank and other local
    /// queries); also `CONIFER_EXCLUDE`.
    #[arg(long, value_name = "LIST", value_parser = parse_exclusions)]
    pub exclude: Option<String>,
    /// Start with recording off: the program switches it on with `MPI_Pcontrol(1)` (and off
    /// with `MPI_Pcontrol(0)`, which works without this option); also `CONIFER_START_OFF=1`.
    #[arg(long)]
    pub start_off: bool,
    /// Also write a message log (`FILE.msglog/`): what MPI handed back to each rank —
    /// received data, collective results, statuses and other outputs — so that
    /// `conifer replay` can rerun a rank alone (also `CONIFER_LOG_MESSAGES=1`).
    #[arg(long)]
    pub log_messages: bool,
    /// With --log-messages: log only these ranks (`0,4-7`; also `CONIFER_LOG_RANKS`).
    #[arg(long, value_name = "LIST", value_parser = parse_rank_list, requires = "log_messages")]
    pub log_ranks: Option<String>,
}

/// Checks a list of ranks and ranges (`0,4-7`).
pub fn parse_rank_list(list: &str) -> Result<String, String> {
    rank_list(list).map(|_| list.to_string())
}

/// The ranks of a list of ranks and ranges (`0,4-7`), in order.
pub fn rank_list(list: &str) -> Result<Vec<u32>, String> {
    let bad = |part: &str| format!("`{part}` is not a rank or a range of ranks (e.g. `0,4-7`)");
    let mut ranks = Vec::new();
    for part in list.split(',').map(str::trim) {
        let number = |s: &str| s.trim().parse::<u32>().map_err(|_| bad(part));
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if a > b {
                    return Err(bad(part));
                }
                ranks.extend(a..=b);
            }
            None => ranks.push(number(part)?),
        }
    }
    Ok(ranks)
}

/// Checks an `--exclude` list: every item a function name or `queries`.
fn parse_exclusions(list: &str) -> Result<String, String> {
    match conifer_spec::recording::excluded_functions(list)
        .1
        .into_iter()
        .next()
    {
        Some(why) => Err(why),
        None => Ok(list.to_string()),
    }
}

impl TraceOptions {
    /// Refuses options the recorder would not understand.
    fn check(&self) -> Result<(), String> {
        if let Some(timing) = &self.timing {
            conifer_trace::timing_mode::TimingMode::parse(timing).map_err(|e| format!("--{e}"))?;
        }
        Ok(())
    }

    fn as_env(&self) -> Vec<(&'static str, OsString)> {
        let mut env = Vec::new();
        if let Some(path) = &self.output {
            env.push(("CONIFER_OUT", absolute(path).into_os_string()));
        }
        if self.raw {
            env.push(("CONIFER_RAW", "1".into()));
        }
        if let Some(timing) = &self.timing {
            env.push(("CONIFER_TIMING", timing.into()));
        }
        if self.relative_tags {
            env.push(("CONIFER_RELATIVE_TAGS", "1".into()));
        }
        if self.callsites {
            env.push(("CONIFER_CALLSITES", "1".into()));
        }
        if self.no_callsites {
            env.push(("CONIFER_CALLSITES", "0".into()));
        }
        if let Some(list) = &self.exclude {
            env.push(("CONIFER_EXCLUDE", list.into()));
        }
        if self.start_off {
            env.push(("CONIFER_START_OFF", "1".into()));
        }
        if self.log_messages {
            env.push(("CONIFER_LOG_MESSAGES", "1".into()));
        }
        if let Some(list) = &self.log_ranks {
            env.push(("CONIFER_LOG_RANKS", list.into()));
        }
        env
    }

    fn as_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        if let Some(path) = &self.output {
            args.push("-o".into());
            args.push(absolute(path).into_os_string());
        }
        if self.raw {
            args.push("--raw".into());
        }
        if let Some(timing) = &self.timing {
            args.push(format!("--timing={timing}").into());
        }
        if self.relative_tags {
            args.push("--relative-tags".into());
        }
        if self.callsites {
            args.push("--callsites".into());
        }
        if self.no_callsites {
            args.push("--no-callsites".into());
        }
        if let Some(list) = &self.exclude {
            args.push(format!("--exclude={list}").into());
        }
        if self.start_off {
            args.push("--start-off".into());
        }
        if self.log_messages {
            args.push("--log-messages".into());
        }
        if let Some(list) = &self.log_ranks {
            args.push(format!("--log-ranks={list}").into());
        }
        args
    }
}

fn absolute(path: &std::path::Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Replaces this process with `program`, libconifer.so preloaded (after anything already in
/// `LD_PRELOAD`, which keeps its precedence).
pub fn exec(options: &TraceOptions, program: &[String]) -> Result<ExitCode, String> {
    options.check()?;
    let (mpi, _) = installed::mpi_of(&program[0], options.mpi.as_deref())?;
    let library = installed::preload_library(mpi)?;
    let mut preload = OsString::new();
    if let Some(existing) = std::env::var_os("LD_PRELOAD").filter(|p| !p.is_empty()) {
        preload.push(existing);
        preload.push(":");
    }
    preload.push(library.as_os_str());
    let error = Command::new(&program[0])
        .args(&program[1..])
        .env("LD_PRELOAD", preload)
        .envs(options.as_env())
        .exec();
    Err(format!("cannot run {}: {error}", program[0]))
}

/// The launcher of MPI `mpi` (`openmpi`, `mpich`), the flags this machine needs for
/// `ranks` ranks, and the environment it needs.
pub fn launcher(mpi: &str, ranks: u32) -> (String, Vec<String>, Vec<(&'static str, &'static str)>) {
    let mut flags = vec!["-n".to_string(), ranks.to_string()];
    let mut env = Vec::new();
    if mpi == "openmpi" {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        if ranks as usize > cores {
            flags.push("--oversubscribe".into());
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            env.push(("OMPI_ALLOW_RUN_AS_ROOT", "1"));
            env.push(("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"));
        }
    }
    (format!("mpirun.{mpi}"), flags, env)
}

/// Runs `program` on `ranks` ranks under the launcher of its MPI, each rank through
/// `conifer exec`.
pub fn run(
    ranks: u32,
    launcher_args: &[String],
    options: &TraceOptions,
    program: &[String],
) -> Result<ExitCode, String> {
    if ranks == 0 {
        return Err("-n must be at least 1".into());
    }
    options.check()?;
    let (mpi, _) = installed::mpi_of(&program[0], options.mpi.as_deref())?;
    installed::preload_library(mpi)?;
    let me =
        std::env::current_exe().map_err(|e| format!("cannot locate the conifer binary: {e}"))?;
    let (launcher, flags, env) = launcher(mpi, ranks);
    let status = Command::new(&launcher)
        .args(flags)
        .args(launcher_args)
        .arg(me)
        .arg("exec")
        .args(options.as_args())
        .arg(format!("--mpi={mpi}"))
        .arg("--")
        .args(program)
        .envs(env)
        .status()
        .map_err(|e| {
            format!("cannot start {launcher}: {e}; is this MPI installed (scripts/setup.sh)?")
        })?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(code.clamp(1, 255) as u8),
        None => ExitCode::FAILURE,
    })
}
