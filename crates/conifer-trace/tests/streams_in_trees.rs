//! Decoding a trace-tree trace whose calls were streamed: the read side fills each call's
//! skeleton from the thread's value streams in the tree's call order (built by the write
//! side, read back from a file).

use conifer_compress::tree::TreeBuilder;
use conifer_compress::Grammar;
use conifer_format::forest::Structure;
use conifer_trace::ReadCalls;
use std::sync::Arc;

/// root { Init(1), loop(2) { Send(3) }, Finalize(4) } as `conifer tree --json` prints it.
const JSON: &str = r#"{"id":0,"kind":"root","children":[
    {"id":1,"kind":"mpi","name":"MPI_Init"},
    {"id":2,"kind":"loop","children":[{"id":3,"kind":"mpi","name":"MPI_Send"}]},
    {"id":4,"kind":"mpi","name":"MPI_Finalize"}]}"#;

#[test]
fn value_streams_follow_a_trace_trees_call_order() {
    // Init, then 12 Sends whose count changes every time (a streamed family), one call
    // outside the tree after the sixth, Finalize.
    let s = Structure::from_json(JSON.as_bytes()).unwrap();
    let send = |count: i64| {
        conifer_format::signature::encode_signature(&conifer_format::signature::Signature {
            function: 1,
            thread: 0,
            caller: None,
            values: vec![conifer_format::value::Value::Int(count)],
            ret: 0,
        })
    };
    let mut signatures = vec![b"init".to_vec(), b"fin".to_vec(), b"probe".to_vec()];
    signatures.extend((0..12).map(|i| send(100 + 7 * i)));
    let mut b = TreeBuilder::new(Arc::clone(&s.shape), 4);
    let mut foreign = Grammar::new();
    let mut calls = vec![0u32];
    b.call(Some(1), 0);
    for i in 0..12 {
        b.activate(2);
        b.call(Some(3), 3 + i);
        calls.push(3 + i);
        if i == 5 {
            assert!(!b.call(None, 2));
            foreign.push(2);
            calls.push(2);
        }
    }
    b.call(Some(4), 1);
    calls.push(1);
    let record = conifer_format::rank_record::RankRecord {
        timing: vec![Default::default(); signatures.len()],
        signatures: signatures.clone(),
        grammars: vec![foreign.freeze()],
        structure: Some(s.clone()),
        trees: vec![Some(b.record())],
        ..Default::default()
    };
    let m = conifer_write::merge::merge(vec![(record, vec![(0, 15)], "h".into())]);
    assert_eq!(
        m.signatures.len(),
        4,
        "the twelve sends became one skeleton"
    );
    assert_eq!(m.streams.len(), 1);
    let trace = conifer_format::model::Trace {
        meta: conifer_format::Metadata {
            conifer_version: "0.1.0".into(),
            mpi: "openmpi".into(),
            mpi_library_version: String::new(),
            command_line: Vec::new(),
            ranks: 1,
            start_unix_seconds: 0.0,
            partial: false,
            missing_ranks: Vec::new(),
            options: Vec::new(),
            partial_reasons: Vec::new(),
            modules: Vec::new(),
        },
        catalog: Vec::new(),
        record: m,
    };
    let back = conifer_format::model::Trace::from_bytes(&trace.to_bytes()).unwrap();
    let decoded: Vec<Vec<u8>> = back
        .thread_sequences(0)
        .remove(0)
        .map(|c| c.into_owned())
        .collect();
    let expected: Vec<Vec<u8>> = calls
        .iter()
        .map(|&t| signatures[t as usize].clone())
        .collect();
    assert_eq!(decoded, expected);
}
