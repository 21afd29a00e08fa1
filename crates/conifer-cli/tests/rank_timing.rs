//! Per-rank timing in a few bytes: aggregate timing keeps each rank's clock and totals within
//! 0.1% (`RQTM`), lossless timing keeps them exact (`CLCK`, `RTOT`), and `profile --json`
//! says which.

mod common;
use common::*;

/// `ep` (9 MPI functions) at 16 oversubscribed ranks: a rank has 19 figures (clock read,
/// two offsets and two local times, its thread's start and end, recorder, computation, one
/// total per function). A figure that varies across ranks by a factor of up to 2 at the
/// 0.1% grain (347 codes) costs at most 2 × 9 + 1 bits as an Exp-Golomb deviation, the
/// tiny functions 1 bit: ≤ 10 such figures + 9 one-bit ones = 199 bits ≤ 25 B a rank, plus
/// per figure a header (mode, common value, order: ≤ 40 bits, 95 B for 19) and the shape
/// column (~20 B).
const RQTM_BOUND_AT_16: u64 = 16 * 25 + 95 + 20;

#[test]
fn aggregate_timing_keeps_per_rank_figures_in_a_few_bytes_and_says_so() {
    let dir = scratch("rank_timing_aggregate");
    let trace = traced(&dir, "ep", 16, &[], &apps_dir().join("ep"), &[]);
    let stats = stats_json(&trace);
    let sections = &stats["bytes_by_section"];
    assert!(
        sections["CLCK"].is_null() && sections["RTOT"].is_null(),
        "{sections}"
    );
    let rqtm = sections["RQTM"].as_u64().expect("RQTM section");
    assert!(rqtm <= RQTM_BOUND_AT_16, "RQTM takes {rqtm} B at 16 ranks");
    let profile = profile_json(&trace);
    for rank in profile["per_rank"].as_array().unwrap() {
        assert_eq!(rank["exact"], false);
        assert_eq!(rank["relative_error"], 0.001);
        assert_eq!(rank["error_floor_ns"], 1_000_000.0);
        // The span is the thread's end less its start, both kept: positive.
        assert!(rank["span_ns"].as_f64().unwrap() > 0.0);
    }
    assert!(profile["per_rank_times"]
        .as_str()
        .unwrap()
        .contains("within 0.1% (1 µs below 1 ms)"));
}

#[test]
fn lossless_timing_keeps_per_rank_figures_exact() {
    let dir = scratch("rank_timing_lossless");
    let trace = traced(
        &dir,
        "ep",
        4,
        &["--timing", "lossless"],
        &apps_dir().join("ep"),
        &[],
    );
    let stats = stats_json(&trace);
    let sections = &stats["bytes_by_section"];
    assert!(sections["RQTM"].is_null(), "{sections}");
    assert!(sections["CLCK"].as_u64().unwrap() > 0 && sections["RTOT"].as_u64().unwrap() > 0);
    let profile = profile_json(&trace);
    for rank in profile["per_rank"].as_array().unwrap() {
        assert_eq!(rank["exact"], true);
        assert_eq!(rank["relative_error"], 0.0);
    }
    assert!(profile["per_rank_times"]
        .as_str()
        .unwrap()
        .contains("exact sums"));
}

fn profile_json(trace: &std::path::Path) -> serde_json::Value {
    let out = run_ok(
        std::process::Command::new(conifer())
            .args(["profile", "--json"])
            .arg(trace),
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
