//! `make install`'s layout (scripts/install.sh): one installed `conifer` traces an Open MPI
//! program and an MPICH program, each with the preload library of its own MPI, told from the
//! program's libraries. Needs both MPIs built: `make test` builds Open MPI's round first, so
//! this runs in MPICH's round (and is skipped, saying so, when only one is built).

mod common;

use common::*;
use std::process::Command;

#[test]
fn one_installed_conifer_traces_programs_of_both_mpis() {
    let root = repo_root();
    let built = ["openmpi", "mpich"].iter().all(|m| {
        root.join("target")
            .join(m)
            .join("release/libconifer.so")
            .is_file()
    });
    if !built {
        eprintln!(
            "skipped: needs both target/openmpi and target/mpich built (make test builds both)"
        );
        return;
    }
    let dir = scratch("install");
    let prefix = dir.join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    let out = run_ok(Command::new(root.join("scripts/install.sh")).arg(&prefix));
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(
        log.contains("openmpi preload") && log.contains("mpich preload"),
        "{log}"
    );
    let conifer = prefix.join("bin/conifer");
    let installed = |args: &[&str]| {
        let mut cmd = Command::new(&conifer);
        cmd.args(args)
            .current_dir(&dir)
            .env_remove("CONIFER_MPI")
            .env_remove("CONIFER_LIB");
        cmd
    };
    let info = run_ok(&mut installed(&["info", "--json"]));
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    for m in ["openmpi", "mpich"] {
        let path = info["installed"][m].as_str().unwrap_or("");
        let want = std::fs::canonicalize(prefix.join("lib/conifer").join(m).join("libconifer.so"));
        assert_eq!(Some(path.into()), want.ok(), "{m}: {info}");
    }
    for (mpi, version) in [("openmpi", "Open MPI"), ("mpich", "MPICH")] {
        let exe = dir.join(format!("ring_{mpi}"));
        run_ok(
            Command::new(format!("mpicc.{mpi}"))
                .arg("-I")
                .arg(root.join("tests/apps"))
                .arg("-o")
                .arg(&exe)
                .arg(root.join("tests/apps/ring.c")),
        );
        let trace = dir.join(format!("ring_{mpi}.cft"));
        {
            let _guard = mpi_lock();
            run_ok(
                Command::new("timeout")
                    .arg("300")
                    .arg(&conifer)
                    .args(["run", "-n", "2", "-o"])
                    .arg(&trace)
                    .arg(&exe)
                    .arg("3")
                    .current_dir(&dir)
                    .env_remove("CONIFER_MPI")
                    .env_remove("CONIFER_LIB"),
            );
        }
        let stats = run_ok(&mut installed(&[
            "stats",
            "--json",
            trace.to_str().unwrap(),
        ]));
        let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
        assert_eq!(stats["mpi"], mpi, "{mpi}: {stats}");
        let library = stats["mpi_library_version"].as_str().unwrap_or("");
        assert!(
            library.starts_with(version),
            "{mpi}: traced under {library}"
        );
        let counts = traced_counts(&stats);
        assert_eq!(
            counts.get(&(0, "MPI_Sendrecv".into())),
            Some(&3),
            "{mpi}: {counts:?}"
        );
        assert_eq!(
            counts.get(&(1, "MPI_Sendrecv".into())),
            Some(&3),
            "{mpi}: {counts:?}"
        );
    }
    run_ok(
        Command::new(root.join("scripts/install.sh"))
            .arg(&prefix)
            .arg("--uninstall"),
    );
    assert!(!conifer.exists() && !prefix.join("lib/conifer").exists());
}
