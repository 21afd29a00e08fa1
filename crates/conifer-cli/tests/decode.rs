//! `conifer decode` restores what the program really passed: checked against facts derived
//! by hand from the program, not against Conifer's own output.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn arg<'a>(call: &'a serde_json::Value, name: &str) -> &'a str {
    call["args"][name]
        .as_str()
        .unwrap_or_else(|| panic!("{call} has no argument {name}"))
}

#[test]
fn c_stencil_messages_pair_up_and_edges_are_proc_null() {
    check_stencil("stencil2d");
}

#[test]
fn fortran_stencil_messages_pair_up_and_edges_are_proc_null() {
    check_stencil("stencil2d_f");
}

#[test]
fn fortran_2008_stencil_messages_pair_up_and_edges_are_proc_null() {
    check_stencil("stencil2d08_f");
}

fn check_stencil(app: &str) {
    let (ranks, iterations) = if is_mpich() { (4, 3) } else { (9, 3) };
    let dir = scratch(&format!("decode-{app}"));
    let trace = dir.join("stencil.cft");
    let out = {
        let _lock = mpi_lock();
        run_ok(
            Command::new(conifer())
                .args(["run", "-n", &ranks.to_string(), "-o"])
                .arg(&trace)
                .arg(apps_dir().join(app))
                .arg(iterations.to_string())
                .current_dir(&dir),
        )
    };
    // The app reports its process grid, e.g. "dims=3x3".
    let result = lines_with(&out.stdout, "RESULT rank=0 ").remove(0);
    let dims = result
        .split_whitespace()
        .find_map(|w| w.strip_prefix("dims="))
        .unwrap();
    let (px, py) = dims.split_once('x').unwrap();
    let (px, py): (u64, u64) = (px.parse().unwrap(), py.parse().unwrap());

    let calls = decode_all(&trace);
    let mut sends: BTreeMap<(u64, String, String), u64> = BTreeMap::new();
    let mut recvs: BTreeMap<(u64, String, String), u64> = BTreeMap::new();
    let mut proc_null_sends = 0;
    for call in &calls {
        let rank = call["rank"].as_u64().unwrap();
        match call["function"].as_str().unwrap() {
            "MPI_Comm_rank" => assert_eq!(
                arg(call, "rank"),
                rank.to_string(),
                "decoded rank of rank {rank}"
            ),
            "MPI_Isend" if arg(call, "dest") == "MPI_PROC_NULL" => proc_null_sends += 1,
            "MPI_Isend" => {
                *sends
                    .entry((
                        rank,
                        arg(call, "dest").to_string(),
                        arg(call, "tag").to_string(),
                    ))
                    .or_default() += 1
            }
            "MPI_Irecv" if arg(call, "source") == "MPI_PROC_NULL" => {}
            "MPI_Irecv" => {
                let key = (
                    arg(call, "source").parse().unwrap(),
                    rank.to_string(),
                    arg(call, "tag").to_string(),
                );
                *recvs.entry(key).or_default() += 1
            }
            _ => {}
        }
    }
    assert!(!sends.is_empty());
    // Every message sent from r to d with tag t is received by d from r with tag t.
    assert_eq!(
        sends, recvs,
        "sends and receives of the decoded trace do not pair up"
    );
    // A px x py grid without wrap-around has 2*px + 2*py neighbour slots off the grid.
    assert_eq!(
        proc_null_sends,
        (2 * px + 2 * py) * iterations,
        "MPI_PROC_NULL sends"
    );
}

