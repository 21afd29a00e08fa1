//! Records which MPI this `conifer` is built for (`CONIFER_MPI`, Open MPI when unset), so that
//! `conifer run` picks that MPI's launcher.

fn main() {
    println!("cargo:rerun-if-env-changed=CONIFER_MPI");
    let mpi = std::env::var("CONIFER_MPI").unwrap_or_else(|_| "openmpi".into());
    println!("cargo:rustc-env=CONIFER_BUILT_FOR_MPI={mpi}");
}
