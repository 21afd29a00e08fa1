//! What recording call sites by default costs (programs built with `-g` record each call's
//! return address unless `--no-callsites`): recorder instructions per call (callgrind, which
//! the host's load does not change) and trace bytes, with and without call sites, on the
//! micro benchmark's point-to-point loop built with `-g`; and trace bytes of LAMMPS peptide
//! (Debian's build has no `-g`, so there `--callsites` asks for them).

use crate::cost_suite::{run_under_callgrind_with, Program};
use crate::measure::{ns_per_iter, repetitions, round};
use crate::report::{s, Table};
use crate::runner::{installed, median, Setup};
use serde_json::json;

/// The trace the last traced run wrote: its bytes and its call sites (`profile --json`).
fn trace_facts(setup: &Setup) -> Result<(u64, usize), String> {
    let bytes = setup.traced_stats()?["file_bytes"]
        .as_u64()
        .ok_or("stats without file_bytes")?;
    let out = std::process::Command::new(setup.bin.join("conifer"))
        .args(["profile", "--json"])
        .arg(setup.scratch.join("bench.cft"))
        .output()
        .map_err(|e| e.to_string())?;
    let profile: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("profile --json: {e}"))?;
    let sites = if profile["sites_are"] == "call sites" {
        profile["call_sites"].as_array().map_or(0, Vec::len)
    } else {
        0
    };
    Ok((bytes, sites))
}

/// `cmd` with `conifer exec` options `options`.
fn with_options(mut cmd: Vec<String>, options: &[&str]) -> Vec<String> {
    if let Some(exec) = cmd.iter().position(|a| a == "exec") {
        cmd.splice(exec + 1..exec + 1, options.iter().map(|o| o.to_string()));
    }
    cmd
}

/// Median traced time per call of the micro `p2p` loop (5 calls an iteration) with `conifer
/// exec` options `with` and `without`, runs interleaved.
fn ns_per_call(setup: &Setup, micro: &str, quick: bool) -> Result<[f64; 2], String> {
    let iterations = if quick { "20000" } else { "100000" };
    let program = [micro.to_string(), "p2p".into(), iterations.into()];
    let mut samples = [Vec::new(), Vec::new()];
    for _ in 0..repetitions(quick) {
        for (i, options) in [&[][..], &["--no-callsites"][..]].iter().enumerate() {
            let cmd = with_options(setup.command(2, true, false, &program), options);
            samples[i].push(ns_per_iter(&setup.run(&cmd, true)?)? / 5.0);
        }
    }
    Ok([median(&samples[0]), median(&samples[1])])
}

/// The cost of call sites: one row per (program, with or without call sites).
pub fn callsite_cost(setup: &Setup, quick: bool) -> Result<Table, String> {
    let mut table = Table::new(
        &format!("Call sites by default: cost ({})", setup.mpi),
        "Programs built with -g record each call's return address by default. Recorder Ir/call: \
         instructions in libconifer (plus what libc and the loader ran beyond the untraced \
         run) per call, by callgrind, summed over ranks; call sites: rows of `profile` (0: \
         the trace recorded none); traced ns/call: the p2p loop's time per call as micro prints it, median \
         of interleaved runs. LAMMPS (no -g): bytes only, --callsites against none.",
        &[
            "program",
            "call sites recorded",
            "calls",
            "call sites",
            "trace bytes",
            "recorder Ir/call",
            "traced ns/call (median)",
        ],
    );
    if !installed("/usr/bin/valgrind") {
        return Err("valgrind is not installed (scripts/setup.sh installs it)".into());
    }
    let micro = setup.bench_apps.join("micro_g").display().to_string();
    let iterations = if quick { "20000" } else { "100000" };
    let program = Program::new(
        "micro p2p loop (-g)",
        2,
        &[micro.as_str(), "p2p", iterations],
    );
    let objects = ["libconifer", "libc.so", "ld-linux"];
    let (_, plain_in, _) = run_under_callgrind_with(setup, &program, false, &[], &objects)?;
    let ns = ns_per_call(setup, &micro, quick)?;
    let runs = [(&[][..], "yes (default)"), (&["--no-callsites"][..], "no")];
    for ((options, label), ns) in runs.into_iter().zip(ns) {
        let (_, traced_in, command) =
            run_under_callgrind_with(setup, &program, true, options, &objects)?;
        let calls = setup.traced_calls()?.max(1);
        let (bytes, sites) = trace_facts(setup)?;
        let recorder =
            traced_in[0] + (traced_in[1] + traced_in[2]).saturating_sub(plain_in[1] + plain_in[2]);
        table.push(
            vec![
                s("micro p2p loop (-g)"),
                s(label),
                json!(calls),
                json!(sites),
                json!(bytes),
                round(recorder as f64 / calls as f64, 0),
                round(ns, 1),
            ],
            command,
        );
    }
    if setup.mpi == "openmpi" && installed("/usr/bin/lmp") {
        let dir = "/usr/share/lammps/examples/peptide";
        for file in ["in.peptide", "data.peptide"] {
            std::fs::copy(format!("{dir}/{file}"), setup.scratch.join(file))
                .map_err(|e| format!("cannot copy {file}: {e}"))?;
        }
        let lmp = ["lmp".to_string(), "-in".into(), "in.peptide".into()];
        for (option, label) in [(Some("--callsites"), "yes (--callsites)"), (None, "no")] {
            let cmd = with_options(setup.command(4, true, false, &lmp), &Vec::from_iter(option));
            setup.run(&cmd, true)?;
            let (bytes, sites) = trace_facts(setup)?;
            table.push(
                vec![
                    s("LAMMPS peptide"),
                    s(label),
                    json!(setup.traced_calls()?),
                    json!(sites),
                    json!(bytes),
                    s("-"),
                    s("-"),
                ],
                setup.shown(&cmd),
            );
        }
    }
    Ok(table)
}
