//! Rank fields stored so ranks agree: the pattern apps (`reduce0`, `ep`, `ft`, `ftsplit`, `cg`,
//! `butterfly`, `torus`, `randpeers`, `onesided` for window targets, `mpiio` for rank-sized file offsets) traced at several rank counts, each trace verified
//! identical to the raw record, with the number of distinct behaviours and the trace's growth
//! compared with what each program's code implies (derived by hand in each test).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One traced run: its size (without each rank's own timing figures, [`flat_bytes`]),
/// distinct grammars and decoded calls.
struct Traced {
    bytes: u64,
    grammars: u64,
    trace: PathBuf,
}

/// Traces `app` on `ranks` ranks for 20 iterations and checks the trace is lossless.
fn traced(app: &str, ranks: u32) -> Traced {
    let dir = scratch(&format!("patterns-{app}-{ranks}"));
    let trace = dir.join("trace.cft");
    let _lock = mpi_lock();
    run_ok(
        conifer_run_raw(ranks, &trace, &dir)
            .arg(apps_dir().join(app))
            .arg("20"),
    );
    let verify = run_ok(Command::new(conifer()).arg("verify").arg(&trace));
    assert!(
        String::from_utf8_lossy(&verify.stdout).starts_with("identical: "),
        "{app} on {ranks} ranks: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let stats = stats_json(&trace);
    Traced {
        bytes: flat_bytes(&trace),
        grammars: stats["unique_grammars"].as_u64().unwrap(),
        trace,
    }
}

/// The peers rank `rank` named in its calls of `function` (argument `slot`), in call order.
fn peers(trace: &Path, rank: u64, function: &str, slot: &str) -> Vec<i64> {
    decode_all(trace)
        .iter()
        .filter(|c| c["rank"] == rank && c["function"] == function)
        .map(|c| c["args"][slot].as_str().unwrap().parse().unwrap())
        .collect()
}

/// Rank counts for apps that need a square or a power of two: MPICH only at 4.
fn sizes() -> &'static [u32] {
    if is_mpich() {
        &[4]
    } else {
        &[4, 16, 64]
    }
}

#[test]
fn reduce_to_rank_zero_and_rooted_collectives_give_one_behaviour_besides_the_root() {
    // reduce0: periodic Cartesian stencil + Reduce and Gather to root 0; ep: Bcast, Reduce,
    // Gather, Scatter from root 0. Only the root differs (it receives the gather).
    for app in ["reduce0", "ep"] {
        let runs: Vec<(u32, Traced)> = sizes().iter().map(|&n| (n, traced(app, n))).collect();
        for (n, t) in &runs {
            assert_eq!(t.grammars, 2, "{app} at {n} ranks: root and the others");
        }
        if let [_, mid, large] = runs.as_slice() {
            assert_flat(app, (mid.0, mid.1.bytes), (large.0, large.1.bytes));
        }
    }
}

#[test]
fn transposes_and_tori_computed_on_comm_world_agree_on_every_rank() {
    for &n in sizes() {
        // cg: partner (r mod q)·q + r div q and row butterflies r xor k; every rank alike.
        let cg = traced("cg", n);
        assert_eq!(cg.grammars, 1, "cg at {n} ranks");
        let q = (n as f64).sqrt() as i64;
        let rank = 1;
        let partner = (rank % q) * q + rank / q;
        let dests = peers(&cg.trace, rank as u64, "MPI_Sendrecv", "dest");
        assert_eq!(
            dests[0], partner,
            "cg rank 1's transpose partner at {n} ranks"
        );
        // torus: 2D periodic grid from MPI_Dims_create, neighbours by modular arithmetic.
        let torus = traced("torus", n);
        assert_eq!(torus.grammars, 1, "torus at {n} ranks");
        // ft: Alltoall + Alltoallv with the same counts from every rank.
        let ft = traced("ft", n);
        assert_eq!(ft.grammars, 1, "ft at {n} ranks");
    }
    if !is_mpich() {
        let (small, large) = (traced("torus", 16), traced("torus", 64));
        assert_flat("torus", (16, small.bytes), (64, large.bytes));
    }
}

