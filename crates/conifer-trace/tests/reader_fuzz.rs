//! The reader on damaged input: random flips, truncations and splices of real-shaped traces
//! (one recorded with grammars, one with trace trees),
//! both as raw bytes (caught by the checksums) and inside section payloads with the checksums
//! recomputed (so the section parsers themselves see the damage). Reading must return a
//! result — never panic — and whatever it accepts must decode without panicking. Each case's
//! decode is bounded to a number of calls, so a damaged exponent cannot turn the test into a
//! hang, while the reader's own allocations are bounded by design (counts checked against the
//! bytes left, rank counts and letter counts capped).

use conifer_compress::Grammar;
use conifer_format::partial::PartialRecord;
use conifer_format::rank_record::{CallTiming, Membership, RankRecord};
use conifer_format::{read_sections, write_sections};
use conifer_trace::value::{HandleKind, HandleRef, Rank, Value};
use conifer_trace::{FunctionInfo, Language, Metadata, ReadCalls, Trace};
use conifer_write::merge::merge;
use proptest::prelude::*;

fn signature(function: u64, values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    conifer_trace::varint::put_u64(&mut out, function);
    conifer_trace::varint::put_u64(&mut out, 0);
    values.iter().for_each(|v| v.encode(&mut out));
    Value::Int(0).encode(&mut out);
    out
}

/// A 6-rank trace with relative ranks, a grid communicator, timing, timelines and value
/// streams (ten signatures differing in one integer).
fn sample() -> Trace {
    let comm = Value::Handle(HandleKind::Comm, HandleRef::Id(0));
    let records = (0..6i64)
        .map(|rank| {
            let mut sigs = vec![
                signature(0, &[Value::Rank(Rank::Relative(1)), comm.clone()]),
                signature(1, &[Value::Rank(Rank::Grid(3)), comm.clone()]),
                signature(0, &[Value::Coords(vec![0, -1]), comm.clone()]),
            ];
            sigs.extend((0..10).map(|k| signature(1, &[Value::Int(k * 3), comm.clone()])));
            let mut g = Grammar::new();
            let mut timing = vec![CallTiming::default(); sigs.len()];
            for i in 0..(50 + rank as u32 % 2) {
                let t = if i % 4 == 3 { 3 + i % 10 } else { i % 3 };
                g.push(t);
                timing[t as usize].add(5.0, 100.0 + f64::from(i));
            }
            let mut comms = vec![Membership {
                comm: {
                    let mut b = Vec::new();
                    comm.encode(&mut b);
                    b
                },
                my_rank: rank,
                grid: conifer_trace::grid::Grid::new(vec![2, 3], vec![true, false]),
                leader: Some(0),
            }];
            comms.push(Membership {
                comm: vec![2, 0, 0, 2],
                my_rank: 0,
                grid: None,
                leader: u32::try_from(rank).ok(),
            });
            let times: Vec<conifer_trace::timeline::CallTime> = (0..g.len())
                .map(|i| conifer_trace::timeline::CallTime {
                    interval_ns: i,
                    duration_ns: 7,
                })
                .collect();
            let record = RankRecord {
                signatures: sigs,
                timing,
                grammars: vec![g.freeze()],
                comms,
                timelines: vec![conifer_trace::timeline::encode(&times)],
                ..Default::default()
            };
            (record, vec![(0, 34), (1, 17)], format!("node{}", rank / 4))
        })
        .collect();
    Trace {
        meta: Metadata {
            conifer_version: "0.1.0".into(),
            mpi: "openmpi".into(),
            mpi_library_version: "x".into(),
            command_line: vec!["./app".into()],
            ranks: 6,
            start_unix_seconds: 0.0,
            partial: false,
            missing_ranks: Vec::new(),
            options: Vec::new(),
            partial_reasons: Vec::new(),
            modules: Vec::new(),
        },
        catalog: (0..2)
            .map(|id| FunctionInfo {
                id,
                name: format!("MPI_F{id}"),
                language: Language::C,
                slots: vec!["peer".into(), "comm".into()],
            })
            .collect(),
        record: merge(records),
    }
}

/// The structure tree of [`tree_sample`]: Init(1), loop(2) { arm(3) { Send(4) }, Recv(5) },
/// Finalize(6), as `conifer tree --json` prints it.
const STRUCTURE: &str = r#"{"id":0,"kind":"root","children":[
    {"id":1,"kind":"mpi","name":"MPI_Init","loc":{"file":"a.c","line":3}},
    {"id":2,"kind":"loop","children":[
        {"id":3,"kind":"branch","children":[{"id":4,"kind":"mpi","name":"MPI_Send"}]},
        {"id":5,"kind":"mpi","name":"MPI_Recv"}]},
    {"id":6,"kind":"mpi","name":"MPI_Finalize"}]}"#;

