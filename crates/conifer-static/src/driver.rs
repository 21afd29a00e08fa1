//! `conifer cc`, `cxx` and `fc`: drop-in compiler drivers. Compile steps produce LLVM bitcode
//! objects; the link step links all bitcode (objects and bitcode members of static
//! archives) into one module, builds and embeds the structure tree, instruments, compiles
//! the result and links it with plain objects, libraries and MPI.

use crate::analyze;
use crate::inputs::{self, Input};
use crate::toolchain::{fortran_shim, Lang, Mpi};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Flags whose value is the next argument.
const TAKES_VALUE: [&str; 22] = [
    "-o",
    "-I",
    "-L",
    "-l",
    "-D",
    "-U",
    "-include",
    "-isystem",
    "-idirafter",
    "-iquote",
    "-x",
    "-MF",
    "-MT",
    "-MQ",
    "-Xlinker",
    "-Xclang",
    "-mllvm",
    "-J",
    "-module-dir",
    "-imacros",
    "-isysroot",
    "-target",
];

/// A parsed command line.
struct CommandLine {
    /// Arguments other than `--mpi`, in order; inputs included.
    args: Vec<String>,
    /// Indices in `args` of input files.
    inputs: Vec<usize>,
    /// `-c` or `-S`: compile only.
    compile_only: bool,
    /// `-E`, `-M`, `-MM`, or no input: nothing to build, run the compiler as asked.
    passthrough: bool,
    /// Last `-O` flag.
    opt: Option<String>,
    /// A `-g` flag is present.
    debug: bool,
    /// `--mpi=NAME`.
    mpi: Option<String>,
    /// `--slice`: FACT slicing.
    slice: bool,
    /// `-v`: report what the pass did (also `CONIFER_VERBOSE`).
    verbose: bool,
}

fn parse(raw: Vec<String>) -> Result<CommandLine, String> {
    let mut cl = CommandLine {
        args: Vec::new(),
        inputs: Vec::new(),
        compile_only: false,
        passthrough: false,
        opt: None,
        debug: false,
        mpi: None,
        slice: false,
        verbose: std::env::var_os("CONIFER_VERBOSE").is_some(),
    };
    let mut saw_v = false;
    let mut it = raw.into_iter();
    while let Some(a) = it.next() {
        if let Some(name) = a.strip_prefix("--mpi=") {
            cl.mpi = Some(name.to_string());
            continue;
        }
        if a == "--slice" {
            cl.slice = true;
            continue;
        }
        if a == "-v" {
            // With inputs, `-v` asks for the pass's report; alone, the compiler's version.
            cl.verbose = true;
            saw_v = true;
            continue;
        }
        if a == "--mpi" {
            cl.mpi = Some(it.next().ok_or("--mpi needs a value: openmpi or mpich")?);
            continue;
        }
        if TAKES_VALUE.contains(&a.as_str()) {
            let value = it.next().ok_or_else(|| format!("{a} needs a value"))?;
            cl.args.push(a);
            cl.args.push(value);
            continue;
        }
        match a.as_str() {
            "-c" | "-S" => cl.compile_only = true,
            "-E" | "-M" | "-MM" | "--version" | "--help" => cl.passthrough = true,
            _ if a.starts_with("-O") => cl.opt = Some(a.clone()),
            _ if a.starts_with("-g") && a != "-g0" => cl.debug = true,
            _ => {}
        }
        if !a.starts_with('-') || a == "-" {
            cl.inputs.push(cl.args.len());
        }
        cl.args.push(a);
    }
    if cl.inputs.is_empty() {
        cl.passthrough = true;
    }
    if cl.passthrough && saw_v {
        cl.args.push("-v".into());
    }
    Ok(cl)
}

/// Runs the driver for `lang` with a compiler's command line; returns the exit code.
pub fn run(lang: Lang, raw: Vec<String>) -> Result<i32, String> {
    let cl = parse(raw)?;
    let mpi = Mpi::parse(
        &cl.mpi
            .clone()
            .or_else(|| std::env::var("CONIFER_MPI").ok())
            .unwrap_or_else(|| "openmpi".into()),
    )?;
    for &i in &cl.inputs {
        let path = &cl.args[i];
        if path != "-" && !Path::new(path).exists() {
            return Err(format!("{path}: no such file"));
        }
    }
    let any_fortran = cl
        .inputs
        .iter()
        .any(|&i| Lang::of(&cl.args[i]) == Some(Lang::Fortran));
    let front = if any_fortran { Lang::Fortran } else { lang };
    if cl.passthrough {
        let mut args = cl.args.clone();
        args.extend(mpi.compile_flags(front)?);
        return status(Command::new(front.compiler()).args(&args));
    }
    if cl.compile_only {
        let mut args = cl.args.clone();
        args.extend(compile_extras(front, mpi, cl.debug)?);
        return status(Command::new(front.compiler()).args(&args));
    }
    link(lang, mpi, &cl)
}

