//! TODO
use std::path::Path;
use std::process::ExitCode;
pub fn run(_k: &str, _f: &Path, _o: &Path, _s: crate::matrix::Select) -> Result<ExitCode, String> {
    Err("todo".into())
}
