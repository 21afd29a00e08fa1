//! Records the merge builds survive the format's files and merge messages unchanged, and
//! trace trees merge as the sequential merge does (the format crate cannot build merged
//! records itself, so these round trips live here).

mod trace_files {
    use crate::merge::merge;
    use conifer_format::model::Trace;
    use conifer_format::rank_record::{CallTiming, Membership, RankRecord};
    use conifer_format::{FormatError, FunctionInfo, Language, Metadata};

    fn rank(
        seq: &[u32],
        my_rank: i64,
        counts: Vec<(u16, u64)>,
    ) -> (RankRecord, Vec<(u16, u64)>, String) {
        let mut g = conifer_compress::Grammar::new();
        seq.iter().for_each(|&t| g.push(t - 1));
        let record = RankRecord {
            signatures: vec![vec![0, 1], vec![0, 2]],
            timing: vec![CallTiming::default(); 2],
            grammars: vec![g.freeze()],
            comms: vec![Membership {
                comm: vec![2, 0, 0, 1],
                my_rank,
                grid: None,
                leader: Some(0),
            }],
            timelines: Vec::new(),
            histograms: Vec::new(),
            structure: None,
            trees: Vec::new(),
            streams: Vec::new(),
            ..RankRecord::default()
        };
        (record, counts, "a".into())
    }

    fn trace() -> Trace {
        Trace {
            meta: Metadata {
                conifer_version: "0.1.0".into(),
                mpi: "openmpi".into(),
                mpi_library_version: "Open MPI v4.1.4".into(),
                command_line: vec!["./ring".into(), "10".into()],
                ranks: 2,
                start_unix_seconds: 1.5,
                partial: false,
                missing_ranks: Vec::new(),
                options: vec!["raw".into()],
                partial_reasons: Vec::new(),
                modules: Vec::new(),
            },
            catalog: vec![
                FunctionInfo {
                    id: 0,
                    name: "MPI_Send".into(),
                    language: Language::C,
                    slots: vec!["buf".into(), "count".into()],
                },
                FunctionInfo {
                    id: 700,
                    name: "MPI_Send".into(),
                    language: Language::Fortran,
                    slots: vec!["buf".into(), "count".into()],
                },
            ],
            record: merge(vec![
                rank(&[1, 2, 1, 2], 0, vec![(0, 3), (700, 1)]),
                rank(&[2, 1], 1, vec![(0, 4)]),
            ]),
        }
    }

    #[test]
    fn trace_round_trips_and_sums_bindings() {
        let t = trace();
        let back = Trace::from_bytes(&t.to_bytes()).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.total_calls("MPI_Send"), 8);
        let counts = back.function_counts();
        assert_eq!(counts[0].per_rank, vec![3, 4]);
        assert_eq!(counts[1].per_rank, vec![1, 0]);
        assert_eq!(counts[1].language, Language::Fortran);
    }

    #[test]
    fn ranks_must_match_the_metadata() {
        let mut t = trace();
        t.meta.ranks = 3;
        let err = Trace::from_bytes(&t.to_bytes()).unwrap_err();
        assert!(matches!(err, FormatError::Malformed(_)), "{err}");
    }

    #[test]
    fn ranks_histograms_pool_per_family_and_survive_files_and_messages() {
        use conifer_format::histogram::{bin_of, TimingHistogram};
        let rank = |durations: &[f64]| {
            let mut g = conifer_compress::Grammar::new();
            let mut timing = CallTiming::default();
            let mut h = TimingHistogram::default();
            for &d in durations {
                g.push(0);
                timing.add(10.0, d);
                h.duration.add(bin_of(d), 1);
                h.interval.add(bin_of(10.0), 1);
            }
            let record = RankRecord {
                signatures: vec![b"x".to_vec()],
                timing: vec![timing],
                grammars: vec![g.freeze()],
                histograms: vec![h],
                ..Default::default()
            };
            (record, Vec::new(), String::new())
        };
        let m = merge(vec![rank(&[100.0, 100.0, 5e6]), rank(&[100.0, 0.5])]);
        let h = m.timing[0].histogram.as_ref().unwrap();
        assert_eq!(
            h.duration.nonempty().collect::<Vec<_>>(),
            [(0, 1), (bin_of(100.0), 3), (bin_of(5e6), 1)]
        );
        assert_eq!(h.interval.total(), 5);
        assert_eq!(
            conifer_format::stored::TraceRecord::from_bytes(&m.to_bytes()).unwrap(),
            m
        );
        let file = conifer_format::record_codec::encode_record(&m, true);
        let back = conifer_format::record_codec::decode_record(&file, 0).unwrap();
        assert_eq!(back.timing[0].histogram, m.timing[0].histogram);
    }
}

