//! TODO
use std::path::Path;
use std::process::ExitCode;
pub fn run(_f: &Path, _o: &Path) -> Result<ExitCode, String> {
    Err("todo".into())
}
