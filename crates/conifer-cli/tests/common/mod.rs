//! Helpers shared by the integration tests: which MPI this build targets, how to launch real
//! MPI programs with and without Conifer, and how to read what they print.

#![allow(dead_code)] // each test binary uses a different subset

pub mod slicing;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The MPI this build targets (`CONIFER_MPI`, as for the build; Open MPI when unset).
pub fn mpi() -> String {
    std::env::var("CONIFER_MPI").unwrap_or_else(|_| "openmpi".into())
}

/// True for MPICH, which busy-polls: tests keep it at few ranks and iterations.
pub fn is_mpich() -> bool {
    mpi() == "mpich"
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The `conifer` binary under test.
pub fn conifer() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_conifer"))
}

/// MPI runs are serialised: this machine has 2 cores and oversubscribed runs in parallel
/// would only make each slower (MPICH by orders of magnitude).
pub fn mpi_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = conifer().parent().unwrap().join("test-scratch").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Builds the test apps once for this MPI and returns their directory.
pub fn apps_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = conifer().parent().unwrap().join("apps");
        let status = Command::new("make")
            .args(["-s", "-C"])
            .arg(repo_root().join("tests/apps"))
            .arg(format!("MPI={}", mpi()))
            .arg(format!("OUT={}", out.display()))
            .status()
            .expect("make runs");
        assert!(status.success(), "building the test apps failed");
        out
    })
    .clone()
}

/// Builds the test apps with the structure-tree pass (`conifer cc/fc`), once, and returns
/// their directory.
pub fn tree_apps_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = conifer().parent().unwrap().join("apps-tree");
        let status = Command::new("make")
            .args(["-s", "-C"])
            .arg(repo_root().join("tests/apps"))
            .arg(format!("MPI={}", mpi()))
            .arg(format!("OUT={}", out.display()))
            .arg(format!("CONIFER={}", conifer().display()))
            .status()
            .expect("make runs");
        assert!(
            status.success(),
            "building the test apps with conifer cc/fc failed"
        );
        out
    })
    .clone()
}

/// The launcher command line for `ranks` ranks of this MPI, as a user would type it.
pub fn mpirun(ranks: u32) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.arg("300")
        .arg(format!("mpirun.{}", mpi()))
        .arg("-n")
        .arg(ranks.to_string());
    if mpi() == "openmpi" {
        cmd.arg("--oversubscribe");
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    cmd
}

/// `conifer run --raw -n RANKS -o TRACE` in `dir` under a 300 s timeout, as a user would launch
/// a traced run with its raw record; the caller appends the program and its arguments.
pub fn conifer_run_raw(ranks: u32, trace: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.arg("300")
        .arg(conifer())
        .args(["run", "--raw", "-n", &ranks.to_string(), "-o"])
        .arg(trace)
        .current_dir(dir);
    cmd
}

/// Traces `program` with `args` on `ranks` ranks by `conifer run` (plus `options`) in `dir`,
/// into `dir/<name>.cft`, under a 300 s timeout and the MPI lock (Open MPI oversubscribed).
pub fn traced(
    dir: &Path,
    name: &str,
    ranks: u32,
    options: &[&str],
    program: &Path,
    args: &[&str],
) -> PathBuf {
    traced_run(dir, name, ranks, options, program, args).0
}

/// [`traced`], also returning what the run printed.
pub fn traced_run(
    dir: &Path,
    name: &str,
    ranks: u32,
    options: &[&str],
    program: &Path,
    args: &[&str],
) -> (PathBuf, Output) {
    traced_run_with(dir, name, ranks, options, &[], program, args)
}

/// [`traced_run`] with environment variables `env` set for the run.
pub fn traced_run_with(
    dir: &Path,
    name: &str,
    ranks: u32,
    options: &[&str],
    env: &[(&str, &str)],
    program: &Path,
    args: &[&str],
) -> (PathBuf, Output) {
    let trace = dir.join(format!("{name}.cft"));
    let _guard = mpi_lock();
    let mut cmd = Command::new("timeout");
    cmd.arg("300")
        .arg(conifer())
        .args(["run", "-n", &ranks.to_string(), "-o"])
        .arg(&trace)
        .args(options)
        .envs(env.iter().copied())
        .current_dir(dir);
    if ranks > 2 && !is_mpich() {
        cmd.arg("--launcher-arg=--oversubscribe");
    }
    let out = run_ok(cmd.arg(program).args(args));
    (trace, out)
}

/// Runs a command to completion and fails the test, showing its output, if it did not succeed.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("command starts");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Compiles `source` into `output` with the MPI's compiler wrapper `wrapper` (`mpicc`,
/// `mpif90`: the suffixed one of the MPI under test) and `flags`; fails the test if it fails.
pub fn mpi_compile(wrapper: &str, flags: &[&str], output: &Path, source: &Path) {
    run_ok(
        Command::new(format!("{wrapper}.{}", mpi()))
            .args(flags)
            .arg("-o")
            .arg(output)
            .arg(source),
    );
}

