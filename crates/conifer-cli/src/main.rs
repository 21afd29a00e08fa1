//! `conifer`: launch traced MPI runs and read the traces they leave.

mod analysis;
mod calibrate;
mod comm_table;
mod decode;
mod diff;
mod diff_order;
mod export;
mod extrapolate;
mod info;
mod installed;
mod launch;
mod matrix;
mod merge;
mod msglog_summary;
mod output;
mod plot;
mod profile;
mod proxy;
mod replay;
mod replay_times;
mod report;
mod report_glance;
mod report_timeline;
mod sim;
mod static_pass;
mod stats;
mod stats_timing;
mod verify;
mod waits;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Conifer: complete, compressed MPI tracing.
#[derive(Parser)]
#[command(name = "conifer", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Trace one rank: set up the preload and exec the program (`mpirun -n 4 conifer exec ./app`).
    Exec {
        #[command(flatten)]
        options: launch::TraceOptions,
        /// The program and its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        program: Vec<String>,
    },
    /// Launch a traced run with the MPI Conifer was built for (`conifer run -n 4 ./app`).
    Run {
        /// Number of ranks.
        #[arg(short = 'n', long = "np")]
        ranks: u32,
        /// Extra argument for the MPI launcher (repeatable), e.g. `--launcher-arg=--bind-to=none`.
        #[arg(long = "launcher-arg", allow_hyphen_values = true)]
        launcher_args: Vec<String>,
        #[command(flatten)]
        options: launch::TraceOptions,
        /// The program and its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        program: Vec<String>,
    },
    /// Per-function call counts and facts about the run.
    Stats {
        /// The trace file (`.cft`).
        file: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// mpiP-style profile: time per rank, per function and per call site, bytes, top sites.
    Profile {
        /// The trace file (`.cft`).
        file: PathBuf,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
        /// Call sites to list in the text output.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// Compute by expanding every call instead of on the compressed form (slow; a check).
        #[arg(long, hide = true)]
        expand: bool,
    },
    /// Wait states (Late Sender, Late Receiver, Wait at Barrier, Wait at NxN, Late Broadcast,
    /// Early Reduce, Send Completion) per rank and call site, and the critical path of the
    /// recorded run (start-up shown apart). Needs a trace recorded with `--timing lossless`
    /// or `--timing lossy:REL`.
    Waits {
        /// The trace file (`.cft`).
        file: PathBuf,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
        /// Call sites and critical-path entries to list in the text output.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// List start-up (`MPI_Init*`) in the critical path's tables and take their shares
        /// of the whole path (by default it is shown apart and the shares are of the rest).
        #[arg(long)]
        with_startup: bool,
    },
    /// Rank x rank communication matrix (row = sender, column = receiver, world ranks).
    #[command(after_help = matrix::RULE)]
    Matrix {
        /// The trace file (`.cft`).
        file: PathBuf,
        /// What each entry counts: bytes or messages.
        #[arg(long, default_value = "bytes")]
        metric: String,
        /// Which calls: p2p (sends, one-sided), coll (collectives, by the rule below) or all.
        #[arg(long, default_value = "all")]
        kind: String,
        /// Only calls on this communicator, as `decode` names it (MPI_COMM_WORLD, comm3, ...; `comm3@4`
        /// for the one of the communicators sharing id comm3 whose local rank 0 is world rank 4).
        #[arg(long)]
        comm: Option<String>,
        /// Print the whole matrix as CSV.
        #[arg(long, conflicts_with = "json")]
        csv: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Compute by expanding every call instead of on the compressed form (slow; a check).
        #[arg(long, hide = true)]
        expand: bool,
    },
    /// Draw a picture of the run as SVG or PNG (by the output's extension).
    Plot {
        /// What to draw: matrix, sizes (message-size histogram per function), functions (time
        /// per function), ranks (MPI time per rank), timeline (needs --timing lossless or lossy:REL).
        kind: String,
        /// The trace file (`.cft`).
        file: PathBuf,
        /// The picture to write (`.svg` or `.png`).
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
        /// For `matrix`: bytes or messages.
        #[arg(long, default_value = "bytes")]
        metric: String,
        /// For `matrix`: p2p, coll or all.
        #[arg(long, default_value = "all")]
        kind_of_calls: String,
        /// For `timeline`: start of the window, after every rank had returned from MPI_Init
        /// (e.g. `1.5ms`, `250us`, `2s`; a bare number is seconds).
        #[arg(long)]
        from: Option<String>,
        /// For `timeline`: end of the window (same units as `--from`).
        #[arg(long)]
        to: Option<String>,
        /// For `timeline`: the ranks drawn, `A-B` or one rank.
        #[arg(long)]
        ranks: Option<String>,
    },
    /// One self-contained HTML page: run, profile, matrix, pictures, compression facts.
    Report {
        /// The trace file (`.cft`).
        file: PathBuf,
        /// The HTML file to write.
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
    },
    /// Write the trace in another tool's format: chrome (Perfetto JSON), otf2 (Vampir,
    /// Score-P tools), simgrid (SMPI time-independent replay). Timestamps are exact with
    /// `--timing lossless`, within REL with `--timing lossy:REL`, else reconstructed from
    /// per-signature means (the output says which).
    Export {
        /// The format.
        #[arg(value_enum)]
        format: export::Format,
        /// The trace file (`.cft`).
        file: PathBuf,
        /// Where to write: a file (chrome) or a directory (otf2, simgrid).
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
        /// simgrid: the flop rate that turns the time between two calls into `compute`
        /// actions; give the platform's host speed to replay the recorded times.
        #[arg(long, default_value_t = 1e9)]
        flops_per_second: f64,
    },
    /// Predict the run from the trace: a LogGP/LogGPO simulation of every rank (computation
    /// from the recorded intervals, messages by the network model, collectives by the
    /// algorithms MPI libraries run). Parameters: L, o (os, or), g, G, O, eager, compute.
    Sim {
        /// The trace file (`.cft`).
        file: PathBuf,
        /// Network parameters file (`key = value` lines, e.g. written by hand or calibrated).
        #[arg(long)]
        net: Option<PathBuf>,
        /// Parameters, e.g. `L=2us,o=200ns,g=100ns,G=0.1ns/B,O=0.1ns/B,eager=64KiB`.
        #[arg(long)]
        set: Option<String>,
        /// Factor on every recorded computation interval (0: communication only).
        #[arg(long)]
        compute_scale: Option<f64>,
        /// Collective algorithm overrides, e.g. `allreduce=ring,alltoall=bruck,bcast=linear`.
        #[arg(long)]
        coll: Option<String>,
        /// Predict over a range of one parameter: `L=1us..100us[:POINTS]` (also o, g, G, O,
        /// compute).
        #[arg(long)]
        sweep: Option<String>,
        /// With --sweep: also draw predicted time against the parameter (`.svg` or `.png`).
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Critical-path contributors to list.
        #[arg(long, default_value_t = 10)]
        top: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replay ranks alone from the message log of a run traced with `--log-messages`
    /// (PHANTOM): the program runs as one process without a launcher, its MPI calls answered
    /// from the log, its computation between calls timed on this machine for `sim --replayed`.
    Replay {
        /// The trace whose message log (`FILE.msglog/`) is replayed.
        file: PathBuf,
        /// Ranks to replay (`0`, `0,4-7`).
        #[arg(long, default_value = "0")]
        rank: String,
        /// Replay one rank per class of ranks whose recorded computation agrees within
        /// --tolerance (or 20 µs), whatever MPI calls they make, and let it stand for the
        /// others: their recorded intervals scaled by its replayed over recorded computation.
        #[arg(long, conflicts_with = "rank")]
        representatives: bool,
        /// How far the recorded computation of a class's ranks may spread, in % of its
        /// smallest (with --representatives).
        #[arg(long, default_value_t = 10.0, value_name = "PERCENT")]
        tolerance: f64,
        /// Replays to run at once on this node (PHANTOM's concurrent replay, so the ranks
        /// share memory bandwidth as in the run).
        #[arg(long, default_value_t = 1)]
        concurrent: usize,
        /// Stop at the first send whose data differs from the run's (by default such sends
        /// are counted and reported: programs that send uninitialised buffers still replay).
        #[arg(long)]
        strict: bool,
        /// Replay each rank K times and keep each interval's median (the spread of the
        /// replays' totals is reported).
        #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
        /// The MPI the program uses (default: told from the program's libraries).
        #[arg(long, value_parser = ["openmpi", "mpich"])]
        mpi: Option<String>,
        /// The program and its arguments, as traced.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        program: Vec<String>,
    },
    /// Measure this machine's MPI (ping-pong and message trains, 1 B to 4 MiB, Netgauge's
    /// PRTT method) and fit the simulator's parameters, written as a `conifer sim --net`
    /// file.
    Calibrate {
        /// Ranks to launch (the benchmark runs between ranks 0 and 1).
        #[arg(short = 'n', long = "np", default_value_t = 2)]
        ranks: u32,
        /// The MPI to measure (default: the one conifer is built for).
        #[arg(long, value_parser = ["openmpi", "mpich"])]
        mpi: Option<String>,
        /// Fewer sizes (1 B to 2 MiB by ×8, and 4 KiB) and repetitions.
        #[arg(long)]
        quick: bool,
        /// The parameter file to write.
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
        /// Seconds the benchmark may run before it is stopped.
        #[arg(long, default_value_t = 600)]
        timeout: u32,
        /// Print JSON (measurements, parameters, fit error).
        #[arg(long)]
        json: bool,
    },
    /// Compare two traces: calls, bytes, matrix, time, first diverging call per rank; exits
    /// 0 when they are equal up to timing, 1 when not.
    Diff {
        /// The first trace.
        a: PathBuf,
        /// The second trace.
        b: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Generate a C proxy application making the traced calls (`-o DIR`), or with `--check`
    /// build, run and trace it and compare with the original: exits 0 when they match, 1 when
    /// not.
    Proxy {
        /// The trace file (`.cft`).
        file: PathBuf,
        /// Directory to write `proxy.c` and `Makefile` into.
        #[arg(short = 'o', long = "output", required_unless_present = "check")]
        output: Option<PathBuf>,
        /// Computation between calls: `none`, `sleep` or `spin` for the recorded intervals.
        #[arg(long, default_value = "none", value_parser = ["none", "sleep", "spin"])]
        compute: String,
        /// Build the proxy in a temporary directory, trace it on the same ranks and compare.
        #[arg(long)]
        check: bool,
        /// With `--check`: compare with this trace of a proxy run made earlier instead of
        /// building and running one.
        #[arg(long, requires = "check")]
        against: Option<PathBuf>,
    },
    /// Every call with every argument, one per line.
    Decode {
        /// The trace file (`.cft`).
        file: PathBuf,
        /// Only this rank.
        #[arg(long)]
        rank: Option<u32>,
        /// Only ranks A-B (inclusive).
        #[arg(long)]
        ranks: Option<String>,
        /// One JSON object per call.
        #[arg(long)]
        json: bool,
        /// Instead of the calls, every communicator the run made: its name (`comm5`, or
        /// `comm5@4` when other communicators share the id: the world rank of its local rank
        /// 0 follows), its members in world ranks by local rank, and how it was made.
        #[arg(long)]
        comms: bool,
    },
    /// Compare a trace with the raw record of the same run (`--raw`), call by call.
    Verify {
        /// The trace file (`.cft`).
        file: PathBuf,
        /// The raw record directory (default: FILE.raw).
        #[arg(long)]
        raw: Option<PathBuf>,
    },
    /// Compile and link C with the structure-tree pass (drop-in for mpicc; `--mpi=NAME`).
    #[command(disable_help_flag = true)]
    Cc {
        /// Compiler arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Compile and link C++ with the structure-tree pass (drop-in for mpicxx).
    #[command(disable_help_flag = true)]
    Cxx {
        /// Compiler arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Compile and link Fortran with the structure-tree pass (drop-in for mpifort).
    #[command(disable_help_flag = true)]
    Fc {
        /// Compiler arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Print the structure tree embedded in a binary built with `conifer cc/cxx/fc`.
    Tree {
        /// The binary.
        binary: String,
        /// Print JSON instead of an indented tree.
        #[arg(long)]
        json: bool,
    },
    /// Extrapolate a trace for N ranks from traces of one program at three or more small rank
    /// counts (rank classes by place in the process grid, fields fitted as functions of P).
    Extrapolate {
        /// The traces at small rank counts (three or more, distinct P).
        #[arg(required = true, num_args = 1..)]
        inputs: Vec<PathBuf>,
        /// The rank count to extrapolate to.
        #[arg(long)]
        ranks: u32,
        /// The trace to write.
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
        /// Also list every field found to vary with the run and its fitted form.
        #[arg(long)]
        verbose: bool,
    },
    /// Combine the partial files of a run that ended early into one trace marked partial.
    Merge {
        /// The directory of partial files (`<trace>.partial`).
        dir: PathBuf,
        /// The trace to write.
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
    },
    /// The preload libraries installed for each MPI, and what one of them wraps.
    Info {
        /// Print JSON instead of a summary.
        #[arg(long)]
        json: bool,
        /// The MPI whose library to describe (default: the one this conifer was built for).
        #[arg(long, value_parser = ["openmpi", "mpich"])]
        mpi: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `diff` exits 1 for "the traces differ", so its errors exit 2.
    let error_code = match cli.command {
        Command::Diff { .. } | Command::Proxy { check: true, .. } => ExitCode::from(2),
        _ => ExitCode::FAILURE,
    };
    let result = match cli.command {
        Command::Exec { options, program } => launch::exec(&options, &program),
        Command::Run {
            ranks,
            launcher_args,
            options,
            program,
        } => launch::run(ranks, &launcher_args, &options, &program),
        Command::Stats { file, json } => stats::print(&file, json),
        Command::Profile {
            file,
            json,
            top,
            expand,
        } => profile::run(&file, json, top, expand),
        Command::Waits {
            file,
            json,
            top,
            with_startup,
        } => waits::run(&file, json, top, with_startup),
        Command::Matrix {
            file,
            metric,
            kind,
            comm,
            csv,
            json,
            expand,
        } => matrix::parse_select(&metric, &kind)
            .and_then(|sel| matrix::run(&file, sel, comm.as_deref(), csv, json, expand)),
        Command::Plot {
            kind,
            file,
            output,
            metric,
            kind_of_calls,
            from,
            to,
            ranks,
        } => matrix::parse_select(&metric, &kind_of_calls).and_then(|sel| {
            let window = plot::WindowArgs { from, to, ranks };
            plot::run(&kind, &file, &output, sel, &window)
        }),
        Command::Report { file, output } => report::run(&file, &output),
        Command::Diff { a, b, json } => diff::run(&a, &b, json),
        Command::Proxy {
            file,
            output,
            compute,
            check,
            against,
        } => proxy::run(
            &file,
            output.as_deref(),
            &compute,
            check,
            against.as_deref(),
        ),
        Command::Sim {
            file,
            net,
            set,
            compute_scale,
            coll,
            sweep,
            plot,
            top,
            json,
        } => sim::run(&sim::Args {
            file: &file,
            net: net.as_deref(),
            set: set.as_deref(),
            compute_scale,
            coll: coll.as_deref(),
            sweep: sweep.as_deref(),
            plot: plot.as_deref(),
            top,
            json,
        }),
        Command::Replay {
            file,
            rank,
            representatives,
            tolerance,
            concurrent,
            strict,
            repeat,
            mpi,
            program,
        } => replay::run(&replay::Args {
            file: &file,
            ranks: &rank,
            representatives,
            tolerance: tolerance / 100.0,
            concurrent,
            strict,
            repeat: repeat as usize,
            mpi: mpi.as_deref(),
            program: &program,
        }),
        Command::Calibrate {
            ranks,
            mpi,
            quick,
            output,
            timeout,
            json,
        } => calibrate::run(&calibrate::Args {
            ranks,
            mpi: mpi.as_deref(),
            quick,
            output: &output,
            timeout,
            json,
        }),
        Command::Export {
            format,
            file,
            output,
            flops_per_second,
        } => export::run(format, &file, &output, export::Options { flops_per_second }),
        Command::Decode {
            file,
            json,
            comms: true,
            ..
        } => comm_table::print(&file, json),
        Command::Decode {
            file,
            rank,
            ranks,
            json,
            comms: false,
        } => decode::print(&file, rank, ranks.as_deref(), json),
        Command::Verify { file, raw } => verify::run(&file, raw.as_deref()),
        Command::Merge { dir, output } => merge::run(&dir, &output),
        Command::Extrapolate {
            inputs,
            ranks,
            output,
            verbose,
        } => extrapolate::run(&inputs, ranks, &output, verbose),
        Command::Info { json, mpi } => info::print(json, mpi.as_deref()),
        Command::Cc { args } => static_pass::exec("cc", &args),
        Command::Cxx { args } => static_pass::exec("cxx", &args),
        Command::Fc { args } => static_pass::exec("fc", &args),
        Command::Tree { binary, json } => {
            let mut args = vec![binary];
            if json {
                args.push("--json".into());
            }
            static_pass::exec("tree", &args)
        }
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("conifer: {message}");
            error_code
        }
    }
}
