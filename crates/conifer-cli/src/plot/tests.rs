//! Unit tests of the pictures: a large matrix is drawn in blocks of ranks.

use super::*;
use conifer_analyze::times::Times;
use conifer_analyze::{Analysis, Matrix};
use conifer_trace::Trace;

/// A 1,024-rank analysis whose matrix is a ring (rank r sends 1 MiB to r + 1) plus a
/// nearest-neighbour band of 1 KiB messages: drawn as 256 × 256 blocks of 4 ranks.
fn big() -> (Trace, Analysis) {
    let n = 1024u32;
    let mut m = Matrix {
        n,
        p2p_bytes: vec![0; (n * n) as usize],
        p2p_messages: vec![0; (n * n) as usize],
        coll_bytes: vec![0; (n * n) as usize],
        coll_messages: vec![0; (n * n) as usize],
    };
    for r in 0..n {
        let i = (r * n + (r + 1) % n) as usize;
        m.p2p_bytes[i] = 1 << 20;
        m.p2p_messages[i] = 1;
        let j = (r * n + (r + 32) % n) as usize;
        m.coll_bytes[j] = 1 << 10;
        m.coll_messages[j] = 1;
    }
    let trace = Trace {
        meta: conifer_trace::Metadata {
            conifer_version: "0.1.0".into(),
            mpi: "openmpi".into(),
            mpi_library_version: String::new(),
            command_line: vec!["synthetic".into()],
            ranks: n,
            start_unix_seconds: 0.0,
            partial: false,
            missing_ranks: Vec::new(),
            options: Vec::new(),
            partial_reasons: Vec::new(),
            modules: Vec::new(),
        },
        catalog: Vec::new(),
        record: Default::default(),
    };
    let a = Analysis {
        ranks: n,
        functions: Default::default(),
        function_families: Default::default(),
        sites: Default::default(),
        comms: Default::default(),
        per_rank: Vec::new(),
        histograms: Default::default(),
        matrix: m,
        unresolved_calls: 0,
        unknown_functions: 0,
        matrix_comm: None,
    };
    (trace, a)
}

#[test]
fn matrix_of_1024_ranks_is_drawn_in_blocks() {
    let (trace, a) = big();
    let times = Times::default();
    let inp = Inputs {
        trace: &trace,
        analysis: &a,
        times: &times,
        name: "synthetic".into(),
        window: Default::default(),
    };
    let all = Select {
        messages: false,
        p2p: true,
        coll: true,
    };
    let svg = svg("matrix", &inp, all).unwrap();
    assert!(svg.contains("blocks of 4 ranks"));
    // 1024 ring entries + 1024 band entries fall into at most 2 × 256 + 256 blocks.
    assert!(svg.matches("<rect").count() < 1000, "too many cells drawn");
    let png = png("matrix", &inp, all).unwrap();
    let img = image::load_from_memory(&png).unwrap().to_rgb8();
    assert_eq!(img.dimensions(), size("matrix"));
    if let Ok(dir) = std::env::var("CONIFER_PLOT_OUT") {
        std::fs::write(format!("{dir}/matrix-1024.png"), &png).unwrap();
    }
}
