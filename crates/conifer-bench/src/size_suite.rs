//! Trace size of every test app against the number of ranks: bytes, distinct grammars and
//! bytes per section, so a trace that grows with ranks shows where.

use crate::report::Table;
use crate::runner::Setup;
use serde_json::{json, Value};

/// The test apps the table covers, each with the rank counts it accepts among `counts`.
fn cases(counts: &[u32]) -> Vec<(&'static str, Vec<u32>)> {
    let apps = [
        "stencil2d",
        "stencil2d_f",
        "stencil3d",
        "mg",
        "ring",
        "ring_f",
        "waitany",
        "comms",
        "datatypes",
        "persistent",
        "onesided",
        "mpiio",
        "heapbuf",
        "inplace_f",
        "reduce0",
        "ep",
        "ft",
        "cg",
        "butterfly",
        "torus",
        "randpeers",
    ];
    let power_of_four = |n: u32| n.is_power_of_two() && n.trailing_zeros().is_multiple_of(2);
    apps.iter()
        .map(|&app| {
            let accepted = counts
                .iter()
                .copied()
                .filter(|&n| match app {
                    // q × q grids with q a power of two; butterflies need a power of two.
                    "cg" => power_of_four(n),
                    "butterfly" => n.is_power_of_two(),
                    _ => true,
                })
                .collect();
            (app, accepted)
        })
        .collect()
}

/// Sections and their bytes, compactly (`TIME=118 SIGS=66 ...`), largest first.
fn sections(stats: &Value) -> String {
    let mut list: Vec<(String, u64)> = stats["bytes_by_section"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default();
    list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let parts: Vec<String> = list.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.join(" ")
}

/// One traced run of every test app at each rank count (Open MPI: 4, 9, 16, 36, 64; quick or
/// MPICH, which busy-polls: fewer), 20 iterations.
pub fn against_ranks(setup: &Setup, quick: bool) -> Result<Table, String> {
    let counts: &[u32] = match (setup.mpi.as_str(), quick) {
        ("openmpi", false) => &[4, 9, 16, 36, 64],
        ("openmpi", true) => &[4, 16],
        _ => &[4],
    };
    let mut table = Table::new(
        &format!("Trace size of every test app against ranks ({})", setup.mpi),
        "One traced run of 20 iterations each. A pattern's trace should stay flat once every \
         behaviour it has is present; sections show what grows when it does not.",
        &[
            "app",
            "ranks",
            "trace bytes",
            "distinct grammars",
            "signatures",
            "sections",
        ],
    );
    for (app, ranks) in cases(counts) {
        for n in ranks {
            let mut program = vec![setup.apps.join(app).display().to_string(), "20".into()];
            if app == "mpiio" {
                program.push(setup.scratch.display().to_string());
            }
            let cmd = setup.command(n, true, false, &program);
            let shown = setup.shown(&cmd);
            let row = setup.run(&cmd, true).and_then(|run| {
                let stats = setup.traced_stats()?;
                Ok(vec![
                    json!(app),
                    json!(n),
                    json!(run.trace_bytes),
                    stats["unique_grammars"].clone(),
                    stats["signatures"].clone(),
                    json!(sections(&stats)),
                ])
            });
            match row {
                Ok(cells) => table.push(cells, shown),
                Err(why) => table.push(
                    vec![
                        json!(app),
                        json!(n),
                        json!("failed"),
                        json!(null),
                        json!(null),
                        json!(why),
                    ],
                    shown,
                ),
            }
        }
    }
    Ok(table)
}