mod record_messages {
    use crate::merge::merge;
    use conifer_compress::Grammar;
    use conifer_format::grid::Grid;
    use conifer_format::rank_record::{CallTiming, Membership, RankRecord};
    use conifer_format::record_codec::{encode_record, SIGNATURES};
    use conifer_format::stored::TraceRecord;

    fn record(rank: i64, lossless: bool) -> (RankRecord, Vec<(u16, u64)>, String) {
        let mut g = Grammar::new();
        (0..10).for_each(|i| g.push(i % 2));
        let mut timing = vec![CallTiming::default(); 2];
        timing[0].add(rank as f64 * 3.0, rank as f64);
        (
            RankRecord {
                signatures: vec![b"x".to_vec(), b"y".to_vec()],
                timing,
                grammars: vec![g.freeze()],
                comms: vec![
                    Membership {
                        comm: b"WORLD".to_vec(),
                        my_rank: rank,
                        grid: None,
                        leader: Some(0),
                    },
                    Membership {
                        comm: b"row".to_vec(),
                        my_rank: rank % 4,
                        grid: Grid::new(vec![2, 2], vec![true, false]),
                        leader: u32::try_from(rank - rank % 4).ok(),
                    },
                ],
                timelines: if lossless {
                    vec![vec![rank as u8]]
                } else {
                    Vec::new()
                },
                ..Default::default()
            },
            vec![(3, 10)],
            format!("node{}", rank / 8),
        )
    }

    #[test]
    fn partly_merged_records_round_trip_as_messages() {
        for lossless in [false, true] {
            let mut m = merge((0..16).map(|r| record(r, lossless)).collect());
            m.first_rank = 32;
            for (i, r) in m.ranks.iter_mut().enumerate() {
                r.comms[0].my_rank = 32 + i as i64;
            }
            // Messages keep timing exact (pooling never compounds rounding).
            let back = TraceRecord::from_bytes(&m.to_bytes()).unwrap();
            assert_eq!(back, m);
        }
    }

    #[test]
    fn large_signature_tables_are_compressed_and_round_trip() {
        let (mut r, counts, host) = record(0, false);
        // Testsome-like signatures: long request arrays differing in a few bytes.
        r.signatures = (0..500u32)
            .map(|i| {
                let mut sig: Vec<u8> = (0..200u32).map(|k| (k % 7) as u8).collect();
                sig.extend_from_slice(&i.to_le_bytes());
                sig
            })
            .collect();
        r.timing = vec![CallTiming::default(); 500];
        let m = merge(vec![(r, counts, host)]);
        let sections = encode_record(&m, true);
        let sigs = sections.iter().find(|s| s.tag == SIGNATURES).unwrap();
        assert_eq!(sigs.payload[0], 1, "compressed");
        assert!(
            sigs.payload.len() < 500 * 204 / 5,
            "{} bytes",
            sigs.payload.len()
        );
        let back = TraceRecord::from_bytes(&m.to_bytes()).unwrap();
        assert_eq!(back.signatures, m.signatures);
    }

    #[test]
    fn record_size_does_not_follow_the_rank_count() {
        // Same calls; times within the 2.2% of one quantisation step of the per-rank totals.
        let same_behaviour = |rank: i64| {
            let (mut record, counts, _) = record(rank, false);
            record.comms[1].my_rank = rank;
            record.comms[1].leader = Some(0);
            record.timing[0] = CallTiming::default();
            record.timing[0].add(1000.0 + (rank % 3) as f64, 50.0);
            (record, counts, "node".to_string())
        };
        let size = |n: i64| {
            let m = merge((0..n).map(same_behaviour).collect());
            encode_record(&m, true)
                .iter()
                .map(|s| s.payload.len())
                .sum::<usize>()
        };
        let (small, large) = (size(16), size(1024));
        // Only the varint exponents of the rank columns grow (log P).
        assert!(large <= small + 8, "{small} -> {large}");
    }
}