#[test]
fn lossless_timing_keeps_every_call_and_agrees_with_the_aggregates() {
    let dir = scratch("decode-timing");
    let trace = dir.join("ring.cft");
    {
        let _lock = mpi_lock();
        run_ok(
            Command::new(conifer())
                .args(["run", "--timing", "lossless", "-n", "2", "-o"])
                .arg(&trace)
                .arg(apps_dir().join("ring"))
                .arg("50")
                .current_dir(&dir),
        );
    }
    let calls = decode_all(&trace);
    let stats = stats_json(&trace);
    assert_eq!(calls.len() as u64, stats["calls"].as_u64().unwrap());
    // Per rank: calls start in order and never overlap. The aggregates kept alongside (same
    // clock, other path) pool each timing family over all ranks; in ring every function has
    // one family (one signature per function on every rank), so per function the mean of the
    // per-call durations, and of the intervals before the calls (0 before a rank's first),
    // over both ranks equals the aggregate means.
    let mut per_function: BTreeMap<String, (f64, f64, u64, f64, f64)> = BTreeMap::new();
    let mut previous_end: BTreeMap<u64, u64> = BTreeMap::new();
    for call in &calls {
        let rank = call["rank"].as_u64().unwrap();
        let start = call["start_ns"].as_u64().expect("every call has its start");
        let duration = call["duration_ns"]
            .as_u64()
            .expect("every call has its duration");
        let first = !previous_end.contains_key(&rank);
        let end = previous_end.entry(rank).or_insert(0);
        assert!(
            start >= *end,
            "rank {rank}: call starts before the previous one ended"
        );
        let interval = if first { 0 } else { start - *end };
        *end = start + duration;
        let entry = per_function
            .entry(call["function"].as_str().unwrap().to_string())
            .or_insert((0.0, 0.0, 0, 0.0, 0.0));
        entry.0 += duration as f64;
        entry.1 += interval as f64;
        entry.2 += 1;
        entry.3 = call["mean_ns"].as_f64().unwrap();
        entry.4 = call["mean_interval_ns"].as_f64().unwrap();
    }
    for (function, (durations, intervals, n, mean, mean_interval)) in per_function {
        let (own, own_interval) = (durations / n as f64, intervals / n as f64);
        // Quantised to 0.07%, and each call rounded to a nanosecond by the timeline.
        assert!(
            (own - mean).abs() <= 1.0 + mean * 1e-3,
            "{function}: mean {own} vs aggregate {mean}"
        );
        assert!(
            (own_interval - mean_interval).abs() <= 1.0 + mean_interval * 1e-3,
            "{function}: mean interval {own_interval} vs aggregate {mean_interval}"
        );
    }
}

#[test]
fn a_buffer_allocated_anew_every_iteration_keeps_its_segment() {
    let dir = scratch("decode-heap");
    let trace = dir.join("heap.cft");
    let iterations = 8;
    let out = {
        let _lock = mpi_lock();
        run_ok(
            Command::new(conifer())
                .args(["run", "-n", "2", "-o"])
                .arg(&trace)
                .arg(apps_dir().join("heapbuf"))
                .arg(iterations.to_string())
                .current_dir(&dir),
        )
    };
    // heapbuf.c: iteration `it` sends &buf[it % 4] and receives into &buf[4 + it % 4] of a
    // fresh 8 x 8-byte allocation.
    for rank in 0..2 {
        let sendrecvs: Vec<_> = decode_all(&trace)
            .into_iter()
            .filter(|c| c["rank"] == rank && c["function"] == "MPI_Sendrecv")
            .collect();
        assert_eq!(sendrecvs.len(), iterations);
        // ... and frees it after each exchange: one `free` event per iteration.
        let frees = decode_all(&trace)
            .into_iter()
            .filter(|c| c["rank"] == rank && c["function"] == "free")
            .count();
        // ... plus the munmap of the mapped buffer at the end. MPICH's UCX patches the
        // program's mmap/munmap to its own hooks, which call the C library directly, so
        // Conifer does not see mapped buffers there.
        let mapped_seen = !is_mpich();
        assert_eq!(
            frees,
            iterations + usize::from(mapped_seen),
            "rank {rank}: free events"
        );
        if mapped_seen {
            // The mapped buffer: one segment, at the two offsets the program used.
            let bcasts: Vec<String> = decode_all(&trace)
                .into_iter()
                .filter(|c| c["rank"] == rank && c["function"] == "MPI_Bcast")
                .map(|c| arg(&c, "buffer").to_string())
                .collect();
            assert_eq!(bcasts.len(), 2);
            let mapped = bcasts[0]
                .strip_suffix("+4096")
                .expect("mapped buffer at offset 4096");
            assert_eq!(bcasts[1], format!("{mapped}+65536"));
        }
        assert_static_data_is_one_segment(&trace, rank, &out.stdout);
        let segment = arg(&sendrecvs[0], "sendbuf")
            .split('+')
            .next()
            .unwrap()
            .to_string();
        for (it, call) in sendrecvs.iter().enumerate() {
            let slot = 8 * (it % 4);
            assert_eq!(
                arg(call, "sendbuf"),
                format!("{segment}+{slot}"),
                "rank {rank} iteration {it}"
            );
            assert_eq!(
                arg(call, "recvbuf"),
                format!("{segment}+{}", 32 + slot),
                "rank {rank} iteration {it}"
            );
        }
    }
}

