//! `conifer cc|cxx|fc|tree`: run `conifer-static` (the LLVM-based static pass, built as a
//! separate binary so that this one needs no LLVM), found as [`crate::installed`] finds
//! Conifer's files.

use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

/// Replaces this process with `conifer-static COMMAND ARGS...`; the MPI defaults to the one
/// this conifer is built for unless `CONIFER_MPI` or `--mpi` says otherwise.
pub fn exec(command: &str, args: &[String]) -> Result<ExitCode, String> {
    let mpi = match std::env::var("CONIFER_MPI") {
        Ok(m) if !m.is_empty() => crate::installed::check_mpi(&m)?,
        _ => crate::installed::BUILT_FOR_MPI,
    };
    let tool = crate::installed::find(mpi, "conifer-static")?.ok_or_else(|| {
        format!(
            "conifer-static for {mpi} not found (build it with `cargo build --release -p conifer-static`, which needs LLVM 19 from scripts/setup.sh)"
        )
    })?;
    let mut cmd = Command::new(&tool);
    cmd.arg(command).args(args).env("CONIFER_MPI", mpi);
    let error = cmd.exec();
    Err(format!("cannot run {}: {error}", tool.display()))
}
