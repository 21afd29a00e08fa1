//! TODO
use std::path::Path;
use std::process::ExitCode;
pub fn run(_a: &Path, _b: &Path, _j: bool) -> Result<ExitCode, String> {
    Err("todo".into())
}
