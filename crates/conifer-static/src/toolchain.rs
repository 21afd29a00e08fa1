//! The external tools: LLVM 19 from Debian, the MPI compiler wrappers (asked only for their
//! flags) and the `use mpi` module shim that flang needs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Source language of a compiler front end.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Lang {
    /// C (clang-19).
    C,
    /// C++ (clang++-19).
    Cxx,
    /// Fortran (flang-new-19).
    Fortran,
}

impl Lang {
    /// The compiler driver.
    pub fn compiler(self) -> &'static str {
        match self {
            Lang::C => "clang-19",
            Lang::Cxx => "clang++-19",
            Lang::Fortran => "flang-new-19",
        }
    }

    /// The language of a source file, by extension.
    pub fn of(path: &str) -> Option<Lang> {
        let ext = Path::new(path).extension()?.to_str()?;
        match ext {
            "c" | "i" => Some(Lang::C),
            "cc" | "cpp" | "cxx" | "C" | "c++" | "cp" | "CPP" | "ii" => Some(Lang::Cxx),
            "f" | "F" | "for" | "FOR" | "f77" | "F77" | "f90" | "F90" | "f95" | "F95" | "f03"
            | "F03" | "f08" | "F08" | "ftn" => Some(Lang::Fortran),
            _ => None,
        }
    }
}

/// The MPI library a program is built against.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Mpi {
    /// Debian's Open MPI.
    OpenMpi,
    /// Debian's MPICH.
    Mpich,
}

impl Mpi {
    /// Parses `openmpi` / `mpich`.
    pub fn parse(name: &str) -> Result<Mpi, String> {
        match name {
            "openmpi" => Ok(Mpi::OpenMpi),
            "mpich" => Ok(Mpi::Mpich),
            other => Err(format!(
                "unknown MPI '{other}': use --mpi=openmpi or --mpi=mpich"
            )),
        }
    }

    /// Its name as in `--mpi`.
    pub fn name(self) -> &'static str {
        match self {
            Mpi::OpenMpi => "openmpi",
            Mpi::Mpich => "mpich",
        }
    }

    fn wrapper(self, lang: Lang) -> String {
        let base = match lang {
            Lang::C => "mpicc",
            Lang::Cxx => "mpicxx",
            Lang::Fortran => "mpifort",
        };
        format!("{base}.{}", self.name())
    }

    fn query(self, lang: Lang, link: bool) -> Result<Vec<String>, String> {
        let wrapper = self.wrapper(lang);
        let arg = match (self, link) {
            (Mpi::OpenMpi, false) => "--showme:compile",
            (Mpi::OpenMpi, true) => "--showme:link",
            (Mpi::Mpich, false) => "-compile-info",
            (Mpi::Mpich, true) => "-link-info",
        };
        let out = Command::new(&wrapper).arg(arg).output().map_err(|e| {
            format!(
                "cannot run {wrapper} ({e}); install the {} development package",
                self.name()
            )
        })?;
        if !out.status.success() {
            return Err(format!("{wrapper} {arg} failed"));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut words: Vec<String> = text.split_whitespace().map(String::from).collect();
        if self == Mpi::Mpich && !words.is_empty() {
            words.remove(0); // MPICH prints the underlying compiler first
        }
        Ok(words)
    }

    /// Include and define flags for compiling `lang` (gfortran module directories left out).
    pub fn compile_flags(self, lang: Lang) -> Result<Vec<String>, String> {
        let mut flags = self.query(lang, false)?;
        if lang == Lang::Fortran {
            // mpif.h sits with the C headers for Open MPI.
            flags.extend(self.query(Lang::C, false)?);
        }
        let mut out: Vec<String> = Vec::new();
        for f in flags {
            let keep = (f.starts_with("-I") || f.starts_with("-D") || f == "-pthread")
                && !f.contains("gfortran-mod");
            if keep && !out.contains(&f) {
                out.push(f);
            }
        }
        Ok(out)
    }

    /// Library flags for linking `lang`.
    pub fn link_flags(self, lang: Lang) -> Result<Vec<String>, String> {
        Ok(self
            .query(lang, true)?
            .into_iter()
            .filter(|f| {
                f.starts_with("-L")
                    || f.starts_with("-l")
                    || f.starts_with("-Wl,")
                    || f == "-pthread"
            })
            .collect())
    }
}

/// The directory holding flang's `mpi.mod` (a module that includes `mpif.h`) and its object,
/// built once per MPI next to this executable (or in the temporary directory).
pub fn fortran_shim(mpi: Mpi) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate conifer-static: {e}"))?;
    let beside = exe.parent().map(|d| d.join("conifer-fortran"));
    let tmp = std::env::temp_dir().join(format!("conifer-fortran-{}", current_uid()));
    let roots: Vec<PathBuf> = beside.into_iter().chain([tmp]).collect();
    for root in &roots {
        let dir = root.join(mpi.name());
        if dir.join("mpi.mod").is_file() {
            return Ok(dir);
        }
    }
    let mut last = String::new();
    for root in &roots {
        match build_shim(mpi, root) {
            Ok(dir) => return Ok(dir),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn current_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap_or(0)
}

fn build_shim(mpi: Mpi, root: &Path) -> Result<PathBuf, String> {
    let dir = root.join(mpi.name());
    let work = root.join(format!("{}.tmp{}", mpi.name(), std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let source = work.join("mpi_shim.f90");
    std::fs::write(&source, "module mpi\n  include 'mpif.h'\nend module mpi\n")
        .map_err(|e| format!("cannot write {}: {e}", source.display()))?;
    let status = Command::new(Lang::Fortran.compiler())
        .args(mpi.compile_flags(Lang::Fortran)?)
        .arg("-c")
        .arg(&source)
        .arg("-module-dir")
        .arg(&work)
        .arg("-o")
        .arg(work.join("mpi_shim.o"))
        .status()
        .map_err(|e| {
            format!(
                "cannot run {}: {e}; run scripts/setup.sh",
                Lang::Fortran.compiler()
            )
        })?;
    if !status.success() {
        let _ = std::fs::remove_dir_all(&work);
        return Err(format!(
            "building the Fortran `mpi` module for {} failed",
            mpi.name()
        ));
    }
    if std::fs::rename(&work, &dir).is_err() {
        // Another build finished first; use its result.
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok(dir)
}
