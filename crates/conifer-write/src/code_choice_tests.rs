//! The codes the merge chooses (`rank_codes`, then `int_codes`) on hand-made ranks: ranks
//! whose calls follow a pattern end up sharing one grammar, and every rank still decodes to
//! exactly what it recorded.

use crate::merge::merge;
use conifer_compress::fast_hash::FastMap;
use conifer_compress::Grammar;
use conifer_format::rank_record::{CallTiming, Membership, RankRecord};
use conifer_format::recorded::RequestContexts;
use conifer_format::signature::{encode_signature, Signature};
use conifer_format::stored::TraceRecord;
use conifer_format::value::{HandleKind, HandleRef, Rank, Status, Value};

const WORLD: Value = Value::Handle(HandleKind::Comm, HandleRef::Named(1));

/// A one-thread rank of `p` calling function 1 with each peer of `peers(rank)` in turn,
/// ten times over, recorded as the recorder does: relative to the caller.
fn rank_calling(rank: i64, peers: &[i64]) -> crate::merge::RankInput {
    let calls = peers
        .iter()
        .map(|&peer| vec![Value::Rank(Rank::Relative(peer - rank)), WORLD])
        .collect();
    rank_making(rank, calls)
}

/// A one-thread rank making calls of function 1 with each of `calls`' values in turn, ten
/// times over.
fn rank_making(rank: i64, calls: Vec<Vec<Value>>) -> crate::merge::RankInput {
    let signatures: Vec<Vec<u8>> = calls
        .into_iter()
        .map(|values| {
            encode_signature(&Signature {
                function: 1,
                thread: 0,
                caller: None,
                values,
                ret: 0,
            })
        })
        .collect();
    let n = signatures.len();
    let mut grammar = Grammar::new();
    let mut timing = vec![CallTiming::default(); signatures.len()];
    for _ in 0..10 {
        for t in 0..signatures.len() as u32 {
            grammar.push(t);
            timing[t as usize].add(100.0, 10.0);
        }
    }
    let mut comm = Vec::new();
    WORLD.encode(&mut comm);
    let record = RankRecord {
        signatures,
        timing,
        grammars: vec![grammar.freeze()],
        comms: vec![Membership {
            comm,
            my_rank: rank,
            grid: None,
            leader: Some(0),
        }],
        ..Default::default()
    };
    (record, vec![(1, 10 * n as u64)], "node".into())
}

/// Merges 16 ranks calling `peers`, chooses codes, and checks every rank decodes to what
/// it recorded; returns the number of distinct grammars left.
fn grammars_after_choosing(peers: impl Fn(i64) -> Vec<i64>) -> usize {
    let inputs: Vec<_> = (0..16).map(|r| rank_calling(r, &peers(r))).collect();
    let m = choose_and_check(inputs);
    assert_eq!(m.timing.len(), 1, "one timing family: function 1 on WORLD");
    assert_eq!(
        m.timing[0].stats.duration.count,
        160 * peers(0).len() as u64
    );
    m.grammars.len()
}

/// Merges `inputs`, chooses rank and integer codes, and checks every rank decodes to what
/// it recorded.
fn choose_and_check(inputs: Vec<crate::merge::RankInput>) -> TraceRecord {
    let recorded: Vec<Vec<Vec<u8>>> = inputs
        .iter()
        .map(|(rec, _, _)| {
            let g = &rec.grammars[0];
            g.expand()
                .map(|t| rec.signatures[t as usize].clone())
                .collect()
        })
        .collect();
    let mut m = merge(inputs);
    crate::codes::choose_codes(&mut m);
    for (rank, expected) in recorded.iter().enumerate() {
        let entry = &m.ranks[rank];
        let positions: FastMap<&[u8], i64> = entry
            .comms
            .iter()
            .map(|c| (c.comm.as_slice(), c.my_rank))
            .collect();
        let mut requests = RequestContexts::default();
        let got: Vec<Vec<u8>> = m
            .thread_terminals(entry, 0)
            .map(|t| {
                conifer_format::recorded::as_recorded(
                    &m.signatures[t as usize],
                    rank as u32,
                    &positions,
                    &mut requests,
                )
                .into_owned()
            })
            .collect();
        assert_eq!(&got, expected, "rank {rank}");
    }
    m
}