/// A 5-rank trace recorded in tree mode: trace trees that differ by rank, calls outside the
/// tree (a grammar per rank) between tree calls.
fn tree_sample() -> Trace {
    let structure = conifer_trace::forest::Structure::from_json(STRUCTURE.as_bytes()).unwrap();
    let records = (0..5u32)
        .map(|rank| {
            let sigs = (0..4)
                .map(|f: u64| signature(f % 2, &[Value::Int(f as i64)]))
                .collect();
            let mut tree = conifer_compress::tree::TreeBuilder::new(structure.shape.clone(), 4);
            let mut foreign = Grammar::new();
            let mut timing = vec![CallTiming::default(); 4];
            let mut call =
                |site: Option<u32>, t: u32, tree: &mut conifer_compress::tree::TreeBuilder| {
                    timing[t as usize].add(1.0, 10.0);
                    if !tree.call(site, t) {
                        foreign.push(t);
                    }
                };
            call(Some(1), 0, &mut tree);
            for i in 0..(20 + rank) {
                tree.activate(2);
                if (i + rank) % 3 == 0 {
                    tree.activate(3);
                    call(Some(4), 1, &mut tree);
                }
                call(Some(5), 2, &mut tree);
                if i % 7 == rank {
                    call(None, 3, &mut tree);
                }
            }
            tree.leave(2);
            call(Some(6), 0, &mut tree);
            let record = RankRecord {
                signatures: sigs,
                timing,
                grammars: vec![foreign.freeze()],
                structure: Some(structure.clone()),
                trees: vec![Some(tree.record())],
                ..Default::default()
            };
            (record, vec![(0, 1)], "node".to_string())
        })
        .collect();
    let mut trace = sample();
    trace.meta.ranks = 5;
    trace.record = merge(records);
    trace
}

/// Reads `bytes` as a trace and, when accepted, decodes a bounded number of calls per rank.
fn read_and_decode(bytes: &[u8]) {
    if let Ok(trace) = Trace::from_bytes(bytes) {
        for rank in 0..trace.meta.ranks {
            for call in trace.calls(rank).take(500).flatten() {
                let _ = call.to_string();
            }
        }
        let _ = trace.function_counts();
    }
    let _ = PartialRecord::from_bytes(bytes);
}

#[test]
fn the_sample_is_valid() {
    let t = sample();
    let back = Trace::from_bytes(&t.to_bytes()).unwrap();
    assert_eq!(back.calls(0).count(), 50);
    assert_eq!(back.calls(1).count(), 51);
    assert_eq!(back.record.ranks[3].host, "node0");
    // The ten integer variants became one skeleton with a stream, filled back in order:
    // call i = 3, 7, 11, ... carries 3 · (i mod 10).
    assert!(!back.record.streams.is_empty());
    let values: Vec<String> = back
        .calls(0)
        .map(|c| c.unwrap())
        .filter(|c| c.index % 4 == 3)
        .map(|c| c.signature.values[0].display(None).to_string())
        .collect();
    let expected: Vec<String> = (0..50u64)
        .filter(|i| i % 4 == 3)
        .map(|i| ((i % 10) * 3).to_string())
        .collect();
    assert_eq!(values, expected);
}

/// Calls of one terminal share one parsed signature; calls filled from value streams are
/// flagged and parsed each on their own; the functions a rank calls come from its terminals.
#[test]
fn calls_share_their_terminals_signature() {
    let back = Trace::from_bytes(&sample().to_bytes()).unwrap();
    let reader = back.reader();
    let calls: Vec<_> = reader.calls(0).map(|c| c.unwrap()).collect();
    // The sample's rank 0: call i is a stream-filled variant when i mod 4 = 3.
    for c in &calls {
        assert_eq!(c.streamed, c.index % 4 == 3, "call {}", c.index);
    }
    for a in calls.iter().filter(|c| !c.streamed) {
        let first = calls.iter().find(|b| b.terminal == a.terminal).unwrap();
        assert!(std::rc::Rc::ptr_eq(&a.signature, &first.signature));
    }
    let distinct: std::collections::HashSet<u32> = calls
        .iter()
        .filter(|c| !c.streamed)
        .map(|c| c.terminal)
        .collect();
    assert_eq!(distinct.len(), 3, "three fixed signatures");
    let names: Vec<&str> = reader
        .functions(0)
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["MPI_F0", "MPI_F1"]);
    assert!(reader.functions(99).is_empty());
}

