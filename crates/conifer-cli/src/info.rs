//! `conifer info`: the preload libraries installed for each MPI, and what one of them wraps,
//! read from the library itself.

use crate::installed;
use crate::output::outln;
use std::ffi::{c_char, CStr};
use std::process::ExitCode;

/// Loads `library` (a libconifer.so) and returns the wrap report it was built with.
fn wrap_report(library: &std::path::Path) -> Result<serde_json::Value, String> {
    let path = std::ffi::CString::new(library.as_os_str().as_encoded_bytes())
        .map_err(|_| "library path contains a NUL byte".to_string())?;
    // SAFETY: dlopen/dlsym with valid C strings; the symbol is `extern "C" fn() -> *const c_char`
    // returning a static NUL-terminated string.
    unsafe {
        let handle = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if handle.is_null() {
            let why = CStr::from_ptr(libc::dlerror())
                .to_string_lossy()
                .into_owned();
            return Err(format!("cannot load {}: {why}", library.display()));
        }
        let symbol = libc::dlsym(handle, c"conifer_wrap_report".as_ptr());
        if symbol.is_null() {
            return Err(format!(
                "{} is not a Conifer preload library",
                library.display()
            ));
        }
        let report: extern "C" fn() -> *const c_char = std::mem::transmute(symbol);
        let text = CStr::from_ptr(report()).to_string_lossy().into_owned();
        serde_json::from_str(&text).map_err(|e| format!("wrap report unreadable: {e}"))
    }
}

/// Prints the installed preload libraries and the wrap report of the one for `mpi` (by
/// default the MPI this conifer was built for). With `json`, the wrap report gains an
/// `installed` object: MPI → library path (null when not built).
pub fn print(json: bool, mpi: Option<&str>) -> Result<ExitCode, String> {
    let mut out = String::new();
    let result = print_into(&mut out, json, mpi);
    crate::output::emit(&out)?;
    result
}

/// Writes what [`print()`] prints into `out`.
fn print_into(out: &mut String, json: bool, mpi: Option<&str>) -> Result<ExitCode, String> {
    let mpi = match mpi {
        Some(m) => installed::check_mpi(m)?,
        None => installed::BUILT_FOR_MPI,
    };
    let mut libraries = serde_json::Map::new();
    for m in installed::MPIS {
        let path = installed::find(m, "libconifer.so")?;
        libraries.insert(
            m.to_string(),
            path.map_or(serde_json::Value::Null, |p| {
                let p = std::fs::canonicalize(&p).unwrap_or(p);
                serde_json::Value::String(p.display().to_string())
            }),
        );
    }
    let mut report = wrap_report(&installed::preload_library(mpi)?)?;
    if json {
        report["installed"] = serde_json::Value::Object(libraries);
        outln!(
            out,
            "{}",
            serde_json::to_string_pretty(&report).expect("JSON value prints")
        );
        return Ok(ExitCode::SUCCESS);
    }
    for (m, path) in &libraries {
        outln!(
            out,
            "{:<17} {}",
            format!("preload ({m})"),
            path.as_str().unwrap_or("not built")
        );
    }
    let count = |key: &str| report[key].as_u64().unwrap_or(0);
    let list = |key: &str| report[key].as_array().map(Vec::len).unwrap_or(0);
    outln!(
        out,
        "built for         {}",
        report["mpi"].as_str().unwrap_or("?")
    );
    outln!(
        out,
        "MPI library       {}",
        report["library"].as_str().unwrap_or("?")
    );
    outln!(out,
        "C wrappers        {} of the library's {} exported MPI_* functions ({} without a PMPI_ entry)",
        count("c_wrapped"),
        count("library_mpi_functions"),
        list("c_not_wrapped")
    );
    outln!(
        out,
        "Fortran wrappers  {} procedures x 4 manglings = {} symbols",
        count("fortran_wrapped"),
        count("fortran_symbols")
    );
    Ok(ExitCode::SUCCESS)
}
