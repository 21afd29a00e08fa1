//! What the recorder costs, measured without the host's noise: instructions per MPI call
//! counted by callgrind over whole runs (traced against untraced), and each rank's memory at
//! the end of the run against its peak while recording (the tracer's merge report).

use crate::measure::round;
use crate::report::{s, Table};
use crate::runner::{installed, Setup};
use serde_json::json;
use std::collections::HashMap;
use std::path::Path;

/// Where Debian's `scalapack-mpi-test` installs the Open MPI build of ScaLAPACK's tests.
const SCALAPACK_TESTS: &str = "/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests";
/// Debian's example input of HPCC.
const HPCC_INPUT: &str = "/usr/share/doc/hpcc/examples/_hpccinf.txt";

/// A program of these tables: a name, its rank count, its command line and the input files it
/// reads from its working directory (installed file, name it reads).
pub(crate) struct Program {
    name: &'static str,
    ranks: u32,
    command: Vec<String>,
    inputs: Vec<(String, &'static str)>,
}

impl Program {
    pub(crate) fn new(name: &'static str, ranks: u32, command: &[&str]) -> Program {
        Program {
            name,
            ranks,
            command: command.iter().map(|c| c.to_string()).collect(),
            inputs: Vec::new(),
        }
    }

    fn reading(mut self, installed: &str, name: &'static str) -> Program {
        self.inputs.push((installed.to_string(), name));
        self
    }

    /// Copies its inputs into the scratch directory.
    fn prepare(&self, setup: &Setup) -> Result<(), String> {
        for (installed, name) in &self.inputs {
            std::fs::copy(installed, setup.scratch.join(name))
                .map_err(|e| format!("cannot copy {installed} for {}: {e}", self.name))?;
        }
        Ok(())
    }
}

/// The programs of the instruction table (Open MPI only: the packaged programs are built
/// against it): a call-bound library, a molecular-dynamics code, and the tightest loop.
fn instruction_programs(setup: &Setup, quick: bool) -> Vec<Program> {
    let mut programs = Vec::new();
    let micro = setup.bench_apps.join("micro").display().to_string();
    let iterations = if quick { "20000" } else { "100000" };
    programs.push(Program::new(
        "micro p2p loop",
        2,
        &[micro.as_str(), "p2p", iterations],
    ));
    if setup.mpi != "openmpi" {
        return programs;
    }
    let xdlu = format!("{SCALAPACK_TESTS}/xdlu");
    if installed(&xdlu) {
        programs.push(
            Program::new("ScaLAPACK xdlu (LU.dat)", 4, &[xdlu.as_str()])
                .reading(&format!("{SCALAPACK_TESTS}/LU.dat"), "LU.dat"),
        );
    }
    if installed("/usr/bin/lmp") {
        programs.push(Program::new(
            "LAMMPS in.melt",
            2,
            &["lmp", "-in", "/usr/share/lammps/examples/melt/in.melt"],
        ));
    }
    if !quick && installed("/usr/bin/hpcc") && installed(HPCC_INPUT) {
        programs.push(
            Program::new("HPCC (Debian's example input)", 4, &["hpcc"])
                .reading(HPCC_INPUT, "hpccinf.txt"),
        );
    }
    programs
}

/// Instructions of one callgrind output file: its total, and the self cost of each object.
#[derive(Default)]
struct Profile {
    total: u64,
    by_object: HashMap<String, u64>,
}

/// Reads a callgrind output file (name compression and `calls=` lines understood: the cost
/// line after a `calls=` line is the call's inclusive cost, not self cost).
fn read_profile(path: &Path) -> Result<Profile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut profile = Profile::default();
    let mut names: HashMap<String, String> = HashMap::new();
    let mut object = String::new();
    let mut positions = 1;
    let mut call_cost_next = false;
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("positions:") {
            positions = p.split_whitespace().count();
        } else if let Some(t) = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))
        {
            profile.total = t
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
        } else if let Some(o) = line.strip_prefix("ob=") {
            object = resolve(&mut names, o);
        } else if let Some(o) = line.strip_prefix("cob=") {
            resolve(&mut names, o);
        } else if line.starts_with("calls=") {
            call_cost_next = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)) {
            if std::mem::take(&mut call_cost_next) {
                continue;
            }
            let ir = line
                .split_whitespace()
                .nth(positions)
                .and_then(|v| v.parse::<u64>().ok());
            *profile.by_object.entry(object.clone()).or_default() += ir.unwrap_or(0);
        }
    }
    Ok(profile)
}

/// An object name in callgrind's compressed form: `(id) name` defines, `(id)` refers.
fn resolve(names: &mut HashMap<String, String>, text: &str) -> String {
    let text = text.trim();
    match text.strip_prefix('(').and_then(|t| t.split_once(')')) {
        Some((id, rest)) if !rest.trim().is_empty() => {
            names.insert(id.to_string(), rest.trim().to_string());
            rest.trim().to_string()
        }
        Some((id, _)) => names.get(id).cloned().unwrap_or_default(),
        None => text.to_string(),
    }
}

/// Instructions of one run summed over its ranks: the total, and those executed in objects
/// whose file name contains each of `objects`.
fn run_under_callgrind(
    setup: &Setup,
    program: &Program,
    traced: bool,
    objects: &[&str],
) -> Result<(u64, Vec<u64>, String), String> {
    run_under_callgrind_with(setup, program, traced, &[], objects)
}