#[test]
fn the_tree_sample_is_valid() {
    let t = tree_sample();
    let back = Trace::from_bytes(&t.to_bytes()).unwrap();
    assert!(back.record.forest.is_some());
    // Rank 2: Init, 22 iterations of (Send every third from i = 1) Recv (and a call outside
    // the tree when i % 7 == 2), Finalize.
    let sends = (0..22).filter(|i| (i + 2) % 3 == 0).count();
    let outside = (0..22).filter(|i| i % 7 == 2).count();
    assert_eq!(back.calls(2).count(), 2 + sends + 22 + outside);
}

#[derive(Debug, Clone)]
enum Damage {
    Flip { at: usize, mask: u8 },
    Truncate { at: usize },
    Splice { at: usize, bytes: Vec<u8> },
    Delete { at: usize, len: usize },
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(at, mask)| Damage::Flip { at, mask }),
        any::<usize>().prop_map(|at| Damage::Truncate { at }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..12))
            .prop_map(|(at, bytes)| Damage::Splice { at, bytes }),
        (any::<usize>(), 1..16usize).prop_map(|(at, len)| Damage::Delete { at, len }),
    ]
}

fn apply(bytes: &mut Vec<u8>, d: &Damage) {
    if bytes.is_empty() {
        return;
    }
    match d {
        Damage::Flip { at, mask } => {
            let i = at % bytes.len();
            bytes[i] ^= mask;
        }
        Damage::Truncate { at } => bytes.truncate(at % bytes.len()),
        Damage::Splice { at, bytes: extra } => {
            let i = at % bytes.len();
            bytes.splice(i..i, extra.iter().copied());
        }
        Damage::Delete { at, len } => {
            let i = at % bytes.len();
            let end = (i + len).min(bytes.len());
            bytes.drain(i..end);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn damaged_files_are_rejected_or_read_without_panic(damages in prop::collection::vec(damage(), 1..4)) {
        let mut bytes = sample().to_bytes();
        for d in &damages {
            apply(&mut bytes, d);
        }
        read_and_decode(&bytes);
    }

    #[test]
    fn damaged_tree_sections_behind_valid_checksums_are_handled(
        section in 0usize..16,
        damages in prop::collection::vec(damage(), 1..4),
    ) {
        let mut sections = read_sections(&tree_sample().to_bytes()).unwrap();
        let index = section % sections.len();
        for d in &damages {
            apply(&mut sections[index].payload, d);
        }
        read_and_decode(&write_sections(&sections));
    }

    #[test]
    fn damaged_sections_behind_valid_checksums_are_handled(
        section in 0usize..12,
        damages in prop::collection::vec(damage(), 1..4),
    ) {
        let mut sections = read_sections(&sample().to_bytes()).unwrap();
        let index = section % sections.len();
        for d in &damages {
            apply(&mut sections[index].payload, d);
        }
        read_and_decode(&write_sections(&sections));
    }
}

/// The hosts' processors (`CORE`) come back as written; a trace without them (every trace
/// before the section) has no `CORE` section and reads as 0, unknown, for every rank.
#[test]
fn host_processors_round_trip_and_are_unknown_without_the_section() {
    let mut t = sample();
    let without = t.to_bytes();
    let tags = |bytes: &[u8]| -> Vec<String> {
        conifer_trace::section_sizes(bytes)
            .unwrap()
            .into_iter()
            .map(|(tag, _)| tag)
            .collect()
    };
    assert!(!tags(&without).contains(&"CORE".to_string()));
    let back = Trace::from_bytes(&without).unwrap();
    assert!(back.record.ranks.iter().all(|r| r.cores == 0));
    for (i, r) in t.record.ranks.iter_mut().enumerate() {
        r.cores = if i < 3 { 2 } else { 64 };
    }
    let with = t.to_bytes();
    assert!(tags(&with).contains(&"CORE".to_string()));
    let cores: Vec<u32> = Trace::from_bytes(&with)
        .unwrap()
        .record
        .ranks
        .iter()
        .map(|r| r.cores)
        .collect();
    assert_eq!(cores, [2, 2, 2, 64, 64, 64]);
}
