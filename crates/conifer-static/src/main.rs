//! `conifer-static`: the CYPRESS static pass of Conifer, run by `conifer cc|cxx|fc|tree`.
//!
//! - `conifer-static cc|cxx|fc [--mpi=openmpi|mpich] ARGS...`: drop-in MPI compiler drivers
//!   (see [`driver`]).
//! - `conifer-static tree BINARY [--json]`: print the structure tree embedded in a binary.

mod analyze;
mod cfg;
mod driver;
mod inputs;
mod instrument;
mod inter;
mod intra;
mod ir;
mod passes;
mod slice;
mod toolchain;
mod tree;

use std::process::ExitCode;
use toolchain::Lang;

const USAGE: &str =
    "usage: conifer-static cc|cxx|fc [--mpi=openmpi|mpich] [--slice] COMPILER-ARGS... | tree BINARY [--json]";

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        eprintln!("conifer: {USAGE}");
        return ExitCode::FAILURE;
    }
    let command = args.remove(0);
    let result = match command.as_str() {
        "cc" => driver::run(Lang::C, args),
        "cxx" => driver::run(Lang::Cxx, args),
        "fc" => driver::run(Lang::Fortran, args),
        "tree" => print_tree(&args),
        other => Err(format!("unknown command '{other}'; {USAGE}")),
    };
    match result {
        Ok(0) => ExitCode::SUCCESS,
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1).max(1)),
        Err(message) => {
            eprintln!("conifer: {message}");
            ExitCode::FAILURE
        }
    }
}

fn print_tree(args: &[String]) -> Result<i32, String> {
    let mut json = false;
    let mut binary = None;
    for a in args {
        match a.as_str() {
            "--json" => json = true,
            _ if a.starts_with('-') => {
                return Err(format!(
                    "unknown flag '{a}' for tree; usage: conifer tree BINARY [--json]"
                ))
            }
            _ if binary.is_none() => binary = Some(a),
            _ => return Err("conifer tree takes one binary".into()),
        }
    }
    let binary = binary.ok_or("usage: conifer tree BINARY [--json]")?;
    let path = std::path::Path::new(binary);
    let tree = analyze::read(path)?;
    let slice = analyze::read_slice(path)?;
    if json {
        let mut value = serde_json::to_value(&tree).expect("tree serialises");
        if let (Some(report), Some(object)) = (&slice, value.as_object_mut()) {
            object.insert(
                "slice".into(),
                serde_json::to_value(report).expect("report serialises"),
            );
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&value).expect("tree serialises")
        );
    } else {
        print!("{}", tree.render());
        if let Some(report) = slice {
            print!("{}", report.render());
        }
    }
    Ok(0)
}
