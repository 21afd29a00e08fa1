//! What the proxy cannot make as the original did is listed at the top of `proxy.c` and in
//! the notes, with how many calls, never dropped silently. The trace is made here, call by
//! call: `MPI_Init`, an attribute key made with the program's own callbacks (the proxy passes
//! MPI's null functions) and an extra state the recorder did not interpret, a generalized
//! request (whose callbacks the proxy cannot stand in for), a Fortran-only function the C
//! table does not have (twice), `MPI_Finalize`.

use conifer_compress::Grammar;
use conifer_format::rank_record::{CallTiming, RankRecord};
use conifer_proxy::{generate, Compute, Options};
use conifer_trace::value::{HandleKind, HandleRef, Value};
use conifer_trace::varint::put_u64;
use conifer_trace::{FunctionInfo, Language, Metadata, Trace};
use conifer_write::merge::merge;

/// The bytes of a call of function `function` by the first thread, returning `MPI_SUCCESS`.
fn signature(function: u16, values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    put_u64(&mut out, function.into());
    put_u64(&mut out, 0);
    for v in values {
        v.encode(&mut out);
    }
    Value::Int(0).encode(&mut out);
    out
}

fn function(id: u16, name: &str, language: Language, slots: &[&str]) -> FunctionInfo {
    FunctionInfo {
        id,
        name: name.into(),
        language,
        slots: slots.iter().map(|s| s.to_string()).collect(),
    }
}

fn trace() -> Trace {
    let catalog = vec![
        function(0, "MPI_Init", Language::C, &["argc", "argv"]),
        function(
            1,
            "MPI_Comm_create_keyval",
            Language::C,
            &[
                "comm_copy_attr_fn",
                "comm_delete_attr_fn",
                "comm_keyval",
                "extra_state",
            ],
        ),
        function(
            2,
            "MPI_Grequest_start",
            Language::C,
            &["query_fn", "free_fn", "cancel_fn", "extra_state", "request"],
        ),
        function(3, "MPI_Sizeof", Language::Fortran, &["x", "size"]),
        function(4, "MPI_Finalize", Language::C, &[]),
    ];
    let request = Value::Handle(HandleKind::Request, HandleRef::Id(0));
    let signatures = vec![
        signature(0, &[Value::Opaque, Value::Opaque]),
        signature(
            1,
            &[Value::Opaque, Value::Opaque, Value::Int(9), Value::Opaque],
        ),
        signature(
            2,
            &[
                Value::Opaque,
                Value::Opaque,
                Value::Opaque,
                Value::Opaque,
                request,
            ],
        ),
        signature(3, &[Value::Opaque, Value::Int(8)]),
        signature(4, &[]),
    ];
    let mut grammar = Grammar::new();
    [0, 1, 2, 3, 3, 4].into_iter().for_each(|t| grammar.push(t));
    let record = RankRecord {
        timing: vec![CallTiming::default(); signatures.len()],
        signatures,
        grammars: vec![grammar.freeze()],
        comms: Vec::new(),
        timelines: Vec::new(),
        histograms: Vec::new(),
        structure: None,
        trees: Vec::new(),
        streams: Vec::new(),
        ..RankRecord::default()
    };
    Trace {
        meta: Metadata {
            conifer_version: "0.1.0".into(),
            mpi: "openmpi".into(),
            mpi_library_version: String::new(),
            command_line: vec!["./app".into()],
            ranks: 1,
            start_unix_seconds: 0.0,
            partial: false,
            missing_ranks: Vec::new(),
            options: Vec::new(),
            partial_reasons: Vec::new(),
            modules: Vec::new(),
        },
        catalog,
        record: merge(vec![(record, Vec::new(), "host".into())]),
    }
}

#[test]
fn what_is_not_reproduced_is_listed_with_its_calls() {
    let proxy = generate(
        &trace(),
        &Options {
            compute: Compute::None,
        },
    )
    .unwrap();
    let expected = [
        "MPI_Comm_create_keyval: extra_state was not recorded; the proxy passes 0 (1 calls)",
        "MPI_Comm_create_keyval: the attribute copy callback is replaced by MPI's null copy function (1 calls)",
        "MPI_Comm_create_keyval: the attribute delete callback is replaced by MPI's null delete function (1 calls)",
        "MPI_Grequest_start: its callback query_fn cannot be reproduced (1 calls)",
        "MPI_Sizeof: not in the MPI function table (2 calls)",
    ];
    assert_eq!(proxy.notes, expected);
    let header = &proxy.source[..proxy.source.find("*/").unwrap()];
    for note in expected {
        assert!(header.contains(note), "{note:?} not in\n{header}");
    }
    assert_eq!(proxy.calls, 6);
    assert!(proxy
        .source
        .contains("MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, "));
    assert!(!proxy.source.contains("MPI_Grequest_start("));
}