#[test]
fn split_colours_and_keys_and_the_roots_buffer_do_not_keep_ranks_apart() {
    // ftsplit (NPB FT's set-up): Comm_split(WORLD, 0, rank) and Comm_split(WORLD, rank, 0),
    // then Alltoall, Allreduce and a Reduce to rank 0 into a local variable every rank
    // passes. Once colour and key are stored as functions of the rank and the root's buffer
    // as passed, every rank makes the same calls: one behaviour.
    let runs: Vec<(u32, Traced)> = sizes().iter().map(|&n| (n, traced("ftsplit", n))).collect();
    for (n, t) in &runs {
        assert_eq!(t.grammars, 1, "ftsplit at {n} ranks");
        let calls = decode_all(&t.trace);
        for rank in 0..u64::from(*n) {
            let of = |function: &str| -> Vec<&serde_json::Value> {
                calls
                    .iter()
                    .filter(|c| c["rank"] == rank && c["function"] == function)
                    .collect()
            };
            // The program's own arguments, as it passed them (the source above).
            let splits = of("MPI_Comm_split");
            let args = |i: usize, slot: &str| splits[i]["args"][slot].as_str().unwrap().to_string();
            assert_eq!(
                (args(0, "color"), args(0, "key")),
                ("0".into(), rank.to_string())
            );
            assert_eq!(
                (args(1, "color"), args(1, "key")),
                (rank.to_string(), "0".into())
            );
            let reduces = of("MPI_Reduce");
            assert_eq!(reduces.len(), 20, "rank {rank}");
            assert!(
                reduces[0]["args"]["recvbuf"]
                    .as_str()
                    .unwrap()
                    .starts_with("stack+"),
                "rank {rank}'s Reduce names its receive buffer: {}",
                reduces[0]
            );
        }
    }
    if let [_, mid, large] = runs.as_slice() {
        assert_flat("ftsplit", (mid.0, mid.1.bytes), (large.0, large.1.bytes));
    }
}

#[test]
fn butterflies_and_binary_tree_reductions_differ_only_by_tree_level() {
    for &n in sizes() {
        // Every rank does the same log2 P xor exchanges; in the tree reduction rank r > 0
        // receives ctz(r) times then sends once, rank 0 receives log2 P times: log2 P + 1
        // behaviours (ctz = 0 .. log2 P − 1, and the root).
        let t = traced("butterfly", n);
        let levels = u64::from(n.trailing_zeros());
        assert_eq!(t.grammars, levels + 1, "butterfly at {n} ranks");
        let xors: Vec<i64> = peers(&t.trace, 3, "MPI_Sendrecv", "dest");
        let first: Vec<i64> = (0..levels).map(|k| 3 ^ (1 << k)).collect();
        assert_eq!(
            &xors[..levels as usize],
            first.as_slice(),
            "rank 3's partners"
        );
    }
}

#[test]
fn random_peers_are_recorded_without_loss() {
    // No code makes random pairings agree: the trace need not be flat, only exact (verified
    // in `traced`), and each rank's partners are those the pairing gave it.
    let n = if is_mpich() { 4 } else { 16 };
    let t = traced("randpeers", n);
    assert!(t.grammars >= 1);
    let calls = decode_all(&t.trace);
    for c in calls.iter().filter(|c| c["function"] == "MPI_Sendrecv") {
        let dest: i64 = c["args"]["dest"].as_str().unwrap().parse().unwrap();
        assert!((0..i64::from(n)).contains(&dest) && dest != c["rank"].as_i64().unwrap());
    }
}

