//! `conifer proxy FILE.cft -o DIR [--compute none|sleep|spin]`: writes a C proxy application
//! and its Makefile; `conifer proxy --check FILE.cft`: builds it in a temporary directory,
//! traces it on the same ranks with this conifer, and compares the two traces call by call.

use conifer_proxy::{Compute, Options, Proxy};
use conifer_trace::open as load;
use conifer_trace::Trace;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Differences reported per rank before moving on to the next.
const DIFFERENCES_PER_RANK: usize = 5;

/// Runs the command.
pub fn run(
    file: &Path,
    output: Option<&Path>,
    compute: &str,
    check: bool,
    against: Option<&Path>,
) -> Result<ExitCode, String> {
    let trace = load(file)?;
    if check && trace.meta.partial {
        // Its proxy would stop where the run stopped, inside an unfinished exchange, and
        // hang or die in the MPI's abort: there is nothing to compare a run with.
        return Err(format!(
            "{}: {}; --check needs a trace of a run that finished (conifer proxy -o DIR still writes its proxy)",
            file.display(),
            crate::stats::partial_summary(&trace.meta)
        ));
    }
    let compute = match compute {
        "sleep" => Compute::Sleep,
        "spin" => Compute::Spin,
        _ => Compute::None,
    };
    let proxy = conifer_proxy::generate(&trace, &Options { compute })?;
    for note in &proxy.notes {
        eprintln!("conifer proxy: not reproduced: {note}");
    }
    if !check {
        let dir = output.ok_or("give -o DIR, or --check")?;
        write(&proxy, dir)?;
        println!(
            "{}: proxy.c ({} lines for {} calls: {} behaviour classes, {} functions for grammar rules and tree vertices, {} numbers in data tables) and Makefile; build with make -C {}",
            dir.display(),
            proxy.source.lines().count(),
            proxy.calls,
            proxy.classes,
            proxy.functions,
            proxy.table_values,
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(other) = against {
        return report(&trace, &load(other)?, &proxy, other);
    }
    let mpi = env!("CONIFER_BUILT_FOR_MPI");
    if trace.meta.mpi != mpi {
        return Err(format!(
            "{}: recorded with {}, this conifer runs {mpi}; check it with the conifer built for {}",
            file.display(),
            trace.meta.mpi,
            trace.meta.mpi
        ));
    }
    let dir = output.map_or_else(scratch_dir, Path::to_path_buf);
    write(&proxy, &dir)?;
    // The proxy runs in `dir`: name it (and its trace) from anywhere.
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    build(&dir)?;
    let traced = dir.join("proxy.cft");
    let _ = std::fs::remove_file(&traced);
    let me =
        std::env::current_exe().map_err(|e| format!("cannot locate the conifer binary: {e}"))?;
    let out = Command::new("timeout")
        .arg("600")
        .arg(me)
        .args(["run", "-n", &trace.meta.ranks.to_string(), "-o"])
        .arg(&traced)
        .arg(dir.join("proxy"))
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("cannot run the proxy: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the proxy failed ({}) in {}:\n{}",
            out.status,
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let matched = report(&trace, &load(&traced)?, &proxy, &dir)?;
    if output.is_none() && matched == ExitCode::SUCCESS {
        // A temporary directory is kept only to look into a proxy that differs.
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(matched)
}

/// Compares the proxy's trace `replayed` (found in `place`) with `trace`, prints the
/// differences and says whether there were none.
fn report(
    trace: &Trace,
    replayed: &Trace,
    proxy: &Proxy,
    place: &Path,
) -> Result<ExitCode, String> {
    let differences = conifer_proxy::compare::compare(trace, replayed, DIFFERENCES_PER_RANK)?;
    for d in &differences {
        println!("rank {} call {}: {}", d.rank, d.index, d.why);
    }
    println!("note: {}", conifer_proxy::compare::PLACEMENT_NOTE);
    if differences.is_empty() {
        println!(
            "proxy matches: {} calls on {} ranks ({} lines of C; {})",
            proxy.calls,
            trace.meta.ranks,
            proxy.source.lines().count(),
            place.display()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        println!(
            "proxy differs from the original ({} differences shown; proxy in {})",
            differences.len(),
            place.display()
        );
        Ok(ExitCode::FAILURE)
    }
}

/// Writes `proxy.c` and `Makefile` into `dir`.
fn write(proxy: &Proxy, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, text) in [("proxy.c", &proxy.source), ("Makefile", &proxy.makefile)] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// A fresh directory under the system's temporary directory.
fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("conifer-proxy-{}", std::process::id()))
}

/// Builds the proxy with its Makefile.
fn build(dir: &Path) -> Result<(), String> {
    let out = Command::new("make")
        .args(["-s", "-C"])
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run make: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "building the proxy in {} failed:\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