/// The lines of `text` that start with `prefix`, sorted (ranks print in any order).
pub fn lines_with(text: &[u8], prefix: &str) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(text)
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// The number in the `name=<n>` word of `line` (report and result lines); panics, showing the
/// line, when there is none.
pub fn field_value(line: &str, name: &str) -> u64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name}= in {line:?}"))
}

/// The apps' own call counts: `COUNT rank=R MPI_Name N` lines, as (rank, name) → N.
pub fn app_counts(stdout: &[u8]) -> BTreeMap<(u32, String), u64> {
    lines_with(stdout, "COUNT ")
        .iter()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(fields.len(), 4, "malformed count line {line:?}");
            let rank = fields[1].strip_prefix("rank=").unwrap().parse().unwrap();
            ((rank, fields[2].to_string()), fields[3].parse().unwrap())
        })
        .collect()
}

/// Every call of a trace, as the JSON objects `conifer decode --json` prints.
pub fn decode_all(trace: &Path) -> Vec<serde_json::Value> {
    let out = run_ok(
        Command::new(conifer())
            .arg("decode")
            .arg("--json")
            .arg(trace),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// `conifer stats --json` of a trace.
pub fn stats_json(trace: &Path) -> serde_json::Value {
    let out = run_ok(
        Command::new(conifer())
            .arg("stats")
            .arg("--json")
            .arg(trace),
    );
    serde_json::from_slice(&out.stdout).expect("stats --json prints JSON")
}

/// The per-rank counts a trace reports (from its grammars), as (rank, name) → N (zeros omitted).
pub fn traced_counts(stats: &serde_json::Value) -> BTreeMap<(u32, String), u64> {
    let mut counts = BTreeMap::new();
    for (name, per_rank) in stats["functions_per_rank"]
        .as_object()
        .expect("functions_per_rank")
    {
        for (rank, n) in per_rank.as_array().unwrap().iter().enumerate() {
            let n = n.as_u64().unwrap();
            if n > 0 {
                counts.insert((rank as u32, name.clone()), n);
            }
        }
    }
    counts
}

/// Asserts a trace of `large.0` ranks (`large.1` bytes) is no larger than one of the same
/// behaviour on `small.0` ranks: 3% and 32 bytes for varints that grow with the logarithm of
/// rank and call counts (grammar exponents, per-function and per-family call counts), plus
/// the per-rank timing column (each rank's quantised time in and out of MPI: at most 2 bytes
/// a rank once compressed). Sizes are [`flat_bytes`]: each rank's exact timing figures and
/// clock are left out (they are bounded per rank there).
pub fn assert_flat(what: &str, small: (u32, u64), large: (u32, u64)) {
    let allowed = small.1 as f64 * 1.03 + 32.0 + 2.0 * f64::from(large.0.saturating_sub(small.0));
    eprintln!(
        "{what}: {} ranks {} B -> {} ranks {} B (allowed {allowed:.0})",
        small.0, small.1, large.0, large.1
    );
    assert!(
        large.1 as f64 <= allowed,
        "{what}: the trace grew from {} B at {} ranks to {} B at {} ranks",
        small.1,
        small.0,
        large.1,
        large.0
    );
}

/// The sections that hold each rank's timing figures and clock (`CLCK`, `RTOT` exact, or
/// `RQTM` within 0.1%): they grow by design with the ranks (values differ from rank to
/// rank), by at most [`RANK_TIMING_BYTES_PER_RANK`] a rank.
pub const RANK_TIMING_SECTIONS: [&str; 3] = ["CLCK", "RTOT", "RQTM"];

/// The most a rank may add to [`RANK_TIMING_SECTIONS`]: its clock (offsets at `MPI_Init` and
/// `MPI_Finalize`, its thread's span: about 27 bytes) and its exact totals (recorder,
/// computation, and one time per MPI function it called: 2 to 6 bytes each; stencil3d calls
/// 13 functions, 85–95 bytes a rank in all).
pub const RANK_TIMING_BYTES_PER_RANK: f64 = 128.0;

/// A trace's size without [`RANK_TIMING_SECTIONS`], after checking those hold at most
/// [`RANK_TIMING_BYTES_PER_RANK`] a rank: what [`assert_flat`] compares.
pub fn flat_bytes(trace: &Path) -> u64 {
    let stats = stats_json(trace);
    let ranks = stats["ranks"].as_u64().unwrap() as f64;
    let timing: u64 = RANK_TIMING_SECTIONS
        .iter()
        .map(|s| stats["bytes_by_section"][s].as_u64().unwrap_or(0))
        .sum();
    assert!(
        timing as f64 <= RANK_TIMING_BYTES_PER_RANK * ranks,
        "{}: the per-rank timing sections take {timing} B for {ranks} ranks",
        trace.display()
    );
    std::fs::metadata(trace).unwrap().len() - timing
}

/// Runs `conifer export FORMAT TRACE -o OUTPUT`; fails the test if it fails.
pub fn export(format: &str, trace: &Path, output: &Path) {
    run_ok(
        Command::new(conifer())
            .args(["export", format])
            .arg(trace)
            .arg("-o")
            .arg(output),
    );
}

/// The messages of an OTF2 archive (`traces.otf2`), read with Debian's OTF2 Python bindings:
/// per message, (its send event's time, its receive event's time). Send events sit at their
/// call's entry, receive-completion events at their call's return; messages are matched in
/// order per (sender, receiver, communicator, tag), as MPI matches them.
pub fn otf2_message_times(anchor: &Path) -> Vec<(f64, f64)> {
    let script = r#"
import collections, json, sys, otf2
sends = collections.defaultdict(collections.deque)
receives = collections.defaultdict(collections.deque)
with otf2.reader.open(sys.argv[1]) as trace:
    for location, event in trace.events:
        rank = int(location.group.name.split()[-1])
        name = type(event).__name__
        if name in ("MpiSend", "MpiIsend"):
            sends[(rank, event.receiver, event.communicator.name, event.msg_tag)].append(event.time)
        elif name in ("MpiRecv", "MpiIrecv"):
            receives[(event.sender, rank, event.communicator.name, event.msg_tag)].append(event.time)
pairs = []
for key, times in receives.items():
    for s, r in zip(sends[key], times):
        pairs.append((s, r))
print(json.dumps(pairs))
"#;
    let out = run_ok(
        Command::new("/usr/bin/python3")
            .args(["-c", script])
            .arg(anchor),
    );
    serde_json::from_slice(&out.stdout).expect("the script prints JSON")
}

/// (flow start, flow end) times of every message arrow of a Chrome trace-event export (its
/// `s` and `f` events, joined by id).
pub fn chrome_flow_times(json: &Path) -> Vec<(f64, f64)> {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let mut ends: BTreeMap<u64, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for e in doc["traceEvents"].as_array().expect("traceEvents") {
        let ts = e["ts"].as_f64();
        match e["ph"].as_str() {
            Some("s") => ends.entry(e["id"].as_u64().unwrap()).or_default().0 = ts,
            Some("f") => ends.entry(e["id"].as_u64().unwrap()).or_default().1 = ts,
            _ => {}
        }
    }
    ends.into_values()
        .map(|(s, f)| (s.expect("a flow start"), f.expect("a flow end")))
        .collect()
}

/// (app, ranks, arguments) of every bundled app that finishes normally.
pub fn bundled_apps() -> Vec<(&'static str, u32, Vec<&'static str>)> {
    vec![
        ("stencil2d", 4, vec!["4"]),
        ("stencil2d_f", 4, vec!["4"]),
        ("stencil3d", 4, vec!["3"]),
        ("mg", 8, vec!["2"]),
        ("ring", 4, vec!["5"]),
        ("ring_f", 3, vec!["5"]),
        ("waitany", 4, vec!["3"]),
        ("comms", 4, vec!["3"]),
        ("datatypes", 4, vec!["3"]),
        ("persistent", 4, vec!["3"]),
        ("onesided", 4, vec!["3"]),
        ("mpiio", 2, vec!["3"]),
        ("threads", 2, vec!["3"]),
        ("heapbuf", 2, vec!["9"]),
        ("inplace_f", 3, vec!["3"]),
        ("sections_f", 4, vec!["2"]),
        ("reduce0", 4, vec!["3"]),
        ("ep", 4, vec!["3"]),
        ("ft", 4, vec!["5"]),
        ("cg", 4, vec!["3"]),
        ("butterfly", 4, vec!["3"]),
        ("torus", 6, vec!["3"]),
        ("randpeers", 5, vec!["6"]),
        ("overpost", 4, vec!["5"]),
        ("waitnull", 4, vec!["3"]),
    ]
}

/// The headless browser `scripts/setup.sh` installs (the first of its names that runs).
pub fn chromium() -> &'static str {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("chromium is installed by scripts/setup.sh")
}

/// The DOM of `html` as headless Chromium renders it (its profile in `profile`), under a
/// 120 s timeout; fails the test when the browser does.
pub fn dump_dom(html: &Path, profile: &Path) -> String {
    let out = Command::new("timeout")
        .arg("120")
        .arg(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A time as the CLI prints it ("1.5ms", "812.0us", "2.01s", "40ns") in ns.
pub fn parse_time(text: &str) -> f64 {
    let text = text.trim();
    let at = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or_else(|| panic!("a unit in {text:?}"));
    let (number, unit) = text.split_at(at);
    let scale = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        u => panic!("unit {u:?} in {text:?}"),
    };
    number.parse::<f64>().unwrap() * scale
}

/// The MPI calls of rank `r` in the trace, as `conifer decode` prints them, one line each.
pub fn decoded_mpi_calls(trace: &Path, r: u32) -> Vec<String> {
    let out = run_ok(
        Command::new(conifer())
            .args(["decode", "--rank", &r.to_string()])
            .arg(trace),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(2)
                .is_some_and(|f| f.starts_with("MPI_"))
        })
        .map(str::to_string)
        .collect()
}