/// heapbuf.c's `MPI_Allreduce`s from and into static data (a `.bss` array and a `.data`
/// scalar) name one segment, at offsets whose distances are the ones the program printed
/// (`STATIC <send> <receive>`: byte distances from `panel[0]`).
fn assert_static_data_is_one_segment(trace: &Path, rank: u64, stdout: &[u8]) {
    let mut distances: Vec<(i64, i64)> = lines_with(stdout, "STATIC ")
        .iter()
        .map(|line| {
            let mut words = line.split_whitespace().skip(1);
            let mut next = || words.next().unwrap().parse::<i64>().unwrap();
            (next(), next())
        })
        .collect();
    assert_eq!(distances.len(), 4, "STATIC lines");
    distances.sort();
    let buffers: Vec<(String, i64)> = decode_all(trace)
        .into_iter()
        .filter(|c| c["rank"] == rank && c["function"] == "MPI_Allreduce")
        .flat_map(|c| {
            [
                arg(&c, "sendbuf").to_string(),
                arg(&c, "recvbuf").to_string(),
            ]
        })
        .map(|b| {
            let (segment, offset) = b.split_once('+').unwrap_or((&b, "0"));
            (segment.to_string(), offset.parse().expect("segment offset"))
        })
        .collect();
    assert_eq!(buffers.len(), 8, "rank {rank}: {buffers:?}");
    assert!(
        buffers
            .iter()
            .all(|(s, _)| *s == buffers[0].0 && s.starts_with("seg")),
        "rank {rank}: static buffers in one segment: {buffers:?}"
    );
    // panel[0] is the first call's send buffer (distance 0).
    let base = buffers[0].1;
    let mut recorded: Vec<(i64, i64)> = buffers
        .chunks(2)
        .map(|pair| (pair[0].1 - base, pair[1].1 - base))
        .collect();
    recorded.sort();
    assert_eq!(recorded, distances, "rank {rank}");
}

#[test]
fn relative_tags_decode_to_the_same_calls() {
    let dir = scratch("decode-relative-tags");
    let (mut decoded, mut records) = (Vec::new(), Vec::new());
    for (name, extra) in [("plain", None), ("relative", Some("--relative-tags"))] {
        let trace = dir.join(format!("{name}.cft"));
        let _lock = mpi_lock();
        let mut cmd = Command::new(conifer());
        cmd.args(["run", "--raw", "-n", "4", "-o"]).arg(&trace);
        cmd.args(extra);
        run_ok(
            cmd.arg(apps_dir().join("stencil2d"))
                .arg("3")
                .current_dir(&dir),
        );
        let verify = run_ok(Command::new(conifer()).arg("verify").arg(&trace));
        assert!(String::from_utf8_lossy(&verify.stdout).starts_with("identical: "));
        let calls: Vec<String> = decode_all(&trace)
            .iter()
            .filter(|c| c["function"] != "MPI_Init")
            .map(|c| format!("{} {} {}", c["rank"], c["function"], c["args"]))
            .collect();
        decoded.push(calls);
        let raw = dir.join(format!("{name}.cft.raw"));
        let ranks: Vec<Vec<u8>> = (0..4)
            .map(|r| std::fs::read(raw.join(format!("rank{r}.raw"))).unwrap())
            .collect();
        records.push(ranks);
    }
    // The option changes what is recorded (stencil2d's tags do not follow the rank): the raw
    // records differ (the compressed signature tables may still be equally long)...
    assert_ne!(records[0], records[1], "--relative-tags changed nothing");
    assert!(decoded[0].iter().any(|c| c.contains("\"tag\"")));
    assert_eq!(
        decoded[0], decoded[1],
        "tags recorded relative must decode to the values passed"
    );
}

#[test]
fn fortran_mpi_in_place_is_named() {
    let dir = scratch("decode-inplace");
    let trace = dir.join("inplace.cft");
    {
        let _lock = mpi_lock();
        run_ok(
            Command::new(conifer())
                .args(["run", "-n", "2", "-o"])
                .arg(&trace)
                .arg(apps_dir().join("inplace_f"))
                .arg("4")
                .current_dir(&dir),
        );
    }
    // inplace.f90 passes MPI_IN_PLACE as the send buffer of every MPI_ALLREDUCE.
    let reductions: Vec<_> = decode_all(&trace)
        .into_iter()
        .filter(|c| c["function"] == "MPI_Allreduce")
        .collect();
    assert_eq!(reductions.len(), 8);
    for call in &reductions {
        assert_eq!(arg(call, "sendbuf"), "MPI_IN_PLACE", "{call}");
        assert_eq!(arg(call, "datatype"), "MPI_INTEGER", "{call}");
    }
}

/// Parses a decoded integer array such as `[1,0,2]`.
fn int_array(text: &str) -> Vec<i64> {
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{text} is not an array"));
    inner
        .split(',')
        .map(|v| v.parse().expect("an integer"))
        .collect()
}

