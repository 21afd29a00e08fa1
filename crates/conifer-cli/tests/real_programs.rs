//! Packaged MPI programs not written here (Debian's LAMMPS, mpi4py, NetPIPE and HPCC) run under
//! Conifer with unchanged output, and their traces agree with what the programs are known to do.
//! LAMMPS, mpi4py and HPCC are built against Open MPI in Debian; NetPIPE exists for both MPIs.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Runs `program` under `conifer exec --raw` and checks the trace decodes to the raw record.
fn traced(ranks: u32, trace: &Path, program: &[&str], dir: &Path) -> std::process::Output {
    let out = run_ok(
        mpirun(ranks)
            .arg(conifer())
            .arg("exec")
            .arg("--raw")
            .arg("-o")
            .arg(trace)
            .args(program)
            .current_dir(dir),
    );
    let verify = run_ok(Command::new(conifer()).arg("verify").arg(trace));
    let said = String::from_utf8_lossy(&verify.stdout);
    assert!(said.starts_with("identical: "), "{program:?}: {said}");
    out
}

/// `conifer proxy --check` rebuilds the program's communication from the trace alone, runs it
/// and finds the same calls in its trace.
fn assert_proxy_matches(trace: &Path, dir: &Path) {
    let out = Command::new("timeout")
        .arg("600")
        .arg(conifer())
        .args(["proxy", "--check"])
        .arg(trace)
        .current_dir(dir)
        .output()
        .expect("conifer proxy runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("proxy matches"),
        "the proxy of {} differs:\n{said}{}",
        trace.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn untraced(ranks: u32, program: &[&str], dir: &Path) -> std::process::Output {
    run_ok(mpirun(ranks).args(program).current_dir(dir))
}

/// Per-rank calls of `name` in a trace.
fn per_rank(stats: &serde_json::Value, name: &str) -> Vec<u64> {
    let ranks = stats["ranks"].as_u64().unwrap() as usize;
    let counts = traced_counts(stats);
    (0..ranks as u32)
        .map(|r| counts.get(&(r, name.to_string())).copied().unwrap_or(0))
        .collect()
}

/// LAMMPS's thermodynamic output: the table between the `Step` header and `Loop time`.
fn thermo_table(stdout: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(stdout);
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("Step"))
        .take_while(|l| !l.starts_with("Loop time"))
        .map(str::to_string)
        .collect()
}

#[test]
fn lammps_melt_output_is_unchanged() {
    if is_mpich() || !Path::new("/usr/bin/lmp").exists() {
        return; // Debian's LAMMPS is built against Open MPI
    }
    let dir = scratch("lammps");
    let input = "/usr/share/lammps/examples/melt/in.melt";
    let _lock = mpi_lock();
    let plain = untraced(4, &["lmp", "-in", input], &dir);
    let trace = dir.join("lmp.cft");
    let with = traced(4, &trace, &["lmp", "-in", input], &dir);
    let table = thermo_table(&plain.stdout);
    assert!(
        table.len() > 3,
        "LAMMPS printed no thermo table:\n{}",
        String::from_utf8_lossy(&plain.stdout)
    );
    assert_eq!(
        thermo_table(&with.stdout),
        table,
        "LAMMPS's physics changed under Conifer"
    );

    let stats = stats_json(&trace);
    assert_eq!(stats["ranks"], 4);
    assert_eq!(per_rank(&stats, "MPI_Init"), vec![1; 4]);
    assert_eq!(per_rank(&stats, "MPI_Finalize"), vec![1; 4]);
    // Every halo message LAMMPS posts with Irecv is completed by one Wait.
    assert_eq!(per_rank(&stats, "MPI_Irecv"), per_rank(&stats, "MPI_Wait"));
    assert!(per_rank(&stats, "MPI_Irecv").iter().all(|&n| n > 100));
    assert_proxy_matches(&trace, &dir);
}

/// LAMMPS peptide's halo receives change count from one exchange to the next, so the same
/// request id is made by Irecvs of different counts and the two programs number their
/// request pools differently: `--check` compares requests by the call that made them.
#[test]
fn lammps_peptide_proxy_matches() {
    if is_mpich() || !Path::new("/usr/bin/lmp").exists() {
        return; // Debian's LAMMPS is built against Open MPI
    }
    let examples = Path::new("/usr/share/lammps/examples/peptide");
    let dir = scratch("lammps-peptide-proxy");
    for file in ["in.peptide", "data.peptide"] {
        std::fs::copy(examples.join(file), dir.join(file)).unwrap();
    }
    let trace = dir.join("lmp.cft");
    let _lock = mpi_lock();
    run_ok(
        mpirun(4)
            .arg(conifer())
            .args(["exec", "-o"])
            .arg(&trace)
            .args(["lmp", "-in", "in.peptide"])
            .current_dir(&dir),
    );
    assert_proxy_matches(&trace, &dir);
}

#[test]
fn lammps_exports_never_receive_a_message_before_it_was_sent() {
    if is_mpich() || !Path::new("/usr/bin/lmp").exists() {
        return; // Debian's LAMMPS is built against Open MPI
    }
    let examples = Path::new("/usr/share/lammps/examples");
    for (example, input, data) in [
        ("melt", "in.melt", None),
        ("peptide", "in.peptide", Some("data.peptide")),
    ] {
        let dir = scratch(&format!("lammps-causal-{example}"));
        for file in [Some(input), data].into_iter().flatten() {
            std::fs::copy(examples.join(example).join(file), dir.join(file)).unwrap();
        }
        let trace = dir.join("lmp.cft");
        let _lock = mpi_lock();
        run_ok(
            mpirun(4)
                .arg(conifer())
                .args(["exec", "--timing", "lossless", "-o"])
                .arg(&trace)
                .args(["lmp", "-in", input])
                .current_dir(&dir),
        );
        let archive = dir.join("otf2");
        export("otf2", &trace, &archive);
        let pairs = otf2_message_times(&archive.join("traces.otf2"));
        let backwards = pairs
            .iter()
            .filter(|(sent, received)| received < sent)
            .count();
        assert!(
            pairs.len() > 1_000,
            "{example}: {} messages matched",
            pairs.len()
        );
        assert_eq!(
            backwards,
            0,
            "{example}: {backwards} of {} receives end before their send",
            pairs.len()
        );
    }
}

#[test]
fn mpi4py_ringtest_sends_what_it_is_asked_to() {
    if is_mpich() || !Path::new("/usr/lib/python3/dist-packages/mpi4py").exists() {
        return; // Debian's mpi4py is built against Open MPI
    }
    let dir = scratch("mpi4py");
    let trace = dir.join("ring.cft");
    // Debian's interpreter: the python3 first on PATH may be another build without mpi4py.
    let program = [
        "/usr/bin/python3",
        "-m",
        "mpi4py.bench",
        "ringtest",
        "-n",
        "1000",
        "-s",
        "5",
        "-l",
        "50",
    ];
    let _lock = mpi_lock();
    let plain = untraced(4, &program, &dir);
    let with = traced(4, &trace, &program, &dir);
    let shape = |out: &[u8]| {
        String::from_utf8_lossy(out)
            .lines()
            .map(|l| l.split(" = ").next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(&with.stdout), shape(&plain.stdout));
    assert!(shape(&plain.stdout)[0].starts_with("time for 50 loops"));

    let stats = stats_json(&trace);
    // ringtest: every rank sends and receives once per warm-up and timed loop (5 + 50).
    assert_eq!(per_rank(&stats, "MPI_Send"), vec![55; 4]);
    assert_eq!(per_rank(&stats, "MPI_Recv"), vec![55; 4]);
    assert_eq!(
        per_rank(&stats, "MPI_Init_thread"),
        vec![1; 4],
        "mpi4py initialises with MPI_Init_thread"
    );
    assert_proxy_matches(&trace, &dir);
}

#[test]
fn netpipe_runs_and_its_messages_match_up() {
    let binary = if is_mpich() { "NPmpich2" } else { "NPopenmpi" };
    if Command::new("which")
        .arg(binary)
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
    {
        eprintln!("skipped: {binary} (Debian's netpipe) is not installed: run scripts/setup.sh --real-apps");
        return;
    }
    let dir = scratch("netpipe");
    let trace = dir.join("np.cft");
    let _lock = mpi_lock();
    // `-n 20`: a fixed number of repetitions per size (NetPIPE otherwise sizes them by the
    // measured times: 26 M calls and minutes of proxy checking on this machine).
    let plain = untraced(
        2,
        &[binary, "-u", "64", "-n", "20", "-o", "plain.out"],
        &dir,
    );
    let with = traced(
        2,
        &trace,
        &[binary, "-u", "64", "-n", "20", "-o", "traced.out"],
        &dir,
    );
    // NetPIPE's result file has one line per message size: bytes, Mbps, seconds.
    let sizes = |file: &str| {
        std::fs::read_to_string(dir.join(file))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .collect::<Vec<_>>()
    };
    assert!(plain.status.success() && with.status.success());
    assert!(
        sizes("plain.out").len() > 10,
        "NetPIPE measured too few sizes"
    );
    assert_eq!(
        sizes("traced.out"),
        sizes("plain.out"),
        "NetPIPE measured other message sizes"
    );

    let stats = stats_json(&trace);
    let sends = per_rank(&stats, "MPI_Send");
    let recvs = per_rank(&stats, "MPI_Recv");
    // Ping-pong: what one rank sends, the other receives.
    assert_eq!(
        (sends[0], sends[1]),
        (recvs[1], recvs[0]),
        "sends and receives do not pair up"
    );
    assert!(sends[0] > 1000);
    let functions: BTreeMap<String, u64> =
        serde_json::from_value(stats["functions"].clone()).unwrap();
    assert_eq!(functions["MPI_Init"], 2);
    assert_proxy_matches(&trace, &dir);
}

/// HPCC (Debian's `hpcc`, built against Open MPI) with Debian's example input (HPL at
/// N = 1000 on a 2 x 2 grid, PTRANS, RandomAccess, FFT, latency and bandwidth: 4.5 M calls,
/// about 10 s traced here). Its RandomAccess posts a receive from `MPI_ANY_SOURCE` into
/// `inreq`, and at the end `MPI_Cancel(&inreq); MPI_Wait(&inreq, ...)`
/// (RandomAccess/MPIRandomAccess.c): the trace names that request in the cancel (it used to
/// record `?`, and the proxy cancelled a null request), and the proxy builds and matches
/// (its `MPI_Get_count` after a `MPI_Testany` reads what the original received, and the
/// requests it completes untraced are not named again when Open MPI reuses their handles).
#[test]
fn hpcc_cancels_its_posted_receive_and_its_proxy_matches() {
    let input = Path::new("/usr/share/doc/hpcc/examples/_hpccinf.txt");
    if is_mpich() || !input.exists() {
        eprintln!(
            "skipped: Debian's hpcc (Open MPI) is not installed here or this is the MPICH \
             round: run scripts/setup.sh --real-apps"
        );
        return;
    }
    let dir = scratch("hpcc");
    std::fs::copy(input, dir.join("hpccinf.txt")).unwrap();
    let trace = dir.join("hpcc.cft");
    {
        let _lock = mpi_lock();
        traced(4, &trace, &["hpcc"], &dir);
    }
    let hpcc_out = std::fs::read_to_string(dir.join("hpccoutf.txt")).unwrap();
    assert!(hpcc_out.contains("Success=1"), "HPCC failed:\n{hpcc_out}");

    let decoded = run_ok(
        Command::new(conifer())
            .args(["decode", "--rank", "0"])
            .arg(&trace),
    );
    let lines: Vec<String> = String::from_utf8_lossy(&decoded.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let arg = |line: &str, name: &str| -> Option<String> {
        let from = line.find(&format!("{name}="))? + name.len() + 1;
        let rest = &line[from..];
        Some(rest[..rest.find([',', ')']).unwrap_or(rest.len())].to_string())
    };
    let cancels: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains(" MPI_Cancel("))
        .collect();
    assert!(!cancels.is_empty(), "HPCC's RandomAccess cancels a receive");
    for &i in &cancels {
        let cancelled = arg(&lines[i], "request").unwrap();
        let posted = lines[..i]
            .iter()
            .rev()
            .find(|l| l.contains(" MPI_Irecv(") && l.contains("source=MPI_ANY_SOURCE"))
            .and_then(|l| arg(l, "request"));
        assert_eq!(
            Some(&cancelled),
            posted.as_ref(),
            "the cancel names the receive posted last:\n{}",
            lines[i]
        );
        assert_eq!(
            arg(&lines[i + 1], "request"),
            Some(cancelled),
            "the wait after the cancel completes the same request:\n{}",
            lines[i + 1]
        );
    }
    assert_proxy_matches(&trace, &dir);
}
