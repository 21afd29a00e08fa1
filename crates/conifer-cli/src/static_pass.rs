//! `conifer cc|cxx|fc|tree`: run `conifer-static` (the LLVM-based static pass, built as a
//! separate binary so that this one needs no LLVM) from the directory of this executable.

use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

/// Replaces this process with `conifer-static COMMAND ARGS...`; the MPI defaults to the one
/// this conifer is built for unless `CONIFER_MPI` or `--mpi` says otherwise.
pub fn exec(command: &str, args: &[String]) -> Result<ExitCode, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot locate the conifer binary: {e}"))?;
    let dir = exe.parent().unwrap_or(std::path::Path::new("."));
    let tool = dir.join("conifer-static");
    if !tool.is_file() {
        return Err(format!(
            "conifer-static not found next to {} (build it with `cargo build --release -p conifer-static`, which needs LLVM 19 from scripts/setup.sh)",
            exe.display()
        ));
    }
    let mut cmd = Command::new(&tool);
    cmd.arg(command).args(args);
    if std::env::var_os("CONIFER_MPI").is_none() {
        cmd.env("CONIFER_MPI", env!("CONIFER_BUILT_FOR_MPI"));
    }
    let error = cmd.exec();
    Err(format!("cannot run {}: {error}", tool.display()))
}