/// Arrays whose length is the communicator's number of dimensions (MPI_Cart_rank's coords,
/// MPI_Cart_sub's remain_dims) are recorded in full: stencil3d asks for the rank of its +x
/// neighbour by coordinates and keeps the y-z plane.
#[test]
fn cartesian_coordinates_and_remain_dims_are_recorded() {
    let ranks = if is_mpich() { 4 } else { 12 };
    let dir = scratch("decode-cartesian");
    let options = [];
    let trace = traced(
        &dir,
        "s3",
        ranks,
        &options,
        &apps_dir().join("stencil3d"),
        &["2"],
    );
    let calls = decode_all(&trace);
    let of = |rank: u64, function: &str| {
        calls
            .iter()
            .find(|c| c["rank"] == rank && c["function"] == function)
            .unwrap_or_else(|| panic!("rank {rank} made no {function}"))
    };
    for rank in 0..u64::from(ranks) {
        let dims = int_array(arg(of(rank, "MPI_Cart_create"), "dims"));
        let coords = int_array(arg(of(rank, "MPI_Cart_coords"), "coords"));
        // MPI numbers a Cartesian communicator's ranks row-major (no reorder: as in world).
        let row_major = |c: &[i64]| c.iter().zip(&dims).fold(0, |r, (c, d)| r * d + c);
        assert_eq!(row_major(&coords), rank as i64, "rank {rank}'s coordinates");
        let next_x = vec![(coords[0] + 1) % dims[0], coords[1], coords[2]];
        let cart_rank = of(rank, "MPI_Cart_rank");
        assert_eq!(int_array(arg(cart_rank, "coords")), next_x, "rank {rank}");
        assert_eq!(arg(cart_rank, "rank"), row_major(&next_x).to_string());
        let sub = of(rank, "MPI_Cart_sub");
        assert_eq!(int_array(arg(sub, "remain_dims")), vec![0, 1, 1]);
    }
}

/// The message sizes `msgsizes` sends, in bytes, by tag (see `tests/apps/msgsizes.c`).
const MSGSIZES_BYTES: [i64; 7] = [0, 1, 7, 8, 1000, 65536, (1 << 20) + 3];

/// The `key=value` field of a decoded status such as `{src=1,tag=0,err=0,bytes=8}`.
fn status_field(status: &str, key: &str) -> i64 {
    status
        .trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("status {status} has no {key}"))
        .parse()
        .unwrap()
}

#[test]
fn received_byte_counts_are_the_sizes_sent() {
    // 84 statuses of each kind: every size, several times over.
    let iterations = 12;
    let dir = scratch("decode-msgsizes");
    let trace = dir.join("msgsizes.cft");
    {
        let _lock = mpi_lock();
        run_ok(
            Command::new(conifer())
                .args(["run", "-n", "2", "-o"])
                .arg(&trace)
                .arg(apps_dir().join("msgsizes"))
                .arg(iterations.to_string())
                .current_dir(&dir),
        );
    }
    let (mut recvs, mut waits) = (0, 0);
    for call in decode_all(&trace) {
        let function = call["function"].as_str().unwrap();
        if function != "MPI_Recv" && function != "MPI_Wait" {
            continue;
        }
        let status = arg(&call, "status");
        let tag = status_field(status, "tag");
        let bytes = status_field(status, "bytes");
        if function == "MPI_Recv" {
            assert_eq!(bytes, MSGSIZES_BYTES[tag as usize], "MPI_Recv {status}");
            recvs += 1;
        } else {
            let sent = MSGSIZES_BYTES[(tag - 100) as usize] / 4 * 4;
            assert_eq!(bytes, sent, "MPI_Wait {status}");
            waits += 1;
        }
    }
    let expected = iterations * MSGSIZES_BYTES.len();
    assert_eq!((recvs, waits), (expected, expected));
}

/// resplit.c makes a communicator, frees it and makes another with the ranks reversed (the
/// MPI may hand out the same handle): each rank's position differs between the two, so they
/// must not share a symbolic id (relative ranks are restored from the id's position). The
/// Sendrecv peers decoded must be the local ranks the program printed.
#[test]
fn a_communicator_made_again_with_other_positions_decodes_its_peers() {
    let dir = scratch("decode-resplit");
    let binary = dir.join("resplit");
    mpi_compile(
        "mpicc",
        &["-O1"],
        &binary,
        &repo_root().join("crates/conifer-cli/tests/resplit.c"),
    );
    let ranks = if is_mpich() { 3 } else { 4 };
    let (trace, out) = traced_run(&dir, "resplit", ranks, &[], &binary, &[]);
    let mut printed: Vec<String> = lines_with(&out.stdout, "SENT ");
    printed.sort();
    let mut decoded = Vec::new();
    for call in decode_all(&trace) {
        if call["function"] != "MPI_Sendrecv" {
            continue;
        }
        decoded.push(format!(
            "SENT round={} world={} dest={} source={}",
            arg(&call, "sendtag"),
            call["rank"],
            arg(&call, "dest"),
            arg(&call, "source")
        ));
    }
    decoded.sort();
    assert_eq!(printed.len(), 2 * ranks as usize);
    assert_eq!(decoded, printed);
}