/// Flags added to every compile step: bitcode, not optimised yet (the link step analyses
/// the program as written, then optimises it whole at the link's `-O` level), line tables.
fn compile_extras(lang: Lang, mpi: Mpi, debug: bool) -> Result<Vec<String>, String> {
    let mut extra: Vec<String> = vec!["-flto".into()];
    if lang == Lang::Fortran {
        extra.push(format!("-I{}", fortran_shim(mpi)?.display()));
    } else {
        extra.extend(
            [
                "-Xclang",
                "-disable-llvm-passes",
                "-Xclang",
                "-disable-O0-optnone",
            ]
            .map(String::from),
        );
    }
    if !debug {
        extra.push("-gline-tables-only".into());
    }
    extra.extend(mpi.compile_flags(lang)?);
    Ok(extra)
}

fn is_link_only(arg: &str) -> bool {
    arg.starts_with("-l")
        || arg.starts_with("-L")
        || arg.starts_with("-Wl,")
        || arg == "-shared"
        || arg == "-static"
}

fn link(lang: Lang, mpi: Mpi, cl: &CommandLine) -> Result<i32, String> {
    let work = TempDir::new()?;
    // Compile-step arguments: everything but inputs, -o and linker flags.
    let mut compile_args = Vec::new();
    let mut skip = false;
    for (i, a) in cl.args.iter().enumerate() {
        if std::mem::take(&mut skip) || cl.inputs.contains(&i) {
            continue;
        }
        if a == "-o" || a == "-Xlinker" || a == "-l" || a == "-L" {
            skip = true;
            continue;
        }
        if !is_link_only(a) {
            compile_args.push(a.clone());
        }
    }
    let search: Vec<PathBuf> = library_dirs(&cl.args);
    let mut bitcode: Vec<PathBuf> = Vec::new();
    let mut members: Vec<PathBuf> = Vec::new();
    let mut first_bitcode: Option<usize> = None;
    // Where the program object goes when only archives bring bitcode (a program linked from
    // its own static library, as HPCC is).
    let mut first_archive: Option<usize> = None;
    let mut drop: Vec<usize> = Vec::new();
    let mut any_fortran = false;
    for (n, &i) in cl.inputs.iter().enumerate() {
        let path = &cl.args[i];
        if let Some(src_lang) = Lang::of(path) {
            any_fortran |= src_lang == Lang::Fortran;
            let object = work.path.join(format!("src{n}.o"));
            let code = status(
                Command::new(src_lang.compiler())
                    .args(&compile_args)
                    .args(compile_extras(src_lang, mpi, cl.debug)?)
                    .arg("-c")
                    .arg(path)
                    .arg("-o")
                    .arg(&object),
            )?;
            if code != 0 {
                return Ok(code);
            }
            bitcode.push(object);
            first_bitcode.get_or_insert(i);
            drop.push(i);
            continue;
        }
        match inputs::classify(Path::new(path))? {
            Input::Bitcode => {
                bitcode.push(PathBuf::from(path));
                first_bitcode.get_or_insert(i);
                drop.push(i);
            }
            Input::Archive { bitcode: 0, .. } | Input::Other => {}
            Input::Archive {
                bitcode: n_bc,
                plain,
            } => {
                members.extend(inputs::extract_bitcode(Path::new(path), &work.path)?);
                first_archive.get_or_insert(i);
                if plain == 0 && n_bc > 0 {
                    drop.push(i);
                }
            }
        }
    }
    // `-lNAME` resolving to a static archive of bitcode under a user `-L` directory.
    for (i, a) in cl.args.iter().enumerate() {
        if let Some(name) = a.strip_prefix("-l").filter(|n| !n.is_empty()) {
            if let Some(archive) = inputs::find_bitcode_archive(name, &search) {
                members.extend(inputs::extract_bitcode(&archive, &work.path)?);
                first_archive.get_or_insert(i);
                drop.push(i);
            }
        }
    }
    let driver = if lang == Lang::Fortran || any_fortran {
        Lang::Fortran
    } else {
        lang
    };
    let program_at = first_bitcode.or(first_archive);
    let mut args: Vec<String> = Vec::new();
    for (i, a) in cl.args.iter().enumerate() {
        if Some(i) == program_at {
            args.push(
                program_object(&work, &bitcode, &members, cl)?
                    .display()
                    .to_string(),
            );
        }
        if !drop.contains(&i) {
            args.push(a.clone());
        }
    }
    if driver == Lang::Fortran {
        let shim = fortran_shim(mpi)?.join("mpi_shim.o");
        if shim.is_file() {
            args.push(shim.display().to_string());
        }
    }
    args.extend(mpi.link_flags(driver)?);
    status(Command::new(driver.compiler()).args(&args))
}

