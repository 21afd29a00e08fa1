//! The benchmark suites: per-call overhead, test-app wall time, trace size against ranks and
//! iterations, packaged real programs, and peak memory per rank.

use crate::measure::{micro_loops, ns_per_iter, repetitions, round};
use crate::report::{s, Table};
use crate::runner::{installed, load_average, median, Setup};
use serde_json::{json, Value};

/// Interleaved samples of one program, untraced and traced.
struct Samples<T> {
    plain: Vec<T>,
    traced: Vec<T>,
    /// The traced command, as shown in the report.
    command: String,
    /// Size of the trace the last traced run wrote.
    trace_bytes: Option<u64>,
}

/// Runs untraced and traced alternately `reps` times, measuring each run with `measure`.
fn interleaved<T>(
    setup: &Setup,
    ranks: u32,
    program: &[String],
    reps: usize,
    mut measure: impl FnMut(&crate::runner::RunResult) -> Result<T, String>,
) -> Result<Samples<T>, String> {
    let plain_cmd = setup.command(ranks, false, false, program);
    let traced_cmd = setup.command(ranks, true, false, program);
    let mut samples = Samples {
        plain: Vec::new(),
        traced: Vec::new(),
        command: setup.shown(&traced_cmd),
        trace_bytes: None,
    };
    for _ in 0..reps {
        samples.plain.push(measure(&setup.run(&plain_cmd, false)?)?);
        let traced = setup.run(&traced_cmd, true)?;
        samples.trace_bytes = traced.trace_bytes;
        samples.traced.push(measure(&traced)?);
    }
    Ok(samples)
}

/// A wall-time row: `labels`, then untraced and traced medians, their ratio, trace bytes and calls.
fn wall_time_row(
    setup: &Setup,
    table: &mut Table,
    mut labels: Vec<Value>,
    ranks: u32,
    program: &[String],
    quick: bool,
) -> Result<(), String> {
    let samples = interleaved(setup, ranks, program, repetitions(quick), |r| Ok(r.seconds))?;
    let (p, t) = (median(&samples.plain), median(&samples.traced));
    labels.extend([
        round(p, 3),
        round(t, 3),
        round(t / p, 3),
        json!(samples.trace_bytes),
        json!(setup.traced_calls()?),
    ]);
    table.push(labels, samples.command);
    Ok(())
}

fn per_call_overhead(setup: &Setup, quick: bool) -> Result<Table, String> {
    let mut table = Table::new(
        &format!("Per-call overhead ({})", setup.mpi),
        "Tight loops on 2 ranks; loop time per iteration measured inside the program (slowest rank). \
         Overhead per call = median over interleaved runs of (traced - untraced) / MPI calls per iteration.",
        &["loop", "MPI calls/iter", "iterations", "untraced ns/iter", "traced ns/iter", "overhead ns/call"],
    );
    for (kind, calls, iterations) in micro_loops(quick, false) {
        let micro = setup.bench_apps.join("micro").display().to_string();
        let program = vec![micro, kind.to_string(), iterations.to_string()];
        let samples = interleaved(setup, 2, &program, repetitions(quick), ns_per_iter)?;
        let diffs: Vec<f64> = samples
            .plain
            .iter()
            .zip(&samples.traced)
            .map(|(p, t)| (t - p) / calls as f64)
            .collect();
        table.push(
            vec![
                s(kind),
                json!(calls),
                json!(iterations),
                round(median(&samples.plain), 1),
                round(median(&samples.traced), 1),
                round(median(&diffs), 1),
            ],
            samples.command,
        );
    }
    Ok(table)
}

/// Test apps and their arguments for the wall-time table.
fn test_apps(setup: &Setup) -> Vec<(&'static str, String)> {
    let iterations = if setup.mpi == "mpich" { "10" } else { "100" };
    [
        "stencil2d",
        "stencil2d_f",
        "stencil3d",
        "ring",
        "ring_f",
        "waitany",
        "comms",
        "datatypes",
        "persistent",
        "onesided",
        "mpiio",
        "threads",
    ]
    .into_iter()
    .map(|a| (a, iterations.to_string()))
    .collect()
}

fn app_wall_time(setup: &Setup, quick: bool) -> Result<Table, String> {
    let mut table = Table::new(
        &format!("Test apps: wall time with and without Conifer ({}, 4 ranks)", setup.mpi),
        "Whole-launch wall time (mpirun to exit), median of interleaved runs; ratio = traced / untraced.",
        &["app", "iterations", "untraced s", "traced s", "ratio", "trace bytes", "calls"],
    );
    for (app, iterations) in test_apps(setup) {
        let program = vec![
            setup.apps.join(app).display().to_string(),
            iterations.clone(),
        ];
        let labels = vec![s(app), s(&iterations)];
        wall_time_row(setup, &mut table, labels, 4, &program, quick)?;
    }
    Ok(table)
}