mod trace_trees {

    use crate::forest_build::{absorb_forest, add_tree};
    use conifer_compress::tree::TreeRecord;
    use conifer_compress::tree::{TreeBuilder, VertexKind};
    use conifer_compress::Grammar;
    use conifer_format::forest::Forest;
    use conifer_format::forest::Structure;
    use std::sync::Arc;

    /// root { Init(1), loop(2) { Send(3) }, Finalize(4) } as `conifer tree --json` prints it.
    const JSON: &str = r#"{"id":0,"kind":"root","children":[
        {"id":1,"kind":"mpi","name":"MPI_Init"},
        {"id":2,"kind":"loop","children":[{"id":3,"kind":"mpi","name":"MPI_Send"}]},
        {"id":4,"kind":"mpi","name":"MPI_Finalize"}]}"#;

    fn run(structure: &Structure, sends: u32, send: u32) -> TreeRecord {
        let mut b = TreeBuilder::new(Arc::clone(&structure.shape), 4);
        b.call(Some(1), 0);
        for _ in 0..sends {
            b.activate(2);
            b.call(Some(3), send);
        }
        b.call(Some(4), 2);
        b.record()
    }

    /// Rank `i`'s record: local terminals numbered in a rank-dependent order, a tree whose
    /// loop runs a rank-dependent number of times, one call outside the tree.
    fn rank_record(structure: &Structure, i: u32) -> conifer_format::rank_record::RankRecord {
        let names = ["init", "send", "fin", "probe"];
        let order: Vec<usize> = (0..4).map(|k| (k + i as usize) % 4).collect();
        let local = |name: &str| order.iter().position(|&k| names[k] == name).unwrap() as u32;
        let mut b = TreeBuilder::new(Arc::clone(&structure.shape), 4);
        let mut foreign = Grammar::new();
        b.call(Some(1), local("init"));
        for _ in 0..(3 + i % 3) {
            b.activate(2);
            b.call(Some(3), local("send"));
        }
        if !b.call(None, local("probe")) {
            foreign.push(local("probe"));
        }
        b.call(Some(4), local("fin"));
        conifer_format::rank_record::RankRecord {
            signatures: order
                .iter()
                .map(|&k| names[k].as_bytes().to_vec())
                .collect(),
            timing: vec![Default::default(); 4],
            grammars: vec![foreign.freeze()],
            structure: Some(structure.clone()),
            trees: vec![Some(b.record())],
            ..Default::default()
        }
    }

    #[test]
    fn pairwise_tree_merges_give_the_sequential_result() {
        let s = Structure::from_json(JSON.as_bytes()).unwrap();
        let input = |i: u32| (rank_record(&s, i), vec![(0, 1)], "h".to_string());
        let sequential = crate::merge::merge((0..7).map(input).collect());
        let left = crate::merge::merge_seven_in_tree_order(input);
        assert_eq!(left.signatures, sequential.signatures);
        assert_eq!(left.ranks, sequential.ranks);
        assert_eq!(left.forest, sequential.forest);
        // Three loop lengths, so three distinct trees; every rank decodes its own calls.
        assert_eq!(left.forest.as_ref().unwrap().trees.len(), 3);
        for (i, entry) in left.ranks.iter().enumerate() {
            let calls: Vec<&[u8]> = left
                .thread_terminals(entry, 0)
                .map(|t| left.signatures[t as usize].as_slice())
                .collect();
            let mut expected: Vec<&[u8]> = vec![b"init"];
            expected.extend(std::iter::repeat_n(b"send".as_slice(), 3 + i % 3));
            expected.extend([b"probe".as_slice(), b"fin"]);
            assert_eq!(calls, expected, "rank {i}");
        }
    }

    #[test]
    fn structure_json_gives_the_shape() {
        let s = Structure::from_json(JSON.as_bytes()).unwrap();
        assert_eq!(s.shape.len(), 5);
        assert_eq!(s.shape.children(2), &[3]);
        assert_eq!(s.shape.kind(4), VertexKind::Site);
        let bad = JSON.replace(r#""id":2"#, r#""id":7"#);
        assert!(Structure::from_json(bad.as_bytes()).is_err());
        assert!(Structure::from_json(b"{").is_err());
    }

    #[test]
    fn equal_vertex_records_are_stored_once_across_threads_and_merges() {
        let s = Structure::from_json(JSON.as_bytes()).unwrap();
        let mut left = Forest::new(s.clone());
        let a = add_tree(&mut left, run(&s, 10, 1));
        let b = add_tree(&mut left, run(&s, 10, 1));
        assert_eq!(a, b);
        let mut right = Forest::new(s.clone());
        // Same shape of run, 12 iterations; its local terminal 1 is the global 1.
        add_tree(&mut right, run(&s, 12, 1));
        let map = absorb_forest(&mut left, right, &[0, 1, 2]);
        assert_eq!(map, vec![1]);
        // Init, Finalize and the Send's terminals are shared; the loop counts and the
        // Send's call counts differ.
        let distinct: Vec<usize> = left.vertices.iter().map(Vec::len).collect();
        assert_eq!(distinct, vec![1, 1, 2, 2, 1]);
        let empty = Grammar::new().freeze();
        assert_eq!(left.check(&left.summaries(), 1, &empty, 3), Ok(14));
        let calls: Vec<u32> = left.expand(1, &empty).collect();
        let mut expected = vec![0];
        expected.extend([1; 12]);
        expected.push(2);
        assert_eq!(calls, expected);
        assert_eq!(left.terminal_counts(1)[&1], 12);
    }

    #[test]
    fn files_keep_only_the_visited_vertices_with_their_ids_and_positions() {
        // Vertices 4 and 5 (a branch arm and its Recv) are never reached. The last vertex's
        // file index is larger than the bytes left after it (read as a value, not a count).
        let json = r#"{"id":0,"kind":"root","children":[
            {"id":1,"kind":"mpi","loc":{"file":"a.c","line":3}},
            {"id":2,"kind":"loop","loc":{"file":"a.c","line":6},
             "children":[{"id":3,"kind":"mpi","loc":{"file":"b.c","line":7}}]},
            {"id":4,"kind":"branch","children":[{"id":5,"kind":"mpi","loc":{"file":"a.c","line":9}}]},
            {"id":6,"kind":"mpi","loc":{"file":"b.c","line":12}}]}"#;
        let s = Structure::from_json(json.as_bytes()).unwrap();
        let mut b = TreeBuilder::new(Arc::clone(&s.shape), 4);
        b.call(Some(1), 0);
        for _ in 0..5 {
            b.activate(2);
            b.call(Some(3), 1);
        }
        b.call(Some(6), 2);
        let record = conifer_format::rank_record::RankRecord {
            signatures: vec![b"init".to_vec(), b"send".to_vec(), b"fin".to_vec()],
            timing: vec![Default::default(); 3],
            grammars: vec![Grammar::new().freeze()],
            structure: Some(s.clone()),
            trees: vec![Some(b.record())],
            ..Default::default()
        };
        let merged = crate::merge::merge(vec![(record, vec![(0, 7)], "h".into())]);
        let sections = conifer_format::record_codec::encode_record(&merged, true);
        let back = conifer_format::record_codec::decode_record(&sections, 0).unwrap();
        let forest = back.forest.as_ref().unwrap();
        assert_eq!(forest.structure.ids.as_slice(), &[0, 1, 2, 3, 6]);
        let locs: Vec<Option<&str>> = forest.structure.locs.iter().map(|l| l.as_deref()).collect();
        assert_eq!(
            locs,
            [
                None,
                Some("a.c:3"),
                Some("a.c:6"),
                Some("b.c:7"),
                Some("b.c:12")
            ]
        );
        let calls = |m: &conifer_format::stored::TraceRecord| -> Vec<(u32, Option<u32>)> {
            let mut t = m.thread_terminals(&m.ranks[0], 0);
            std::iter::from_fn(|| {
                let terminal = t.next()?;
                let site = t
                    .site()
                    .map(|v| m.forest.as_ref().unwrap().structure.ids[v as usize]);
                Some((terminal, site))
            })
            .collect()
        };
        let mut expected = vec![(0, Some(1))];
        expected.extend([(1, Some(3)); 5]);
        expected.push((2, Some(6)));
        assert_eq!(calls(&back), expected);
        assert_eq!(calls(&merged), expected);
    }
}
