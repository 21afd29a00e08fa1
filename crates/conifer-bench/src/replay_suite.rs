//! Prediction from replay (PHANTOM, `conifer replay`): each C test app with real computation
//! traced on 2 ranks with `--log-messages --timing lossless`, its ranks replayed alone, and
//! `conifer sim --net` run on the trace as recorded, on the trace with every rank's replayed
//! computation, and on the one with representatives' computation — against the untraced run's
//! span (the same independent clock as the prediction table). A second table is PHANTOM's
//! point: a weak-scaled run traced oversubscribed (8 ranks on this machine's cores) records
//! inflated computation, while each rank replayed alone measures what a rank computes with a
//! core of its own, compared with the ranks of a dedicated 2-rank run of the same per-rank
//! problem.

use crate::measure::{repetitions, round};
use crate::prediction_suite::{
    calibrate, error, load_average, mean_and_max, predict, run, span_library, untraced_span,
};
use crate::report::Table;
use crate::runner::{median, Setup};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The programs: name and command line (after the launcher). Jacobi runs a fixed number of
/// iterations (its tolerance is out of reach) with 4 sweeps of computation each.
fn programs(setup: &Setup) -> Vec<(String, Vec<String>)> {
    let app = |name: &str, args: &[&str]| {
        let mut cmd = vec![setup.apps.join(name).display().to_string()];
        cmd.extend(args.iter().map(|a| a.to_string()));
        (format!("{name} {}", args.join(" ")), cmd)
    };
    vec![
        app("jacobi", &["192", "1e-12", "300", "4"]),
        app("stencil2d", &["4000"]),
        app("stencil3d", &["1000"]),
        app("mg", &["1000"]),
    ]
}

/// Traces `program` on `ranks` ranks with a message log and lossless timing into `trace`.
fn logged_trace(setup: &Setup, program: &[String], ranks: u32, trace: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(format!("{}.msglog", trace.display()));
    let mut cmd = Command::new("timeout");
    cmd.arg("600")
        .arg(setup.bin.join("conifer"))
        .args([
            "run",
            "-n",
            &ranks.to_string(),
            "--log-messages",
            "--timing",
            "lossless",
            "-o",
        ])
        .arg(trace)
        .args(program);
    run(setup, &mut cmd).map(|_| ())
}

/// Replays `trace`'s ranks (`selection`: `--rank LIST` or `--representatives`); the seconds
/// it took and the path of the trace with replayed computation.
fn replay(
    setup: &Setup,
    program: &[String],
    trace: &Path,
    selection: &[&str],
) -> Result<(f64, PathBuf), String> {
    let started = std::time::Instant::now();
    let mut cmd = Command::new("timeout");
    cmd.arg("600")
        .arg(setup.bin.join("conifer"))
        .arg("replay")
        .arg(trace)
        .args(selection)
        .arg("--")
        .args(program);
    run(setup, &mut cmd)?;
    let stem = trace.file_stem().unwrap_or_default().to_string_lossy();
    Ok((
        started.elapsed().as_secs_f64(),
        trace.with_file_name(format!("{stem}.replayed.cft")),
    ))
}

