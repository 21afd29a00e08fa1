//! Finds the MPI installation the preload library is built for: header and library
//! locations from the MPI's own compiler wrappers (`mpicc.openmpi -showme:…`, `mpicc.mpich -show`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The two MPI families Conifer builds against.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flavor {
    /// Open MPI 4.x (`libmpi.so`, pointer handles).
    OpenMpi,
    /// MPICH 4.x (`libmpich.so`, integer handles).
    Mpich,
}

impl Flavor {
    /// Reads `CONIFER_MPI` (`openmpi` or `mpich`; Open MPI when unset).
    pub fn from_env() -> Flavor {
        match std::env::var("CONIFER_MPI").as_deref() {
            Ok("openmpi") | Err(_) => Flavor::OpenMpi,
            Ok("mpich") => Flavor::Mpich,
            Ok(other) => fail(&format!(
                "CONIFER_MPI={other} is not supported: use CONIFER_MPI=openmpi or CONIFER_MPI=mpich"
            )),
        }
    }

    /// The suffix Debian gives this MPI's commands (`mpicc.openmpi`).
    pub fn suffix(self) -> &'static str {
        match self {
            Flavor::OpenMpi => "openmpi",
            Flavor::Mpich => "mpich",
        }
    }
}

/// Where the installed MPI keeps its header and libraries.
pub struct Installation {
    /// `-I` directories of the C compiler wrapper.
    pub include_dirs: Vec<PathBuf>,
    /// `-L` directories of the C compiler wrapper.
    pub lib_dirs: Vec<PathBuf>,
    /// Name of the C MPI library (`mpi`, `mpich`).
    pub c_lib: String,
    /// Path of the C MPI shared library.
    pub c_lib_path: PathBuf,
    /// Paths of the mpif.h / `use mpi` Fortran libraries, when installed.
    pub fortran_lib_paths: Vec<PathBuf>,
}

/// Prints a build error that says what to do and stops the build.
pub fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}

fn wrapper_flags(program: &str, args: &[&str]) -> Option<Vec<String>> {
    let out = Command::new(program).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    )
}

fn flag_values(flags: &[String], prefix: &str) -> Vec<String> {
    flags
        .iter()
        .filter_map(|f| f.strip_prefix(prefix).map(str::to_string))
        .collect()
}

const SYSTEM_LIB_DIRS: [&str; 3] = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"];

fn find_shared_lib(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    let file = format!("lib{name}.so");
    dirs.iter()
        .map(PathBuf::as_path)
        .chain(SYSTEM_LIB_DIRS.iter().map(Path::new))
        .map(|d| d.join(&file))
        .find(|p| p.exists())
}

impl Installation {
    /// Asks the MPI's compiler wrappers where it lives.
    pub fn detect(flavor: Flavor) -> Installation {
        let cc = format!("mpicc.{}", flavor.suffix());
        let fc = format!("mpifort.{}", flavor.suffix());
        let show: &[&str] = match flavor {
            Flavor::OpenMpi => &["-showme"],
            Flavor::Mpich => &["-show"],
        };
        let c_flags = wrapper_flags(&cc, show).unwrap_or_else(|| {
            fail(&format!(
                "{cc} not found: install {} (run scripts/setup.sh) or choose another MPI with CONIFER_MPI",
                flavor.suffix()
            ))
        });
        let include_dirs: Vec<PathBuf> = flag_values(&c_flags, "-I")
            .into_iter()
            .map(PathBuf::from)
            .collect();
        let lib_dirs: Vec<PathBuf> = flag_values(&c_flags, "-L")
            .into_iter()
            .map(PathBuf::from)
            .collect();
        let c_libs = flag_values(&c_flags, "-l");
        let c_lib = c_libs
            .iter()
            .find(|l| *l == "mpi" || *l == "mpich")
            .cloned()
            .unwrap_or_else(|| fail(&format!("{cc} names no MPI library (-lmpi / -lmpich)")));
        let c_lib_path = find_shared_lib(&lib_dirs, &c_lib)
            .unwrap_or_else(|| fail(&format!("lib{c_lib}.so not found in {lib_dirs:?}")));
        let fortran_lib_paths = match wrapper_flags(&fc, show) {
            Some(f_flags) => {
                let f_dirs: Vec<PathBuf> = flag_values(&f_flags, "-L")
                    .into_iter()
                    .map(PathBuf::from)
                    .collect();
                flag_values(&f_flags, "-l")
                    .iter()
                    .filter(|l| l.starts_with("mpi") && !c_libs.contains(l))
                    .filter_map(|l| find_shared_lib(&f_dirs, l))
                    .collect()
            }
            None => Vec::new(),
        };
        Installation {
            include_dirs,
            lib_dirs,
            c_lib,
            c_lib_path,
            fortran_lib_paths,
        }
    }
}