/// Rank 0's `MPI_Finalize` time as the C test apps print it (`INFO rank=0 finalize_ms=`).
fn finalize_ms(result: &crate::runner::RunResult) -> Option<f64> {
    result.stdout.lines().find_map(|l| {
        l.strip_prefix("INFO rank=0 finalize_ms=")?
            .trim()
            .parse()
            .ok()
    })
}

/// What the scaling table keeps of one run.
struct FinalizeSample {
    finalize_ms: Option<f64>,
    /// Slowest rank's merge time and largest merge memory rise (traced runs).
    merge: Option<(f64, u64)>,
}

fn finalize_sample(r: &crate::runner::RunResult) -> Result<FinalizeSample, String> {
    let merge = (!r.merge.is_empty()).then(|| {
        let ms = r.merge.iter().map(|m| m.ms).fold(0.0, f64::max);
        let kib = r.merge.iter().map(|m| m.kib).max().unwrap_or(0);
        (ms, kib)
    });
    Ok(FinalizeSample {
        finalize_ms: finalize_ms(r),
        merge,
    })
}

/// The scaling cases: (app, ranks, iterations).
fn scaling_cases(setup: &Setup, quick: bool) -> Vec<(&'static str, u32, &'static str)> {
    let mpich = setup.mpi == "mpich";
    // MPICH busy-polls: oversubscribed beyond 9 ranks it is 100x slower.
    let ranks: &[u32] = match (mpich, quick) {
        (true, _) => &[4, 9],
        (false, true) => &[4, 16, 64],
        (false, false) => &[4, 9, 16, 27, 64],
    };
    let apps: Vec<&'static str> = if quick {
        vec!["stencil2d", "stencil3d"]
    } else {
        test_apps(setup).into_iter().map(|(a, _)| a).collect()
    };
    let iterations = if mpich { "10" } else { "100" };
    let mut cases = Vec::new();
    for app in apps {
        for &n in ranks {
            cases.push((app, n, iterations));
        }
    }
    let longer: &[&str] = match (mpich, quick) {
        (true, _) => &["100", "1000"],
        (false, true) => &["1000"],
        (false, false) => &["1000", "10000"],
    };
    for app in ["stencil2d", "stencil3d"] {
        for &it in longer {
            cases.push((app, 4, it));
        }
    }
    cases
}

fn trace_size_scaling(setup: &Setup, quick: bool) -> Result<Table, String> {
    let mut table = Table::new(
        &format!(
            "Trace size, MPI_Finalize time and merge cost against ranks and iterations ({})",
            setup.mpi
        ),
        "Trace bytes should follow the number of distinct behaviours, not ranks or iterations. \
         Finalize ms is rank 0's, measured by the app (C apps only; median of interleaved runs); \
         merge ms and merge KiB are the slowest rank's merge time and the largest rise of a \
         rank's resident memory during the merge, as the tracer reports them.",
        &[
            "app",
            "ranks",
            "iterations",
            "trace bytes",
            "calls",
            "untraced Finalize ms",
            "traced Finalize ms",
            "merge ms",
            "merge KiB",
        ],
    );
    for (app, n, it) in scaling_cases(setup, quick) {
        let program = vec![setup.apps.join(app).display().to_string(), it.to_string()];
        let reps = if quick { 1 } else { 3 };
        let samples = match interleaved(setup, n, &program, reps, finalize_sample) {
            Ok(samples) => samples,
            Err(why) => {
                let mut cells = vec![s(app), json!(n), s(it)];
                cells.extend(std::iter::repeat_n(s("failed"), 6));
                table.push(cells, why);
                continue;
            }
        };
        let med = |v: &[FinalizeSample], f: &dyn Fn(&FinalizeSample) -> Option<f64>| {
            let values: Vec<f64> = v.iter().filter_map(f).collect();
            (!values.is_empty()).then(|| median(&values))
        };
        let finalize = |x: &FinalizeSample| x.finalize_ms;
        let merge_ms = |x: &FinalizeSample| x.merge.map(|m| m.0);
        let merge_kib = |x: &FinalizeSample| x.merge.map(|m| m.1 as f64);
        let opt = |v: Option<f64>, digits| v.map_or(Value::Null, |v| round(v, digits));
        table.push(
            vec![
                s(app),
                json!(n),
                s(it),
                json!(samples.trace_bytes),
                json!(setup.traced_calls()?),
                opt(med(&samples.plain, &finalize), 1),
                opt(med(&samples.traced, &finalize), 1),
                opt(med(&samples.traced, &merge_ms), 1),
                opt(med(&samples.traced, &merge_kib), 0),
            ],
            samples.command,
        );
    }
    Ok(table)
}