/// Each rank's computation (ns) in a trace, by `conifer sim --json` with communication free.
fn computation(setup: &Setup, trace: &Path) -> Result<Vec<f64>, String> {
    let mut cmd = Command::new(setup.bin.join("conifer"));
    cmd.arg("sim").arg(trace).arg("--json");
    let report: Value =
        serde_json::from_slice(&run(setup, &mut cmd)?).map_err(|e| format!("sim --json: {e}"))?;
    Ok(report["ranks"]
        .as_array()
        .map(|ranks| {
            ranks
                .iter()
                .filter_map(|r| r["compute_ns"].as_f64())
                .collect()
        })
        .unwrap_or_default())
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

fn log_size(trace: &Path) -> u64 {
    std::fs::read_dir(format!("{}.msglog", trace.display()))
        .map(|dir| {
            dir.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
                .map(|e| e.metadata().map_or(0, |m| m.len()))
                .sum()
        })
        .unwrap_or(0)
}

/// The prediction table and the oversubscription table.
pub fn replay_tables(setup: &Setup, quick: bool) -> Result<Vec<Table>, String> {
    let load_before = load_average();
    let calibration = calibrate(setup, quick)?;
    let lib = span_library(setup)?;
    let mut table = Table::new(
        &format!("Prediction from replay ({}, 2 ranks)", setup.mpi),
        &format!(
            "measured = median of {} untraced runs (tests/tools/span.c, as in the prediction \
             table); predicted by `conifer sim --net net.toml` from the trace as recorded \
             (--timing lossless), from T.replayed.cft after `conifer replay --rank 0-1`, and \
             after `conifer replay --representatives`; errors in percent of measured; log = \
             the message log on disk against the trace; replay s = wall time of replaying both \
             ranks one after the other. Last row: mean and largest absolute error.",
            repetitions(quick)
        ),
        &[
            "program",
            "measured ms",
            "recorded ms",
            "error %",
            "replayed ms",
            "error %",
            "representatives ms",
            "error %",
            "trace B",
            "log B",
            "replay s",
        ],
    );
    let (mut recorded_errors, mut replayed_errors, mut rep_errors) =
        (Vec::new(), Vec::new(), Vec::new());
    for (name, program) in programs(setup) {
        let spans: Vec<f64> = (0..repetitions(quick))
            .map(|_| untraced_span(setup, &lib, &program))
            .collect::<Result<_, _>>()?;
        let measured = median(&spans);
        let trace = setup.scratch.join(format!(
            "replay-{}.cft",
            name.split(' ').next().unwrap_or("app")
        ));
        logged_trace(setup, &program, 2, &trace)?;
        let recorded = predict(setup, &calibration.file, &trace)?;
        let (replay_s, replayed) = replay(setup, &program, &trace, &["--rank", "0-1"])?;
        let from_replay = predict(setup, &calibration.file, &replayed)?;
        let (_, representatives) = replay(setup, &program, &trace, &["--representatives"])?;
        let from_representatives = predict(setup, &calibration.file, &representatives)?;
        recorded_errors.push(100.0 * (recorded - measured) / measured);
        replayed_errors.push(100.0 * (from_replay - measured) / measured);
        rep_errors.push(100.0 * (from_representatives - measured) / measured);
        table.push(
            vec![
                json!(name),
                round(measured / 1e6, 2),
                round(recorded / 1e6, 2),
                error(recorded, measured),
                round(from_replay / 1e6, 2),
                error(from_replay, measured),
                round(from_representatives / 1e6, 2),
                error(from_representatives, measured),
                json!(file_size(&trace)),
                json!(log_size(&trace)),
                round(replay_s, 2),
            ],
            format!(
                "conifer run -n 2 --log-messages --timing lossless -o T.cft {p}; conifer replay \
                 T.cft --rank 0-1 -- {p}; conifer sim --net net.toml T.replayed.cft",
                p = setup.shown(&program)
            ),
        );
    }
    let cell = |errors: &[f64]| {
        let (mean, max) = mean_and_max(errors);
        json!(format!("{mean} / {max}"))
    };
    table.push(
        vec![
            json!("mean / largest |error|"),
            json!(null),
            json!(null),
            cell(&recorded_errors),
            json!(null),
            cell(&replayed_errors),
            json!(null),
            cell(&rep_errors),
            json!(null),
            json!(null),
            json!(null),
        ],
        "the rows above".into(),
    );
    table.note.push_str(&format!(
        " Load average (1 min) {load_before} at the start, {} at the end.",
        load_average()
    ));
    Ok(vec![table, oversubscribed(setup)?])
}

/// Weak scaling traced oversubscribed: Jacobi with about 8,192 cells per rank at 8 ranks (a
/// 256×256 grid; 4 ranks and 181×181 under MPICH) against 2 ranks (128×128) on dedicated
/// cores.
fn oversubscribed(setup: &Setup) -> Result<Table, String> {
    let jacobi = |n: &str| {
        vec![
            setup.apps.join("jacobi").display().to_string(),
            n.to_string(),
            "1e-12".into(),
            "200".into(),
            "4".into(),
        ]
    };
    let dedicated = setup.scratch.join("weak-2.cft");
    logged_trace(setup, &jacobi("128"), 2, &dedicated)?;
    let reference = computation(setup, &dedicated)?;
    let reference = reference.iter().sum::<f64>() / reference.len().max(1) as f64;
    let crowded = setup.scratch.join("weak-8.cft");
    // MPICH busy-polls, so it is crowded at 4 ranks only: a 181×181 grid keeps about 8,192
    // cells per rank there, as 256×256 does at 8.
    let (ranks, n) = if setup.mpi == "mpich" {
        (4, "181")
    } else {
        (8, "256")
    };
    let program = jacobi(n);
    logged_trace(setup, &program, ranks, &crowded)?;
    let recorded = computation(setup, &crowded)?;
    let (_, replayed) = replay(
        setup,
        &program,
        &crowded,
        &["--rank", &format!("0-{}", ranks - 1)],
    )?;
    let replayed = computation(setup, &replayed)?;
    let mut table = Table::new(
        &format!(
            "Replay against oversubscription ({}, weak scaling)",
            setup.mpi
        ),
        &format!(
            "Jacobi, about 8,192 cells per rank at {ranks} ranks ({n}×{n}, oversubscribed on \
             this machine's cores) against 2 ranks (128×128, one core each): each rank's \
             computation as the crowded run recorded it and as its replay alone measured it, \
             against the mean computation of a rank in the dedicated 2-rank run ({} ms); \
             errors in percent of that.",
            round(reference / 1e6, 2)
        ),
        &["rank", "recorded ms", "error %", "replayed ms", "error %"],
    );
    for (r, (rec, rep)) in recorded.iter().zip(&replayed).enumerate() {
        table.push(
            vec![
                json!(r),
                round(rec / 1e6, 2),
                error(*rec, reference),
                round(rep / 1e6, 2),
                error(*rep, reference),
            ],
            format!(
                "conifer run -n {ranks} --log-messages -o T.cft {p}; conifer replay T.cft --rank \
                 0-{} -- {p}",
                ranks - 1,
                p = setup.shown(&program)
            ),
        );
    }
    Ok(table)
}
