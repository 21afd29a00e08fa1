//! Prediction against measurement (`conifer sim`, issue "Predict"): the network calibrated
//! here (`conifer calibrate`), then for each program on 2 ranks (one per core) the untraced
//! run's time, measured by an independent clock (`tests/tools/span.c`, preloaded alone:
//! rank 0's end of `MPI_Init` to start of `MPI_Finalize`), against `conifer sim`'s
//! prediction from a trace with lossless timing and from one with the default timing, and
//! against SimGrid's replay (`smpirun -replay`) of the lossless trace on a platform built
//! from the same parameters.
//!
//! This is the only place predictions meet wall time: a loaded host slows the untraced runs
//! severalfold, so the tests (`crates/conifer-cli/tests/prediction.rs`) check the model
//! against values derived by hand from the trace, and this table (ring and stencil2d among
//! its rows, each from a lossless and a default-timing trace) states the load it ran under.

use crate::measure::{repetitions, round};
use crate::report::Table;
use crate::runner::{installed, median, Setup};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The programs predicted: name, command line (after the launcher), how to find them.
fn programs(setup: &Setup) -> Vec<(String, Vec<String>)> {
    let app = |name: &str, iterations: &str| {
        (
            format!("{name} {iterations}"),
            vec![
                setup.apps.join(name).display().to_string(),
                iterations.to_string(),
            ],
        )
    };
    let mut list = vec![
        app("ring", "50000"),
        app("stencil2d", "8000"),
        app("stencil3d", "2000"),
        app("mg", "2000"),
        app("waitany", "20000"),
        app("reduce0", "20000"),
        app("butterfly", "20000"),
    ];
    // Debian's LAMMPS links Open MPI.
    let melt = "/usr/share/lammps/examples/melt/in.melt";
    if setup.mpi == "openmpi" && installed("/usr/bin/lmp") && installed(melt) {
        list.push((
            "LAMMPS melt".into(),
            vec!["lmp".into(), "-in".into(), melt.into()],
        ));
    }
    list
}

/// Runs `cmd` in the scratch directory with Open MPI's root permission; its stdout.
pub(crate) fn run(setup: &Setup, cmd: &mut Command) -> Result<Vec<u8>, String> {
    let out = cmd
        .current_dir(&setup.scratch)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("CONIFER_NO_PROGRESS", "1")
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "{cmd:?} failed: {}",
            err.lines().last().unwrap_or("")
        ));
    }
    Ok(out.stdout)
}

/// The network parameters fitted here, as `conifer calibrate --json` reports them.
pub(crate) struct Calibration {
    /// The parameter file.
    pub file: PathBuf,
    /// `conifer calibrate --json`'s report.
    pub report: Value,
}

pub(crate) fn calibrate(setup: &Setup, quick: bool) -> Result<Calibration, String> {
    let file = setup.scratch.join("net.toml");
    let mut cmd = Command::new(setup.bin.join("conifer"));
    cmd.args(["calibrate", "-n", "2", "--json", "--mpi", &setup.mpi, "-o"])
        .arg(&file);
    if quick {
        cmd.arg("--quick");
    }
    let report = serde_json::from_slice(&run(setup, &mut cmd)?)
        .map_err(|e| format!("calibrate --json: {e}"))?;
    Ok(Calibration { file, report })
}

/// `tests/tools/span.c` built with the MPI's compiler.
pub(crate) fn span_library(setup: &Setup) -> Result<PathBuf, String> {
    let lib = setup.bin.join("libspan.so");
    let mut cmd = Command::new(format!("mpicc.{}", setup.mpi));
    cmd.args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(setup.root.join("tests/tools/span.c"));
    run(setup, &mut cmd)?;
    Ok(lib)
}

/// Rank 0's span (ns) of one untraced run of `program` on 2 ranks.
pub(crate) fn untraced_span(setup: &Setup, lib: &Path, program: &[String]) -> Result<f64, String> {
    let out = setup.scratch.join("span.txt");
    let _ = std::fs::remove_file(&out);
    let mut cmd = Command::new("timeout");
    cmd.arg("600")
        .arg(format!("mpirun.{}", setup.mpi))
        .args(["-n", "2"]);
    if setup.mpi == "mpich" {
        cmd.args(["-genv", "LD_PRELOAD"]).arg(lib);
        cmd.args(["-genv", "SPAN_OUT"]).arg(&out);
    } else {
        cmd.arg("-x").arg(format!("LD_PRELOAD={}", lib.display()));
        cmd.arg("-x").arg(format!("SPAN_OUT={}", out.display()));
    }
    run(setup, cmd.args(program))?;
    std::fs::read_to_string(&out)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .ok_or_else(|| format!("{}: the span library wrote no time", program[0]))
}