/// [`run_under_callgrind`], the traced run given `conifer exec` options `options`.
pub(crate) fn run_under_callgrind_with(
    setup: &Setup,
    program: &Program,
    traced: bool,
    options: &[&str],
    objects: &[&str],
) -> Result<(u64, Vec<u64>, String), String> {
    let dir = setup.scratch.join("callgrind");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut tool = vec![
        "valgrind".to_string(),
        "--tool=callgrind".to_string(),
        format!("--callgrind-out-file={}/cg.%p", dir.display()),
    ];
    tool.extend(program.command.iter().cloned());
    let mut cmd = setup.command(program.ranks, traced, false, &tool);
    if let Some(exec) = cmd.iter().position(|a| a == "exec") {
        cmd.splice(exec + 1..exec + 1, options.iter().map(|o| o.to_string()));
    }
    setup.run(&cmd, traced)?;
    let mut total = 0;
    let mut in_objects = vec![0; objects.len()];
    for entry in std::fs::read_dir(&dir).map_err(|e| e.to_string())? {
        let profile = read_profile(&entry.map_err(|e| e.to_string())?.path())?;
        total += profile.total;
        for (sum, wanted) in in_objects.iter_mut().zip(objects) {
            *sum += profile
                .by_object
                .iter()
                .filter(|(name, _)| name.contains(wanted))
                .map(|(_, ir)| ir)
                .sum::<u64>();
        }
    }
    Ok((total, in_objects, setup.shown(&cmd)))
}

/// Instructions per MPI call, all-in and in the recorder's own code.
pub fn instructions_per_call(setup: &Setup, quick: bool) -> Result<Table, String> {
    let mut table = Table::new(
        &format!("Recorder instructions per call ({})", setup.mpi),
        "callgrind over whole runs, summed over ranks (instruction counts do not depend on the \
         host's load). All-in: (traced - untraced) / calls, which also counts MPI's extra \
         polling while the traced run is slower; recorder: instructions in libconifer plus \
         what libc and the loader ran beyond the untraced run, / calls. End-of-run work \
         (stream extraction, merge, encoding) included.",
        &[
            "program",
            "ranks",
            "calls",
            "untraced Ir",
            "traced Ir",
            "all-in Ir/call",
            "recorder Ir/call",
        ],
    );
    if !installed("/usr/bin/valgrind") {
        return Err("valgrind is not installed (scripts/setup.sh installs it)".into());
    }
    let objects = ["libconifer", "libc.so", "ld-linux"];
    for program in instruction_programs(setup, quick) {
        program.prepare(setup)?;
        let (plain, plain_in, _) = run_under_callgrind(setup, &program, false, &objects)?;
        let (traced, traced_in, command) = run_under_callgrind(setup, &program, true, &objects)?;
        let calls = setup.traced_calls()?.max(1);
        let recorder =
            traced_in[0] + (traced_in[1] + traced_in[2]).saturating_sub(plain_in[1] + plain_in[2]);
        table.push(
            vec![
                s(program.name),
                json!(program.ranks),
                json!(calls),
                json!(plain),
                json!(traced),
                round(traced.saturating_sub(plain) as f64 / calls as f64, 0),
                round(recorder as f64 / calls as f64, 0),
            ],
            command,
        );
    }
    Ok(table)
}

/// The programs of the end-of-run memory table: many distinct signatures, many polls, many
/// ranks whose completion order differs.
fn memory_programs(setup: &Setup) -> Vec<Program> {
    let mut programs = Vec::new();
    if setup.mpi == "openmpi" {
        let xdsyevr = format!("{SCALAPACK_TESTS}/xdsyevr");
        if installed(&xdsyevr) {
            programs.push(
                Program::new("ScaLAPACK xdsyevr (SEPR.dat)", 4, &[xdsyevr.as_str()])
                    .reading(&format!("{SCALAPACK_TESTS}/SEPR.dat"), "SEPR.dat"),
            );
        }
        if installed("/usr/bin/hpcc") && installed(HPCC_INPUT) {
            programs.push(
                Program::new("HPCC (Debian's example input)", 4, &["hpcc"])
                    .reading(HPCC_INPUT, "hpccinf.txt"),
            );
        }
    }
    let waitany = setup.apps.join("waitany").display().to_string();
    let ranks = if setup.mpi == "openmpi" { 64 } else { 4 };
    programs.push(Program::new("waitany test app", ranks, &[waitany.as_str()]));
    programs
}

/// Each rank's peak at the end of the run against its peak while recording.
pub fn end_of_run_memory(setup: &Setup) -> Result<Table, String> {
    let mut table = Table::new(
        &format!("Memory at the end of the run ({})", setup.mpi),
        "Per rank, from the tracer's merge report: the peak resident memory while recording \
         (the kernel's high-water mark when MPI_Finalize begins) and the peak during the \
         end-of-run work (stream extraction, merge, encoding; the mark reset when it begins). \
         Ratio: end-of-run peak / recording peak, worst rank.",
        &[
            "program",
            "ranks",
            "recording peak KiB (max rank)",
            "end-of-run peak KiB (max rank)",
            "worst ratio",
        ],
    );
    for program in memory_programs(setup) {
        program.prepare(setup)?;
        let cmd = setup.command(program.ranks, true, false, &program.command);
        let run = setup.run(&cmd, true)?;
        if run.merge.len() != program.ranks as usize {
            return Err(format!(
                "{}: {} of {} ranks reported their merge",
                program.name,
                run.merge.len(),
                program.ranks
            ));
        }
        let recording = run.merge.iter().map(|m| m.recording_peak_kib).max();
        let end = run.merge.iter().map(|m| m.before_kib + m.kib).max();
        let worst = run
            .merge
            .iter()
            .map(|m| (m.before_kib + m.kib) as f64 / m.recording_peak_kib.max(1) as f64)
            .fold(0.0, f64::max);
        table.push(
            vec![
                s(program.name),
                json!(program.ranks),
                json!(recording),
                json!(end),
                round(worst, 2),
            ],
            setup.shown(&cmd),
        );
    }
    Ok(table)
}