/// 16 ranks making `calls(rank)`: the distinct grammars left after choosing codes.
fn grammars_making(calls: impl Fn(i64) -> Vec<Vec<Value>>) -> usize {
    let inputs = (0..16).map(|r| rank_making(r, calls(r))).collect();
    choose_and_check(inputs).grammars.len()
}

#[test]
fn a_split_colour_beside_its_key_does_not_keep_ranks_apart() {
    // NPB FT: MPI_Comm_split(WORLD, colour = rank, key = 0): the key is recorded relative
    // (-rank) and the colour as an integer; each alone varies with the rank.
    let newcomm = Value::Handle(HandleKind::Comm, HandleRef::Id(1));
    let split = |r: i64| {
        vec![vec![
            WORLD,
            Value::Int(r),
            Value::Rank(Rank::Relative(-r)),
            newcomm.clone(),
        ]]
    };
    assert_eq!(grammars_making(split), 1);
}

#[test]
fn completion_statuses_take_their_requests_communicator() {
    // CG's exchange: Irecv from rank ^ 2 (request 0 on WORLD), then Wait on request 0,
    // whose status names the same peer relative to the caller.
    let request = |id| Value::Handle(HandleKind::Request, HandleRef::Id(id));
    let status = |d| {
        Value::Status(Status {
            source: Rank::Relative(d),
            tag: 1,
            error: 0,
            bytes: 8,
        })
    };
    let exchange = |comm: &Value| {
        let comm = comm.clone();
        move |r: i64| {
            let d = (r ^ 2) - r;
            vec![
                vec![Value::Rank(Rank::Relative(d)), comm.clone(), request(0)],
                vec![request(0), status(d)],
            ]
        }
    };
    assert_eq!(grammars_making(exchange(&WORLD)), 1);
    // Request 0 made on two communicators: its statuses' context is unknown, so they
    // stay relative, and the ranks with +2 and -2 keep two grammars.
    let other = Value::Handle(HandleKind::Comm, HandleRef::Id(7));
    let two_comms = |r: i64| {
        let mut calls = exchange(&WORLD)(r);
        calls.push(vec![
            Value::Rank(Rank::Relative(0)),
            other.clone(),
            request(0),
        ]);
        calls
    };
    assert_eq!(grammars_making(two_comms), 2);
}

#[test]
fn ranks_agree_after_choosing_and_decode_as_recorded() {
    // Hand-derived: each pattern is one code on every rank, so one grammar.
    assert_eq!(grammars_after_choosing(|_| vec![0]), 1); // everyone to rank 0
    assert_eq!(
        grammars_after_choosing(|r| vec![(r + 1) % 16, (r + 15) % 16]),
        1
    );
    assert_eq!(
        grammars_after_choosing(|r| vec![r ^ 1, r ^ 2, r ^ 4, r ^ 8]),
        1
    );
    assert_eq!(grammars_after_choosing(|r| vec![(r % 4) * 4 + r / 4]), 1);
    let torus = |r: i64| {
        let (y, x) = (r / 4, r % 4);
        vec![((y + 1) % 4) * 4 + x, y * 4 + (x + 3) % 4]
    };
    assert_eq!(grammars_after_choosing(torus), 1);
    // Random peers: no code makes them agree, and nothing is lost (checked above).
    let random = |r: i64| vec![(r * 7 + 3) % 16, (r * r + 5) % 16];
    assert!(grammars_after_choosing(random) > 1);
}