/// A packaged MPI program not written here.
struct RealProgram {
    name: &'static str,
    ranks: u32,
    command: Vec<String>,
    /// Input files it reads from its working directory: (installed file, name it reads).
    inputs: Vec<(String, &'static str)>,
}

/// Where Debian's `scalapack-mpi-test` installs the Open MPI build of ScaLAPACK's tests.
const SCALAPACK_TESTS: &str = "/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests";

/// Packaged MPI programs not written here, by MPI.
fn real_programs(setup: &Setup) -> Vec<RealProgram> {
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let program = |name, ranks, command: &[&str]| RealProgram {
        name,
        ranks,
        command: owned(command),
        inputs: Vec::new(),
    };
    let mut programs = Vec::new();
    if setup.mpi == "openmpi" {
        if installed("/usr/bin/lmp") {
            programs.push(program(
                "LAMMPS in.melt",
                4,
                &["lmp", "-in", "/usr/share/lammps/examples/melt/in.melt"],
            ));
        }
        if installed("/usr/lib/python3/dist-packages/mpi4py") {
            programs.push(program(
                "mpi4py ringtest",
                4,
                &[
                    "/usr/bin/python3",
                    "-m",
                    "mpi4py.bench",
                    "ringtest",
                    "-n",
                    "1024",
                    "-l",
                    "1000",
                ],
            ));
        }
        if installed("/usr/bin/NPopenmpi") {
            programs.push(program(
                "NetPIPE (to 64 B)",
                2,
                &["NPopenmpi", "-u", "64", "-o", "np.out"],
            ));
        }
        // Tens of thousands of distinct signatures: the recorder's worst case.
        let xdlu = format!("{SCALAPACK_TESTS}/xdlu");
        if installed(&xdlu) {
            programs.push(RealProgram {
                inputs: vec![(format!("{SCALAPACK_TESTS}/LU.dat"), "LU.dat")],
                ..program("ScaLAPACK xdlu (LU.dat)", 4, &[xdlu.as_str()])
            });
        }
        if installed("/usr/bin/hpcc") {
            programs.push(RealProgram {
                inputs: vec![(
                    "/usr/share/doc/hpcc/examples/_hpccinf.txt".into(),
                    "hpccinf.txt",
                )],
                ..program("HPCC (Debian's example input)", 4, &["hpcc"])
            });
        }
    } else if installed("/usr/bin/NPmpich2") {
        programs.push(program(
            "NetPIPE (to 64 B)",
            2,
            &["NPmpich2", "-u", "64", "-o", "np.out"],
        ));
    }
    programs
}

fn real_program_overhead(setup: &Setup, quick: bool) -> Result<Table, String> {
    let load_before = load_average();
    let mut table = Table::new(
        &format!("Real programs not written here ({})", setup.mpi),
        &format!(
            "Debian-packaged MPI programs; whole-launch wall time, median of interleaved runs. \
             Load average (1, 5, 15 min) when the table began: {load_before}."
        ),
        &[
            "program",
            "ranks",
            "untraced s",
            "traced s",
            "ratio",
            "trace bytes",
            "calls",
        ],
    );
    for program in real_programs(setup) {
        for (installed, name) in &program.inputs {
            std::fs::copy(installed, setup.scratch.join(name))
                .map_err(|e| format!("cannot copy {installed} for {}: {e}", program.name))?;
        }
        let labels = vec![s(program.name), json!(program.ranks)];
        wall_time_row(
            setup,
            &mut table,
            labels,
            program.ranks,
            &program.command,
            quick,
        )?;
    }
    Ok(table)
}

fn peak_memory(setup: &Setup) -> Result<Table, String> {
    let mut table = Table::new(
        &format!("Peak memory per rank ({})", setup.mpi),
        "GNU time's maximum resident set size of each rank (KiB); median and maximum over ranks.",
        &[
            "app",
            "ranks",
            "iterations",
            "untraced median KiB",
            "traced median KiB",
            "untraced max KiB",
            "traced max KiB",
        ],
    );
    let stencil_iterations = if setup.mpi == "mpich" { "100" } else { "10000" };
    let micro = setup.bench_apps.join("micro").display().to_string();
    let cases = [
        (
            "stencil2d",
            4u32,
            stencil_iterations.to_string(),
            vec![setup.apps.join("stencil2d").display().to_string()],
        ),
        // A 1,000,000-call run: memory must follow distinct signatures, not calls.
        (
            "micro comm_rank",
            2,
            "1000000".to_string(),
            vec![micro, "comm_rank".to_string()],
        ),
    ];
    for (name, ranks, iterations, mut program) in cases {
        program.push(iterations.clone());
        let plain = setup.run(&setup.command(ranks, false, true, &program), false)?;
        let cmd = setup.command(ranks, true, true, &program);
        let traced = setup.run(&cmd, true)?;
        let stats = |v: &[u64]| {
            let f: Vec<f64> = v.iter().map(|&k| k as f64).collect();
            (median(&f), f.iter().cloned().fold(0.0, f64::max))
        };
        if plain.peak_kib.len() != ranks as usize || traced.peak_kib.len() != ranks as usize {
            return Err(
                "GNU time did not report every rank's memory (is /usr/bin/time installed?)".into(),
            );
        }
        let (pm, px) = stats(&plain.peak_kib);
        let (tm, tx) = stats(&traced.peak_kib);
        table.push(
            vec![
                s(name),
                json!(ranks),
                s(&iterations),
                json!(pm),
                json!(tm),
                json!(px),
                json!(tx),
            ],
            setup.shown(&cmd),
        );
    }
    Ok(table)
}

/// One suite: produces its table or says why it could not.
type Suite<'a> = &'a dyn Fn() -> Result<Table, String>;

/// Every suite, in report order. A suite that fails is reported as a table saying why, and
/// the others still run.
pub fn all(setup: &Setup, quick: bool, only: Option<&str>) -> Vec<Table> {
    let suites: [(&str, Suite); 13] = [
        ("Per-call overhead", &|| per_call_overhead(setup, quick)),
        ("Trace tree vs grammar: per-call overhead", &|| {
            crate::tree_suite::overhead(setup, quick)
        }),
        ("Trace tree vs grammar: size, merge and memory", &|| {
            crate::tree_suite::scaling(setup, quick)
        }),
        ("Untraced speed of conifer cc/fc builds", &|| {
            crate::build_suite::untraced_speed(setup, quick)
        }),
        ("Test apps", &|| app_wall_time(setup, quick)),
        ("Real programs", &|| real_program_overhead(setup, quick)),
        ("Trace size and MPI_Finalize time", &|| {
            trace_size_scaling(setup, quick)
        }),
        ("Peak memory per rank", &|| peak_memory(setup)),
        ("Recorder instructions per call", &|| {
            crate::cost_suite::instructions_per_call(setup, quick)
        }),
        ("Memory at the end of the run", &|| {
            crate::cost_suite::end_of_run_memory(setup)
        }),
        ("Trace size of every test app against ranks", &|| {
            crate::size_suite::against_ranks(setup, quick)
        }),
        ("Reading a large trace", &|| {
            crate::readers_suite::readers_table(setup, quick)
        }),
        ("NPB flatness", &|| {
            crate::npb_suite::npb_flatness(setup, quick)
        }),
    ];
    let failed = |title: &str, why: String| {
        eprintln!("  {title} failed: {why}");
        Table::new(
            &format!("{title} ({})", setup.mpi),
            &format!("FAILED: {why}"),
            &[],
        )
    };
    let chosen = |title: &str| only.is_none_or(|o| title.to_lowercase().contains(o));
    let mut tables: Vec<Table> = suites
        .into_iter()
        .filter(|(title, _)| chosen(title))
        .map(|(title, run)| run().unwrap_or_else(|why| failed(title, why)))
        .collect();
    let title = "Prediction against measurement";
    if chosen(title) {
        match crate::prediction_suite::prediction_tables(setup, quick) {
            Ok(more) => tables.extend(more),
            Err(why) => tables.push(failed(title, why)),
        }
    }
    let title = "Scale: merge and sim";
    if chosen(title) {
        match crate::scale_suite::scale_tables(setup, quick) {
            Ok(more) => tables.extend(more),
            Err(why) => tables.push(failed(title, why)),
        }
    }
    let title = "Slicing";
    if chosen(title) {
        match crate::slicing_suite::slicing_tables(setup, quick) {
            Ok(more) => tables.extend(more),
            Err(why) => tables.push(failed(title, why)),
        }
    }
    let title = "Prediction from replay";
    if chosen(title) {
        match crate::replay_suite::replay_tables(setup, quick) {
            Ok(more) => tables.extend(more),
            Err(why) => tables.push(failed(title, why)),
        }
    }
    tables
}
