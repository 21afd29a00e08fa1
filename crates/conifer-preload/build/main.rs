//! Build script of libconifer.so: reads the installed MPI (`CONIFER_MPI=openmpi|mpich`) and the
//! spec table, and generates every wrapper. Outputs in `OUT_DIR`:
//! - `mpi_bindings.rs`: bindgen's declarations of `PMPI_*` and the MPI types from `mpi.h`;
//! - `wrappers.rs`: the C and Fortran wrappers and the function-name table;
//! - `wrap-report.json`: what was wrapped and what the library exports that was not.

mod arg_types;
mod c_wrappers;
mod elf_symbols;
mod encoders;
mod fortran_wrappers;
mod message_log;
mod mpi_install;
mod own_status;
mod predefined;

use mpi_install::{Flavor, Installation};
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn generate_bindings(mpi: &Installation, out: &Path) -> String {
    let mut builder = bindgen::Builder::default()
        .header_contents("conifer_mpi.h", "#include <mpi.h>\n")
        // Open MPI hides the MPI-1 functions removed in MPI-3 that its library still exports.
        .clang_arg("-DOMPI_OMIT_MPI1_COMPAT_DECLS=0")
        .allowlist_function("PMPI_.*")
        .allowlist_var("MPI_SUCCESS")
        .allowlist_var("MPI_F_STATUSE?S?_IGNORE")
        .layout_tests(false)
        .generate_comments(false);
    for dir in &mpi.include_dirs {
        builder = builder.clang_arg(format!("-I{}", dir.display()));
    }
    let text = builder
        .generate()
        .unwrap_or_else(|e| mpi_install::fail(&format!("bindgen could not read mpi.h: {e}")))
        .to_string();
    std::fs::write(out.join("mpi_bindings.rs"), &text).expect("write bindings");
    text
}

fn compile_shim(mpi: &Installation, out: &Path) {
    let generated = out.join("predefined.c");
    std::fs::write(&generated, predefined::c_source()).expect("write predefined.c");
    let mut build = cc::Build::new();
    build
        .file("src/shim.c")
        .file(&generated)
        .warnings_into_errors(true);
    for dir in &mpi.include_dirs {
        build.include(dir);
    }
    build.compile("conifer_shim");
    println!("cargo:rerun-if-changed=src/shim.c");
}