#[test]
fn addresses_are_recorded_as_buffers_so_pairs_agree() {
    // datatypes: Send/Recv between pairs (r, r xor 1), the lower one sending first, and
    // MPI_Get_address of its struct's fields: two behaviours (even and odd ranks), with each
    // address recorded as the buffer it points into (equal to the call's location).
    let n = if is_mpich() { 4 } else { 16 };
    let t = traced("datatypes", n);
    assert_eq!(t.grammars, 2, "datatypes at {n} ranks");
    let calls = decode_all(&t.trace);
    let addresses: Vec<_> = calls
        .iter()
        .filter(|c| c["function"] == "MPI_Get_address")
        .collect();
    assert!(!addresses.is_empty());
    for c in addresses {
        assert_eq!(c["args"]["address"], c["args"]["location"], "{c}");
    }
}

#[test]
fn one_sided_targets_are_relative_to_the_window() {
    // onesided: every rank puts to (r + 1) mod P and gets from (r − 1) mod P through a window
    // on MPI_COMM_WORLD, so every rank behaves alike once targets are relative to the
    // window's group.
    let runs: Vec<(u32, Traced)> = sizes()
        .iter()
        .map(|&n| (n, traced("onesided", n)))
        .collect();
    for (n, t) in &runs {
        assert_eq!(t.grammars, 1, "onesided at {n} ranks");
        let p = i64::from(*n);
        for rank in [0, p / 2, p - 1] {
            let r = rank as u64;
            let puts = peers(&t.trace, r, "MPI_Put", "target_rank");
            let gets = peers(&t.trace, r, "MPI_Get", "target_rank");
            assert!(!puts.is_empty() && !gets.is_empty());
            assert!(puts.iter().all(|&t| t == (rank + 1) % p), "{puts:?}");
            assert!(gets.iter().all(|&t| t == (rank + p - 1) % p), "{gets:?}");
        }
    }
    if let [_, mid, large] = runs.as_slice() {
        assert_flat("onesided", (mid.0, mid.1.bytes), (large.0, large.1.bytes));
    }
}

#[test]
fn file_views_at_rank_sized_offsets_agree_across_ranks() {
    // mpiio: MPI_File_set_view(disp = rank · BLK · sizeof(int)), BLK = 32, on every rank;
    // rank 0 also deletes the file, so two behaviours whatever the size.
    let runs: Vec<(u32, Traced)> = sizes().iter().map(|&n| (n, traced("mpiio", n))).collect();
    for (n, t) in &runs {
        assert_eq!(t.grammars, 2, "mpiio at {n} ranks: rank 0 and the others");
        let calls = decode_all(&t.trace);
        for rank in 0..u64::from(*n) {
            let disp: Vec<&str> = calls
                .iter()
                .filter(|c| c["rank"] == rank && c["function"] == "MPI_File_set_view")
                .map(|c| c["args"]["disp"].as_str().unwrap())
                .collect();
            assert_eq!(disp, [(rank * 32 * 4).to_string()], "rank {rank}");
        }
    }
}

#[test]
fn inter_communicator_partners_are_relative_to_the_local_rank() {
    // comms: split by parity with key = rank (half rank = rank div 2), then per iteration a
    // Sendrecv across the inter-communicator with the remote rank of the same index; the last
    // Sendrecv is the ring on a world duplicate. Even sizes: every rank has its partner.
    let n = if is_mpich() { 4 } else { 16 };
    let t = traced("comms", n);
    let calls = decode_all(&t.trace);
    for rank in 0..u64::from(n) {
        let mut exchanges: Vec<(&str, &str)> = calls
            .iter()
            .filter(|c| c["rank"] == rank && c["function"] == "MPI_Sendrecv")
            .map(|c| {
                let a = &c["args"];
                (a["dest"].as_str().unwrap(), a["source"].as_str().unwrap())
            })
            .collect();
        exchanges.pop();
        assert_eq!(exchanges.len(), 20, "rank {rank}");
        let half = (rank / 2).to_string();
        assert!(
            exchanges.iter().all(|&(d, s)| d == half && s == half),
            "rank {rank}: {exchanges:?}"
        );
    }
}
