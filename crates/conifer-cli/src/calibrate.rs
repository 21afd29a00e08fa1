//! `conifer calibrate`: measures this machine's MPI with a benchmark of our own (Netgauge's
//! PRTT method, `assets/calibrate.c`, compiled here with the MPI's compiler wrapper and run
//! under its launcher) and fits the simulator's parameters to it
//! (`conifer_sim::calibrate`), written as a `conifer sim --net` file.

use conifer_sim::calibrate::{self, Benchmark, Fit, OBSERVABLES};
use conifer_trace::decode::human_time;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The benchmark's C source.
const SOURCE: &str = include_str!("../assets/calibrate.c");

/// What the command line asked for.
pub struct Args<'a> {
    /// Ranks to launch (the benchmark uses ranks 0 and 1).
    pub ranks: u32,
    /// `openmpi` or `mpich`; the MPI conifer is built for when `None`.
    pub mpi: Option<&'a str>,
    /// Fewer sizes and repetitions.
    pub quick: bool,
    /// The parameter file to write.
    pub output: &'a Path,
    /// Seconds the benchmark may run.
    pub timeout: u32,
    /// JSON output.
    pub json: bool,
}

/// Runs `conifer calibrate`.
pub fn run(args: &Args) -> Result<ExitCode, String> {
    if args.ranks < 2 {
        return Err(
            "-n must be at least 2: the benchmark measures messages between two ranks".into(),
        );
    }
    let mpi = args.mpi.unwrap_or(crate::installed::BUILT_FOR_MPI);
    let compiler = format!("mpicc.{mpi}");
    let (launcher, flags, env) = crate::launch::launcher(mpi, args.ranks);
    for tool in [&compiler, &launcher] {
        if on_path(tool).is_none() {
            return Err(format!(
                "{tool} not found on PATH: install {mpi} (scripts/setup.sh) or pick another MPI with --mpi"
            ));
        }
    }
    let dir = std::env::temp_dir().join(format!("conifer-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let result = measure(&dir, &compiler, &launcher, &flags, &env, args);
    let _ = std::fs::remove_dir_all(&dir);
    let bench = result?;
    let fit = calibrate::fit(&bench);
    let file = format!("{}{}", header(&bench, &fit, mpi), fit.params.to_file());
    std::fs::write(args.output, file)
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    if args.json {
        let v = serde_json::json!({
            "mpi": mpi,
            "benchmark": bench,
            "params": fit.params,
            "error": fit.error,
            "output": args.output,
        });
        crate::output::emit_json(&v)?;
    } else {
        crate::output::emit(&text(&bench, &fit, args.output))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Compiles the benchmark in `dir`, runs it, parses its output.
fn measure(
    dir: &Path,
    compiler: &str,
    launcher: &str,
    flags: &[String],
    env: &[(&str, &str)],
    args: &Args,
) -> Result<Benchmark, String> {
    let source = dir.join("calibrate.c");
    let exe = dir.join("calibrate");
    std::fs::write(&source, SOURCE)
        .map_err(|e| format!("cannot write {}: {e}", source.display()))?;
    eprintln!("conifer calibrate: compiling the benchmark with {compiler}");
    let out = Command::new(compiler)
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .map_err(|e| format!("cannot run {compiler}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{compiler} could not compile the benchmark: {}",
            last_line(&out.stderr)
        ));
    }
    eprintln!(
        "conifer calibrate: running it on {} ranks with {launcher} ({}; at most {} s)",
        args.ranks,
        if args.quick {
            "quick: 8 sizes, about a second"
        } else {
            "23 sizes, a few seconds"
        },
        args.timeout
    );
    let out = Command::new("timeout")
        .args(["--kill-after=10", &args.timeout.to_string(), launcher])
        .args(flags)
        .arg(&exe)
        .args(args.quick.then_some("quick"))
        .envs(env.iter().copied())
        .output()
        .map_err(|e| format!("cannot run timeout {launcher}: {e}"))?;
    match out.status.code() {
        Some(0) => {}
        Some(124) | Some(137) => {
            return Err(format!(
            "the benchmark did not finish within {} s (a busy machine? try --quick or --timeout)",
            args.timeout
        ))
        }
        _ => {
            return Err(format!(
                "the benchmark failed under {launcher}: {}",
                last_line(&out.stderr)
            ))
        }
    }
    Benchmark::parse(&String::from_utf8_lossy(&out.stdout))
}

/// The last non-empty line of a program's stderr.
fn last_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("(no message)")
        .trim()
        .to_string()
}

/// `name` as found on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The parameter file's comments: where the values come from and how well they fit.
fn header(b: &Benchmark, fit: &Fit, mpi: &str) -> String {
    let mut s = format!(
        "# written by `conifer calibrate` ({mpi}: {})\n# fit error (relative RMS, model vs measured): {:.1}% overall",
        b.library.replace('#', " "),
        100.0 * fit.error.overall
    );
    for (name, e) in OBSERVABLES.iter().zip(fit.error.by_observable) {
        let _ = write!(s, ", {name} {:.1}%", 100.0 * e);
    }
    if let Some(e) = fit.error.self_exchange {
        let _ = write!(s, "; messages to self {:.1}%", 100.0 * e);
    }
    s.push('\n');
    if let Some(note) = zero_latency_note(&fit.params) {
        let _ = writeln!(s, "# {note}");
    }
    s
}

/// What a fitted latency under a nanosecond (printed as 0ns) means: not a network without
/// latency, but one whose latency the benchmark cannot tell from the overheads.
fn zero_latency_note(p: &conifer_sim::params::Params) -> Option<String> {
    (p.latency < 1.0).then(|| {
        format!(
            "L = {} ns: the latency is below what the benchmark resolves and is absorbed into the \
             overheads: a small message's one-way time here is os + or = {}",
            p.latency,
            human_time(p.send_overhead + p.recv_overhead)
        )
    })
}

/// The measurements against the model, the parameters and the fit error, as text.
fn text(b: &Benchmark, fit: &Fit, output: &Path) -> String {
    let p = &fit.params;
    let mut s = format!(
        "{}\nmeasured (medians) / model, per message:\n{:>9} {:>19} {:>19} {:>19} {:>19} {:>19}\n",
        b.library, "size", "one-way", "gap", "send", "recv", "to self"
    );
    for sample in &b.samples {
        let (o, m) = (
            b.observed(sample),
            calibrate::predict(p, sample.bytes, sample.delay),
        );
        let _ = write!(s, "{:>9}", bytes(sample.bytes));
        for (x, y) in [
            (o.one_way, m.one_way),
            (o.gap, m.gap),
            (o.send, m.send),
            (o.recv, m.recv),
        ] {
            let _ = write!(s, " {:>9} /{:>9}", human_time(x), human_time(y));
        }
        if let Some(x) = sample.self_exchange {
            let y = calibrate::predict_self(p, sample.bytes);
            let _ = write!(s, " {:>9} /{:>9}", human_time(x), human_time(y));
        }
        s.push('\n');
    }
    let _ = writeln!(s, "\nfitted parameters:");
    for (key, value, meaning) in [
        ("L", human_time(p.latency), "latency"),
        ("os", human_time(p.send_overhead), "send overhead"),
        ("or", human_time(p.recv_overhead), "receive overhead"),
        ("g", human_time(p.gap), "gap between messages"),
        (
            "G",
            format!("{} ns/B", p.gap_per_byte),
            "per byte on the wire",
        ),
        (
            "O",
            format!("{} ns/B", p.copy_per_byte),
            "per byte copied, not overlapped",
        ),
        ("eager", bytes(p.eager_limit), "eager limit"),
        ("R", human_time(p.rendezvous), "rendezvous handshake"),
        ("self", human_time(p.self_overhead), "message to self"),
        (
            "selfG",
            format!("{} ns/B", p.self_per_byte),
            "per byte of a message to self",
        ),
    ] {
        let _ = writeln!(s, "  {key:<5} = {value:>12}   {meaning}");
    }
    if let Some(note) = zero_latency_note(p) {
        let _ = writeln!(s, "  ({note})");
    }
    let _ = write!(
        s,
        "fit error (relative RMS, model vs measured): {:.1}% overall",
        100.0 * fit.error.overall
    );
    for (name, e) in OBSERVABLES.iter().zip(fit.error.by_observable) {
        let _ = write!(s, "; {name} {:.1}%", 100.0 * e);
    }
    if let Some(e) = fit.error.self_exchange {
        let _ = write!(s, "; messages to self {:.1}%", 100.0 * e);
    }
    let _ = writeln!(
        s,
        "\nwrote {} (use: conifer sim TRACE --net {0})",
        output.display()
    );
    s
}

/// A size with a binary unit.
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}
