//! A generated rank's calls compressed as the recorder compresses them: each call encoded
//! into its signature bytes, looked up in the rank's signature table, its terminal pushed onto
//! the thread's Sequitur grammar and its times added to the terminal's timing; then the rank's
//! one-rank trace record ([`conifer_write::merge::of_rank`], which also extracts value streams),
//! what the recorder hands the pairwise merge.

use crate::scale_calls::Call;
use crate::scale_patterns::Pattern;
use conifer_compress::fast_hash::FastMap;
use conifer_compress::Grammar;
use conifer_format::rank_record::{CallTiming, RankRecord};
use conifer_format::signature::{encode_signature, Signature};
use conifer_format::stored::TraceRecord;
use std::collections::BTreeMap;

/// The function id of `name` in the catalog.
pub fn function_id(name: &str) -> u16 {
    conifer_spec::find_function(name).unwrap_or_else(|| panic!("{name} is in the MPI table")) as u16
}

/// Compresses `calls` into a rank record and its wrapper call counts.
pub fn compress(calls: &[Call]) -> (RankRecord, Vec<(u16, u64)>) {
    let mut table: FastMap<Vec<u8>, u32> = FastMap::default();
    let mut record = RankRecord::default();
    let mut grammar = Grammar::new();
    let mut counts: BTreeMap<u16, u64> = BTreeMap::new();
    for call in calls {
        let function = function_id(call.function);
        let bytes = encode_signature(&Signature {
            function,
            thread: 0,
            caller: None,
            values: call.values.clone(),
            ret: 0,
        });
        let next = table.len() as u32;
        let terminal = *table.entry(bytes).or_insert_with_key(|bytes| {
            record.signatures.push(bytes.clone());
            record.timing.push(CallTiming::default());
            next
        });
        grammar.push(terminal);
        record.timing[terminal as usize].add(call.interval_ns, call.duration_ns);
        *counts.entry(function).or_insert(0) += 1;
    }
    record.grammars = vec![grammar.freeze()];
    (record, counts.into_iter().collect())
}

/// Rank `r`'s one-rank trace record in a run of `pattern` on `p` ranks.
pub fn rank_record(pattern: Pattern, p: i64, r: i64, iters: u32) -> TraceRecord {
    let calls = pattern.calls(p, r, iters);
    let (mut record, counts) = compress(&calls);
    record.comms = pattern.comms(p, r);
    conifer_write::merge::of_rank(r as u32, record, counts, "node".into())
}
