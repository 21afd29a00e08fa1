//! The recorder copies a call's encoded inputs from a recent call with the same raw arguments
//! (its input memo) unless an object behind them changed. `tests/memo/reuse.c` makes calls
//! whose raw arguments come back while the objects behind them are new: a datatype, a heap
//! block and a communicator freed and made again at the same handle or address. The recorded
//! names are derived by hand (lowest-first ids), and the trace must equal the one recorded
//! with the memo off (`CONIFER_INPUT_MEMO=0`), where every input is encoded afresh.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Rounds the program runs.
const ROUNDS: usize = 3;

/// The (sendtype, sendbuf, comm) of each round's seven `MPI_Sendrecv`, in order, as
/// `reuse.c`'s comment derives them: type B is `type1` and C, made after both were freed,
/// `type0`; blocks P and Q are `seg0` and `seg1`, and R, after both were freed, `seg0`;
/// duplicates D and E are `comm0` and `comm1`, and F gets D's freed id.
fn expected_round() -> Vec<(&'static str, &'static str, &'static str)> {
    let world = "MPI_COMM_WORLD";
    vec![
        ("type1", "stack", world),
        ("type0", "stack", world),
        ("MPI_INT", "seg0+0", world),
        ("MPI_INT", "seg1+0", world),
        ("MPI_INT", "seg0+0", world),
        ("MPI_INT", "stack", "comm1"),
        ("MPI_INT", "stack", "comm0"),
    ]
}

/// Per rank, the (sendtype, sendbuf, comm) of its `MPI_Sendrecv` calls in order; stack
/// buffers as `stack` (their offsets depend on the compiler's frame layout).
fn sendrecvs(trace: &Path) -> BTreeMap<u64, Vec<(String, String, String)>> {
    let mut per_rank: BTreeMap<u64, Vec<(String, String, String)>> = BTreeMap::new();
    for call in decode_all(trace)
        .iter()
        .filter(|c| c["function"] == "MPI_Sendrecv")
    {
        let arg = |name: &str| call["args"][name].as_str().unwrap_or_default().to_string();
        let buffer = arg("sendbuf");
        let buffer = if buffer.starts_with("stack+") {
            "stack".to_string()
        } else {
            buffer
        };
        per_rank
            .entry(call["rank"].as_u64().expect("rank"))
            .or_default()
            .push((arg("sendtype"), buffer, arg("comm")));
    }
    per_rank
}

#[test]
fn remembered_inputs_are_never_reused_for_new_objects() {
    let dir = scratch("input-memo");
    let program = dir.join("reuse");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/memo/reuse.c");
    mpi_compile(
        "mpicc",
        &["-O2", "-Wall", "-Wextra", "-Werror"],
        &program,
        &source,
    );
    let rounds = ROUNDS.to_string();
    let (memo, out) = traced_run(&dir, "memo", 2, &[], &program, &[&rounds]);
    let (fresh, fresh_out) = traced_run_with(
        &dir,
        "fresh",
        2,
        &[],
        &[("CONIFER_INPUT_MEMO", "0")],
        &program,
        &[&rounds],
    );
    for out in [&out, &fresh_out] {
        let results = lines_with(&out.stdout, "RESULT ");
        assert_eq!(results.len(), 2, "{results:?}");
        assert!(
            results.iter().all(|l| l.ends_with(" failures=0")),
            "{results:?}"
        );
    }
    // The MPI and malloc gave the freed handles and addresses back in some rounds: otherwise
    // the raw arguments never repeat and the memo is not put to the test.
    for line in lines_with(&out.stdout, "REUSED ") {
        for kind in ["types", "blocks", "comms"] {
            assert!(
                field_value(&line, kind) > 0,
                "{kind} never came back: {line}"
            );
        }
    }
    let expected: Vec<(String, String, String)> = expected_round()
        .iter()
        .map(|(t, b, c)| (t.to_string(), b.to_string(), c.to_string()))
        .cycle()
        .take(ROUNDS * expected_round().len())
        .collect();
    let recorded = sendrecvs(&memo);
    assert_eq!(recorded.len(), 2);
    for (rank, calls) in &recorded {
        assert_eq!(calls, &expected, "rank {rank}");
    }
    assert_eq!(recorded, sendrecvs(&fresh));
    let diff = Command::new(conifer())
        .arg("diff")
        .arg(&memo)
        .arg(&fresh)
        .output()
        .expect("conifer diff runs");
    assert!(
        diff.status.success(),
        "{}",
        String::from_utf8_lossy(&diff.stdout)
    );
}