fn link_mpi(mpi: &Installation) {
    for dir in &mpi.lib_dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib={}", mpi.c_lib);
    if let Some(dir) = mpi.c_lib_path.parent() {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,{}", dir.display());
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=CONIFER_MPI");
    println!("cargo:rerun-if-changed=build");
    let flavor = Flavor::from_env();
    let mpi = Installation::detect(flavor);
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    let bindings = generate_bindings(&mpi, &out);
    let c_exported = elf_symbols::exported_functions(&mpi.c_lib_path);
    let c_functions = c_wrappers::declared_and_exported(&bindings, &c_exported);

    let spec = conifer_spec::functions();
    let f_exported: BTreeSet<String> = mpi
        .fortran_lib_paths
        .iter()
        .flat_map(|p| elf_symbols::exported_functions(p))
        .collect();
    let f_functions = fortran_wrappers::exported(&spec, &f_exported);

    let mut names: Vec<String> = c_functions.iter().map(|f| f.name.clone()).collect();
    names.extend(f_functions.iter().map(|f| f.name.clone()));
    let c_count = c_functions.len();
    let mut code = Vec::new();
    let mut slots: Vec<Vec<String>> = Vec::new();
    for (i, f) in c_functions.iter().enumerate() {
        let spec_entry = spec.iter().find(|s| s.name == f.name);
        let encoding = encoders::encoding(&f.name, &f.signature, spec_entry, &[]);
        let poll = encoders::poll_key(&f.name, &f.signature, spec_entry);
        let pmpi = &f.signature.ident;
        // A local function replayed for real gets MPI_COMM_SELF for a communicator
        // (`MPI_Pack` and the like only pick a data representation by it): the program's
        // communicators are the run's tokens during a replay.
        let local = spec_entry.is_some_and(conifer_spec::message_log::runs_locally);
        let call_args: Vec<TokenStream> = encoders::args(&f.signature, spec_entry)
            .into_iter()
            .map(|a| {
                let id = a.ident;
                let comm = a.spec.as_ref().is_some_and(|p| p.kind == "COMMUNICATOR");
                if local && comm {
                    quote! { crate::mpi::conifer_comm_self() }
                } else {
                    quote! { #id }
                }
            })
            .collect();
        let log = message_log::code(&message_log::Wrapper {
            name: &f.name,
            sig: Some(&f.signature),
            spec: spec_entry,
            id: i as u16,
            real: quote! { crate::mpi::#pmpi(#(#call_args),*) },
            ierror: None,
            strings: &[],
        });
        code.push(c_wrappers::wrapper(
            f,
            i as u16,
            &encoding,
            poll.as_ref(),
            &log,
        ));
        slots.push(encoding.slots);
    }
    for (i, f) in f_functions.iter().enumerate() {
        let c_sig = c_functions
            .iter()
            .find(|c| c.name == f.name)
            .map(|c| &c.signature);
        let (wrappers, recorded) =
            fortran_wrappers::wrappers(f, (c_count + i) as u16, c_sig, &f_exported);
        code.push(wrappers);
        slots.push(recorded);
    }
    let total = names.len();
    let slot_lists: Vec<TokenStream> = slots.iter().map(|s| quote! { &[#(#s),*] }).collect();
    let tokens = quote! {
        /// Names of all wrapped functions, indexed by function id: the C functions first, then
        /// the Fortran procedures (named in their C spelling).
        pub static FUNCTION_NAMES: [&str; #total] = [#(#names),*];
        /// For each function id, the parameter name of each value its signature records.
        pub static FUNCTION_SLOTS: [&[&str]; #total] = [#(#slot_lists),*];
        /// Ids below this are C functions, the rest Fortran procedures.
        pub const FIRST_FORTRAN_ID: u16 = #c_count as u16;
        #(#code)*
    };
    let file = syn::parse2(tokens).expect("generated wrappers parse");
    std::fs::write(out.join("wrappers.rs"), prettyplease::unparse(&file)).expect("write wrappers");

    write_report(
        &out,
        flavor,
        &mpi,
        &c_exported,
        &c_functions,
        &f_exported,
        &f_functions,
    );
    compile_shim(&mpi, &out);
    link_mpi(&mpi);
    println!("cargo:rustc-env=CONIFER_BUILT_FOR_MPI={}", flavor.suffix());
}

fn write_report(
    out: &Path,
    flavor: Flavor,
    mpi: &Installation,
    c_exported: &BTreeSet<String>,
    c_functions: &[c_wrappers::CFunction],
    f_exported: &BTreeSet<String>,
    f_functions: &[&conifer_spec::Function],
) {
    let wrapped: BTreeSet<&str> = c_functions.iter().map(|f| f.name.as_str()).collect();
    let not_wrapped: Vec<&String> = c_exported
        .iter()
        .filter(|s| s.starts_with("MPI_") && !wrapped.contains(s.as_str()))
        .collect();
    let f_wrapped: BTreeSet<String> = f_functions.iter().map(|f| f.fortran_stem() + "_").collect();
    let f_not_wrapped: Vec<&String> = f_exported
        .iter()
        .filter(|s| s.starts_with("mpi_") && s.ends_with('_') && !s.ends_with("__"))
        .filter(|s| !f_wrapped.contains(s.as_str()))
        .collect();
    let report = format!(
        "{{\"mpi\": \"{}\", \"library\": \"{}\", \"library_mpi_functions\": {}, \"c_wrapped\": {}, \
         \"c_not_wrapped\": {:?}, \"fortran_wrapped\": {}, \"fortran_symbols\": {}, \"fortran_not_wrapped\": {:?}}}\n",
        flavor.suffix(),
        mpi.c_lib_path.display(),
        c_exported.iter().filter(|s| s.starts_with("MPI_")).count(),
        c_functions.len(),
        not_wrapped,
        f_functions.len(),
        f_functions.len() * 4,
        f_not_wrapped,
    );
    std::fs::write(out.join("wrap-report.json"), report).expect("write report");
}