/// Traces `program` on 2 ranks with `timing` into `trace`.
fn trace(setup: &Setup, program: &[String], timing: &str, trace: &Path) -> Result<(), String> {
    let mut cmd = Command::new("timeout");
    cmd.arg("600")
        .arg(setup.bin.join("conifer"))
        .args(["run", "-n", "2", "--timing", timing, "-o"])
        .arg(trace)
        .args(program);
    run(setup, &mut cmd).map(|_| ())
}

/// `conifer sim`'s predicted time (ns) of `trace` with the calibrated parameters.
pub(crate) fn predict(setup: &Setup, net: &Path, trace: &Path) -> Result<f64, String> {
    let mut cmd = Command::new(setup.bin.join("conifer"));
    cmd.arg("sim").arg(trace).args(["--json", "--net"]).arg(net);
    let report: Value =
        serde_json::from_slice(&run(setup, &mut cmd)?).map_err(|e| format!("sim --json: {e}"))?;
    report["total_ns"]
        .as_f64()
        .ok_or_else(|| "sim --json without total_ns".into())
}

/// SimGrid's simulated time (ns) of `trace` replayed by `smpirun -replay` on two 1 Gflop/s
/// hosts joined by one link of latency L and bandwidth 1/G (CM02 model, no SMPI correction
/// factors), with the calibrated per-message overheads (`smpi/os`, `smpi/or`: o + m·O) and
/// detached sends up to the eager limit; `None` without SimGrid.
fn simgrid(setup: &Setup, params: &Value, trace: &Path, name: &str) -> Result<Option<f64>, String> {
    if Command::new("smpirun").arg("--version").output().is_err() {
        return Ok(None);
    }
    let dir = setup.scratch.join(format!("simgrid-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    let mut export = Command::new(setup.bin.join("conifer"));
    export
        .args(["export", "simgrid"])
        .arg(trace)
        .arg("-o")
        .arg(&dir)
        .args(["--flops-per-second", "1e9"]);
    run(setup, &mut export)?;
    let f = |key: &str| params[key].as_f64().unwrap_or(0.0);
    let bandwidth = 1e9 / f("gap_per_byte").max(1e-6);
    let platform = dir.join("platform.xml");
    std::fs::write(
        &platform,
        format!(
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n\
             <platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n\
             <host id=\"node-0\" speed=\"1Gf\"/>\n<host id=\"node-1\" speed=\"1Gf\"/>\n\
             <link id=\"wire\" bandwidth=\"{bandwidth}Bps\" latency=\"{}ns\"/>\n\
             <route src=\"node-0\" dst=\"node-1\"><link_ctn id=\"wire\"/></route>\n\
             </zone>\n</platform>\n",
            f("latency")
        ),
    )
    .map_err(|e| e.to_string())?;
    let hostfile = dir.join("hostfile");
    std::fs::write(&hostfile, "node-0\nnode-1\n").map_err(|e| e.to_string())?;
    let overhead = |o: f64| format!("0:{}:{}", o * 1e-9, f("copy_per_byte") * 1e-9);
    let mut cmd = Command::new("timeout");
    cmd.args(["600", "smpirun", "-np", "2", "-platform"])
        .arg(&platform)
        .arg("-hostfile")
        .arg(&hostfile)
        .args([
            "--cfg=network/model:CM02",
            "--cfg=smpi/bw-factor:0:1",
            "--cfg=smpi/lat-factor:0:1",
        ])
        .arg(format!("--cfg=smpi/os:{}", overhead(f("send_overhead"))))
        .arg(format!("--cfg=smpi/or:{}", overhead(f("recv_overhead"))))
        .arg(format!(
            "--cfg=smpi/send-is-detached-thresh:{}",
            params["eager_limit"].as_u64().unwrap_or(0)
        ))
        .arg("-replay")
        .arg(dir.join("traces.txt"));
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run smpirun: {e}"))?;
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let seconds = text
        .lines()
        .rev()
        .filter_map(|l| l.split("Simulation time ").nth(1))
        .find_map(|t| t.trim().parse::<f64>().ok())
        .ok_or_else(|| format!("smpirun printed no simulation time for {name}"))?;
    Ok(Some(seconds * 1e9))
}

/// A signed relative error as a report cell (percent).
pub(crate) fn error(predicted: f64, measured: f64) -> Value {
    round(100.0 * (predicted - measured) / measured, 1)
}

pub(crate) fn mean_and_max(errors: &[f64]) -> (Value, Value) {
    let abs: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
    (
        round(abs.iter().sum::<f64>() / abs.len().max(1) as f64, 1),
        round(abs.iter().copied().fold(0.0, f64::max), 1),
    )
}

/// The machine's 1-minute load average (`/proc/loadavg`): two busy-polling ranks on two
/// cores slow down severalfold when anything else runs, so the table says how busy it was.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// The calibration and the prediction table.
pub fn prediction_tables(setup: &Setup, quick: bool) -> Result<Vec<Table>, String> {
    let load_before = load_average();
    let calibration = calibrate(setup, quick)?;
    let params = &calibration.report["params"];
    let mut fitted = Table::new(
        &format!("Calibration ({})", setup.mpi),
        "`conifer calibrate -n 2` on this machine: the fitted parameters (ns, ns/B, bytes) and \
         the fit error (relative RMS of model against the benchmark's medians).",
        &[
            "L",
            "os",
            "or",
            "g",
            "G",
            "O",
            "eager",
            "R",
            "self",
            "selfG",
            "fit error %",
        ],
    );
    let f = |key: &str| json!(params[key]);
    fitted.push(
        vec![
            f("latency"),
            f("send_overhead"),
            f("recv_overhead"),
            f("gap"),
            f("gap_per_byte"),
            f("copy_per_byte"),
            f("eager_limit"),
            f("rendezvous"),
            f("self_overhead"),
            f("self_per_byte"),
            round(
                100.0
                    * calibration.report["error"]["overall"]
                        .as_f64()
                        .unwrap_or(0.0),
                1,
            ),
        ],
        format!(
            "conifer calibrate -n 2 --mpi {}{} -o net.toml",
            setup.mpi,
            if quick { " --quick" } else { "" }
        ),
    );
    let lib = span_library(setup)?;
    let mut table = Table::new(
        &format!("Prediction against measurement ({}, 2 ranks)", setup.mpi),
        &format!(
            "measured = median of {} untraced runs (rank 0's end of MPI_Init to start of \
             MPI_Finalize, by tests/tools/span.c preloaded alone); predicted = `conifer sim \
             --net net.toml` from a trace with `--timing lossless` and from one with the \
             default timing; SimGrid = `smpirun -replay` of the lossless trace's `conifer \
             export simgrid` on a platform with the same L, G, o, O and eager limit; errors \
             in percent of measured. Last row: mean and largest absolute error.",
            repetitions(quick)
        ),
        &[
            "program",
            "measured ms",
            "lossless ms",
            "error %",
            "default ms",
            "error %",
            "SimGrid ms",
            "error %",
        ],
    );
    let (mut lossless_errors, mut default_errors, mut simgrid_errors) =
        (Vec::new(), Vec::new(), Vec::new());
    for (name, program) in programs(setup) {
        let spans: Vec<f64> = (0..repetitions(quick))
            .map(|_| untraced_span(setup, &lib, &program))
            .collect::<Result<_, _>>()?;
        let measured = median(&spans);
        let file = name.replace(' ', "-");
        let lossless = setup.scratch.join(format!("predict-{file}-lossless.cft"));
        let default = setup.scratch.join(format!("predict-{file}-default.cft"));
        trace(setup, &program, "lossless", &lossless)?;
        trace(setup, &program, "aggregate", &default)?;
        let p_lossless = predict(setup, &calibration.file, &lossless)?;
        let p_default = predict(setup, &calibration.file, &default)?;
        let smpi = simgrid(setup, params, &lossless, &file)?;
        lossless_errors.push(100.0 * (p_lossless - measured) / measured);
        default_errors.push(100.0 * (p_default - measured) / measured);
        if let Some(t) = smpi {
            simgrid_errors.push(100.0 * (t - measured) / measured);
        }
        table.push(
            vec![
                json!(name),
                round(measured / 1e6, 2),
                round(p_lossless / 1e6, 2),
                error(p_lossless, measured),
                round(p_default / 1e6, 2),
                error(p_default, measured),
                smpi.map_or(json!(null), |t| round(t / 1e6, 2)),
                smpi.map_or(json!(null), |t| error(t, measured)),
            ],
            format!(
                "conifer run -n 2 --timing lossless|aggregate -o T.cft {}; conifer sim --net \
                 net.toml T.cft",
                setup.shown(&program)
            ),
        );
    }
    let (lm, lx) = mean_and_max(&lossless_errors);
    let (dm, dx) = mean_and_max(&default_errors);
    let (sm, sx) = mean_and_max(&simgrid_errors);
    table.note.push_str(&format!(
        " Load average (1 min) {load_before} at the start, {} at the end: only a quiet \
         machine (below 1) measures the untraced runs fairly.",
        load_average()
    ));
    table.push(
        vec![
            json!("mean / largest |error|"),
            json!(null),
            json!(null),
            json!(format!("{lm} / {lx}")),
            json!(null),
            json!(format!("{dm} / {dx}")),
            json!(null),
            json!(format!("{sm} / {sx}")),
        ],
        "the rows above".into(),
    );
    Ok(vec![fitted, table])
}
