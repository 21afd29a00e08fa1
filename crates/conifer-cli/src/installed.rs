//! Which MPI a program uses and where the matching preload library is, so one `conifer`
//! traces programs of either MPI.
//!
//! Layouts searched for `libconifer.so` (and `conifer-static`) of MPI `M`:
//! - installed (`make install PREFIX=P`): `P/bin/conifer`, `P/lib/conifer/M/`;
//! - a build tree: `target/M/release/`, beside this binary or beside its sibling build
//!   (`target/openmpi/release/conifer` finds `target/mpich/release/libconifer.so`).
//!
//! The MPI of a program: `--mpi`, else `CONIFER_MPI`, else the launcher that started this
//! rank (Open MPI sets `OMPI_COMM_WORLD_SIZE`, MPICH's Hydra `PMI_SIZE`), else the MPI
//! library the program links (`ldd`: `libmpi.so` is Open MPI, `libmpich.so` MPICH), else the
//! MPI this conifer was built for.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The MPIs Conifer supports.
pub const MPIS: [&str; 2] = ["openmpi", "mpich"];

/// The MPI this conifer is built for (`openmpi` or `mpich`).
pub const BUILT_FOR_MPI: &str = env!("CONIFER_BUILT_FOR_MPI");

/// Checks an MPI name given by the user.
pub fn check_mpi(mpi: &str) -> Result<&'static str, String> {
    MPIS.into_iter()
        .find(|m| *m == mpi)
        .ok_or_else(|| format!("unknown MPI `{mpi}`: use openmpi or mpich"))
}

/// The directory of this executable.
fn exe_dir() -> Result<PathBuf, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot locate the conifer binary: {e}"))?;
    Ok(exe.parent().unwrap_or(Path::new(".")).to_path_buf())
}

/// Where file `name` of MPI `mpi`'s build can be, most specific first.
fn candidates(mpi: &str, name: &str) -> Result<Vec<PathBuf>, String> {
    let dir = exe_dir()?;
    let mut out = vec![dir.join("../lib/conifer").join(mpi).join(name)];
    if mpi == BUILT_FOR_MPI {
        out.push(dir.join(name));
    }
    // target/<built-for>/release → target/<mpi>/release
    if let (Some(profile), Some(target)) = (dir.file_name(), dir.parent().and_then(Path::parent)) {
        out.push(target.join(mpi).join(profile).join(name));
    }
    Ok(out)
}

/// The file `name` (`libconifer.so`, `conifer-static`) built for `mpi`, if there is one.
pub fn find(mpi: &str, name: &str) -> Result<Option<PathBuf>, String> {
    Ok(candidates(mpi, name)?.into_iter().find(|p| p.is_file()))
}

/// The preload library for `mpi`: `CONIFER_LIB` when set, else the one found for `mpi`.
pub fn preload_library(mpi: &str) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("CONIFER_LIB") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "CONIFER_LIB={} does not exist; unset it or point it to libconifer.so",
                path.display()
            ))
        };
    }
    find(mpi, "libconifer.so")?.ok_or_else(|| {
        let have: Vec<&str> = MPIS
            .into_iter()
            .filter(|m| find(m, "libconifer.so").ok().flatten().is_some())
            .collect();
        format!(
            "no Conifer preload library for {mpi} (installed: {}); build it with `make build MPI={mpi}` and `make install`",
            if have.is_empty() { "none".to_string() } else { have.join(", ") }
        )
    })
}

/// The MPI a launched rank runs under, from the launcher's environment.
fn from_launcher_env() -> Option<&'static str> {
    let set = |v: &str| std::env::var_os(v).is_some();
    if set("OMPI_COMM_WORLD_SIZE") {
        Some("openmpi")
    } else if set("PMI_SIZE") || set("HYDI_CONTROL_FD") {
        Some("mpich")
    } else {
        None
    }
}

/// The MPI the executable `program` links, from `ldd` (which follows the libraries it links
/// in turn, as LAMMPS's `lmp` links MPI through `liblammps.so`).
pub fn from_binary(program: &str) -> Option<&'static str> {
    let path = which(program)?;
    let out = Command::new("ldd").arg(&path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let links = |lib: &str| text.lines().any(|l| l.trim_start().starts_with(lib));
    // MPICH also ships `libmpi.so.12`; Open MPI's is `libmpi.so.40`.
    if links("libmpich.so") || links("libmpi.so.12") {
        Some("mpich")
    } else if links("libmpi.so") {
        Some("openmpi")
    } else {
        None
    }
}

/// `program` as the shell would find it.
fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The MPI to trace `program` with, and how it was told.
pub fn mpi_of(
    program: &str,
    explicit: Option<&str>,
) -> Result<(&'static str, &'static str), String> {
    if let Some(m) = explicit {
        return Ok((check_mpi(m)?, "--mpi"));
    }
    if let Ok(m) = std::env::var("CONIFER_MPI") {
        if !m.is_empty() {
            return Ok((check_mpi(&m)?, "CONIFER_MPI"));
        }
    }
    if let Some(m) = from_launcher_env() {
        return Ok((m, "the launcher"));
    }
    if let Some(m) = from_binary(program) {
        return Ok((m, "the program's libraries"));
    }
    Ok((BUILT_FOR_MPI, "the default"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpi_names_are_checked() {
        assert_eq!(check_mpi("mpich"), Ok("mpich"));
        assert!(check_mpi("intelmpi")
            .unwrap_err()
            .contains("use openmpi or mpich"));
    }

    #[test]
    fn a_program_without_mpi_is_told_apart() {
        assert_eq!(from_binary("/bin/true"), None);
        assert_eq!(from_binary("/nonexistent/program"), None);
    }
}