/// Links, analyses, instruments and compiles the program's bitcode to one native object.
fn program_object(
    work: &TempDir,
    bitcode: &[PathBuf],
    members: &[PathBuf],
    cl: &CommandLine,
) -> Result<PathBuf, String> {
    let whole = work.path.join("program.bc");
    let mut link = Command::new("llvm-link-19");
    link.arg("-o").arg(&whole).args(bitcode);
    // Archive members go in when the program needs them, as a linker takes them; a program
    // all in archives is rooted at the member that defines `main`, a shared library built
    // from archives takes every member.
    let shared = bitcode.is_empty() && cl.args.iter().any(|a| a == "-shared");
    let needed = match shared {
        true => members.to_vec(),
        false => inputs::needed_members(bitcode, members)?,
    };
    if bitcode.is_empty() && needed.is_empty() {
        return Err("no bitcode object or archive member defines main".into());
    }
    link.args(&needed);
    if status(&mut link)? != 0 {
        return Err("llvm-link-19 failed to link the program's bitcode".into());
    }
    let instrumented = work.path.join("program.instrumented.bc");
    let outcome = analyze::run(&whole, &instrumented, cl.slice)?;
    if cl.verbose {
        eprintln!(
            "conifer: structure tree\n{}conifer: {} hooks inserted",
            outcome.tree.render(),
            outcome.hooks
        );
        if let Some(report) = &outcome.slice {
            eprint!("{}", report.render());
        }
    }
    let object = work.path.join("program.o");
    let opt = cl.opt.clone().unwrap_or_else(|| "-O2".into());
    let pic = cl.args.iter().any(|a| a == "-fPIC" || a == "-shared");
    let mut compile = Command::new("clang-19");
    compile
        .arg("-c")
        .arg(&opt)
        .arg(&instrumented)
        .arg("-o")
        .arg(&object);
    if pic {
        compile.arg("-fPIC");
    }
    if status(&mut compile)? != 0 {
        return Err("clang-19 failed to compile the instrumented program".into());
    }
    Ok(object)
}

fn library_dirs(args: &[String]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-L" {
            dirs.extend(it.next().map(PathBuf::from));
        } else if let Some(d) = a.strip_prefix("-L") {
            dirs.push(PathBuf::from(d));
        }
    }
    dirs
}

/// Runs a command, returning its exit code.
fn status(cmd: &mut Command) -> Result<i32, String> {
    if std::env::var_os("CONIFER_VERBOSE").is_some() {
        eprintln!("conifer: {cmd:?}");
    }
    let program = cmd.get_program().to_string_lossy().into_owned();
    let st = cmd.status().map_err(|e| {
        format!("cannot run {program} ({e}); run scripts/setup.sh to install LLVM 19")
    })?;
    Ok(st.code().unwrap_or(1))
}

/// A private temporary directory, removed on drop (kept with `CONIFER_KEEP_TEMPS=1`).
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> Result<TempDir, String> {
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let path = base.join(format!("conifer-cc-{}-{n}", std::process::id()));
            if std::fs::create_dir(&path).is_ok() {
                return Ok(TempDir { path });
            }
        }
        Err(format!(
            "cannot create a temporary directory in {}",
            base.display()
        ))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("CONIFER_KEEP_TEMPS").is_none() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_compile_and_link_lines() {
        let cl = parse(args("-O2 -c -I inc a.c -o a.o --mpi=mpich")).unwrap();
        assert!(cl.compile_only && !cl.passthrough);
        assert_eq!(cl.inputs, vec![4]);
        assert_eq!(cl.mpi.as_deref(), Some("mpich"));
        assert_eq!(cl.opt.as_deref(), Some("-O2"));
        let cl = parse(args("-o app a.o b.o -L lib -lm")).unwrap();
        assert!(!cl.compile_only);
        assert_eq!(cl.inputs, vec![2, 3]);
        assert!(parse(args("--version")).unwrap().passthrough);
        assert!(parse(args("a.c -o")).is_err());
    }
}