#[test]
fn integers_that_vary_within_a_rank_keep_its_partners_apart() {
    // NPB CG: a row butterfly to rank ^ 1, ^ 2, ^ 4 with tags 3, 2, 1, and the transpose
    // partner (r mod 4)·4 + r div 4 with tag 0, all one function on WORLD. The tags differ
    // within each rank, so each partner keeps a family of its own, and each family's one
    // code (xor 1, xor 2, xor 4, transpose) is the same on every rank: one grammar.
    let partners = |r: i64| {
        [(r ^ 1, 3), (r ^ 2, 2), (r ^ 4, 1), ((r % 4) * 4 + r / 4, 0)]
            .into_iter()
            .map(|(peer, tag)| {
                vec![
                    Value::Rank(Rank::Relative(peer - r)),
                    WORLD,
                    Value::Int(tag),
                ]
            })
            .collect()
    };
    assert_eq!(grammars_making(partners), 1);
}

#[test]
fn periodic_dimensions_of_a_grid_computed_by_hand_agree() {
    // NPB MG: a periodic 3D grid numbered by hand on a plain communicator. On 2 × 4 × 2
    // (z, y, x), the +y neighbour is +2 places away, and -6 from the last row: no
    // communicator-wide code (modular, xor, transpose, 4 × 4 torus) names it with one value;
    // the ring along y (stride 2, 4 places, step +1) does.
    let along_y = |r: i64| {
        let (z, y, x) = (r / 8, (r / 2) % 4, r % 2);
        vec![z * 8 + ((y + 1) % 4) * 2 + x]
    };
    assert_eq!(grammars_after_choosing(along_y), 1);
    // Both ways along y, and along x and z, each direction with a tag of its own (as MG's
    // 1100, 1300, 2100, ...): each is one ring code.
    let all = |r: i64| {
        let (z, y, x) = (r / 8, (r / 2) % 4, r % 2);
        let at = |z: i64, y: i64, x: i64| z * 8 + y * 2 + x;
        [
            at(z, (y + 1) % 4, x),
            at(z, (y + 3) % 4, x),
            at(z, y, (x + 1) % 2),
            at((z + 1) % 2, y, x),
        ]
        .into_iter()
        .enumerate()
        .map(|(tag, peer)| {
            vec![
                Value::Rank(Rank::Relative(peer - r)),
                WORLD,
                Value::Int(tag as i64),
            ]
        })
        .collect()
    };
    assert_eq!(grammars_making(all), 1);
}

#[test]
fn counts_that_differ_by_rank_and_stage_leave_one_grammar() {
    // NPB SP's multipartition: three stages to the right neighbour, each sending a cell whose
    // size depends on the rank and the stage, so two stages of one rank may send equal counts
    // where another rank's differ (no renaming maps one rank's calls onto another's).
    let send = |r: i64| {
        (0..3)
            .map(|s| {
                let cell = s * 16 + (r + s) % 16;
                vec![
                    Value::Int(if cell < 7 { 704 } else { 640 }),
                    Value::Rank(Rank::Relative(1)),
                    Value::Int(s),
                    WORLD,
                ]
            })
            .collect()
    };
    assert_eq!(grammars_making(send), 1);
}

#[test]
fn statuses_offsets_and_request_ids_that_differ_by_rank_leave_one_grammar() {
    // A wait on a receive from the left: its status's bytes, the buffer's offset and the
    // request's id (pools numbered apart) depend on the rank.
    let wait = |r: i64| {
        vec![
            vec![
                Value::Buffer(conifer_format::value::Buffer::Segment {
                    id: 1,
                    offset: 8 * (r % 3),
                }),
                Value::Rank(Rank::Relative(-1)),
                WORLD,
                Value::Handle(
                    HandleKind::Request,
                    HandleRef::Id(4096 * (1 + (r % 2) as u32)),
                ),
            ],
            vec![Value::Array(vec![Value::Status(Status {
                source: Rank::Relative(-1),
                tag: 0,
                error: 0,
                bytes: 100 + r * r,
            })])],
        ]
    };
    assert_eq!(grammars_making(wait), 1);
}
