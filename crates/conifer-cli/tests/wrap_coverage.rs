//! libconifer.so wraps every MPI entry point the installed MPI exports. Checked from the
//! outside with `nm`: the MPI libraries are the ones the preload library and a Fortran test
//! app are actually linked with (`ldd`), not what the build script believed.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn defined_symbols(library: &Path) -> BTreeSet<String> {
    let out = run_ok(
        Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(library),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect()
}

/// The shared library `binary` loads whose file name starts with `prefix`.
fn linked_library(binary: &Path, prefix: &str) -> PathBuf {
    let out = run_ok(Command::new("ldd").arg(binary));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.trim_start().starts_with(prefix))
        .find_map(|l| {
            l.split("=>")
                .nth(1)?
                .split_whitespace()
                .next()
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| panic!("{} is not linked with {prefix}*", binary.display()))
}

fn preload() -> PathBuf {
    conifer().parent().unwrap().join("libconifer.so")
}

#[test]
fn every_c_function_with_a_profiling_entry_is_wrapped() {
    let mpi_lib = linked_library(&preload(), if is_mpich() { "libmpich" } else { "libmpi." });
    let exported = defined_symbols(&mpi_lib);
    let ours = defined_symbols(&preload());
    let profiled: Vec<&str> = exported
        .iter()
        .filter_map(|s| s.strip_prefix('P'))
        .filter(|s| s.starts_with("MPI_"))
        .collect();
    assert!(
        profiled.len() > 400,
        "{} exports only {} PMPI_ functions",
        mpi_lib.display(),
        profiled.len()
    );
    let missing: Vec<&&str> = profiled
        .iter()
        .filter(|name| !ours.contains(**name))
        .collect();
    assert!(missing.is_empty(), "not wrapped: {missing:?}");
}

/// Fortran entry points of the mpif.h / `use mpi` library that are not procedures an
/// application calls: predefined callbacks (the library calls them) and `mpi_f08` variants.
fn is_callable_mpif_procedure(symbol: &str) -> bool {
    !(symbol.ends_with("_fn_")
        || symbol.contains("f08")
        || symbol.contains("_cptr")
        || symbol.starts_with("mpi_sizeof")
        || symbol.starts_with("mpi_conversion_fn_null"))
}

#[test]
fn every_fortran_procedure_is_wrapped_in_all_four_manglings() {
    let ring_f = apps_dir().join("ring_f");
    let fortran_lib = linked_library(
        &ring_f,
        if is_mpich() {
            "libmpichfort"
        } else {
            "libmpi_mpifh"
        },
    );
    let exported = defined_symbols(&fortran_lib);
    let ours = defined_symbols(&preload());
    let procedures: Vec<&str> = exported
        .iter()
        .filter_map(|s| s.strip_prefix("pmpi_")?.strip_suffix('_'))
        .filter(|stem| !stem.ends_with('_'))
        .filter(|stem| is_callable_mpif_procedure(&format!("mpi_{stem}_")))
        .collect();
    assert!(
        procedures.len() > 300,
        "{} exports only {} procedures",
        fortran_lib.display(),
        procedures.len()
    );
    let mut missing = Vec::new();
    for stem in procedures {
        let base = format!("mpi_{stem}");
        for symbol in [
            format!("{base}_"),
            format!("{base}__"),
            base.clone(),
            base.to_ascii_uppercase(),
        ] {
            if !ours.contains(&symbol) {
                missing.push(symbol);
            }
        }
    }
    assert!(missing.is_empty(), "not wrapped: {missing:?}");
}

/// Open MPI's `mpi_f08` procedures call the `ompi_<name>_f` implementations of the mpif.h
/// library: libconifer.so defines every one that libmpi_usempif08 calls.
#[test]
fn every_open_mpi_f08_entry_is_wrapped() {
    if is_mpich() {
        return; // MPICH's mpi_f08 procedures call its internals: not wrapped (README)
    }
    let f08 = linked_library(&apps_dir().join("stencil2d08_f"), "libmpi_usempif08");
    let out = run_ok(
        Command::new("nm")
            .args(["-D", "--undefined-only"])
            .arg(&f08),
    );
    let called: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|s| s.starts_with("ompi_") && s.ends_with("_f"))
        .map(str::to_string)
        .collect();
    assert!(
        called.len() > 300,
        "{} calls only {} ompi_*_f",
        f08.display(),
        called.len()
    );
    let ours = defined_symbols(&preload());
    let missing: Vec<&String> = called.iter().filter(|s| !ours.contains(*s)).collect();
    assert!(missing.is_empty(), "not wrapped: {missing:?}");
}
