//! The trace for N ranks: each rank's class model evaluated at N into a rank record (calls,
//! communicators, counts, timing kept from the largest input), and the records merged as the
//! tracer merges real ones (rank and integer codes chosen over all N ranks).

use crate::leaves::{fill_call, fill_comms};
use crate::model::{Fitted, Model};
use crate::samples::{Items, Shape};
use conifer_compress::fast_hash::FastMap;
use conifer_compress::Grammar;
use conifer_format::rank_record::{CallTiming, RankRecord};
use conifer_format::rank_totals::{FunctionTotals, RankTotals};
use conifer_format::stored::TraceRecord;
use std::collections::BTreeMap;

/// The value of each leaf of `fitted` at `features` (`n` ranks), or why there is none: a form
/// with no value there, or alternatives the inputs could not tell apart that disagree there.
fn eval(fitted: &Fitted, features: &[Option<i64>], n: u32) -> Result<Vec<i64>, String> {
    fitted
        .forms
        .iter()
        .zip(&fitted.labels)
        .map(|(alternatives, label)| {
            let values: Vec<Option<i64>> = alternatives.iter().map(|f| f.eval(features)).collect();
            match values.first().copied().flatten() {
                None => Err(format!(
                    "{label}: is {}, which has no value at {n} ranks",
                    alternatives[0]
                )),
                Some(v) => match values.iter().position(|w| *w != Some(v)) {
                    None => Ok(v),
                    Some(k) => Err(format!(
                        "{label}: the inputs cannot tell {} from {}, which differ at {n} ranks (give inputs where they differ)",
                        alternatives[0], alternatives[k]
                    )),
                },
            }
        })
        .collect()
}

/// The merged record of `n` ranks, with each rank's host; or one line per rank class that has
/// no counterpart in the inputs, or whose fields cannot be evaluated at `n`.
pub fn build(model: &Model, items: &Items, n: u32, host: &str) -> Result<TraceRecord, Vec<String>> {
    let mut problems = std::collections::BTreeSet::new();
    let mut missing: BTreeMap<Vec<u8>, Vec<u32>> = BTreeMap::new();
    let mut records = Vec::with_capacity(n as usize);
    for r in 0..n {
        let (key, features) = model.classing.classify(i64::from(n), i64::from(r));
        let Some(class) = model.classes.get(&key) else {
            missing.entry(key).or_default().push(r);
            continue;
        };
        let mut record = RankRecord::default();
        let fitted = &model.fitted[class.comms as usize];
        if let Shape::Comms(template) = &items.shapes[fitted.shape as usize] {
            let leaves = match eval(fitted, &features, n) {
                Ok(leaves) => leaves,
                Err(why) => {
                    problems.insert(why);
                    continue;
                }
            };
            record.comms = fill_comms(template, &leaves);
        }
        let grids = crate::leaves::grids(&record.comms);
        let mut local: FastMap<u32, u32> = FastMap::default();
        let mut counts: BTreeMap<u16, u64> = BTreeMap::new();
        let mut mpi_ns: BTreeMap<u16, f64> = BTreeMap::new();
        let mut compute_ns = 0.0;
        for (t, calls) in class.threads.iter().enumerate() {
            let mut grammar = Grammar::new();
            for (i, &site) in calls.iter().enumerate() {
                let fitted = &model.fitted[site as usize];
                let Shape::Call(shape) = &items.shapes[fitted.shape as usize] else {
                    continue;
                };
                let next = record.signatures.len() as u32;
                let term = match local.get(&site) {
                    Some(&term) => term,
                    None => {
                        let leaves = eval(fitted, &features, n).map_err(|why| vec![why])?;
                        let sig = fill_call(shape, &leaves, &grids).ok_or_else(|| {
                            vec![format!(
                                "{}: a grid offset does not fit the grid at {n} ranks",
                                model.classing.describe(&key)
                            )]
                        })?;
                        record
                            .signatures
                            .push(conifer_format::signature::encode_signature(&sig));
                        record.timing.push(CallTiming::default());
                        local.insert(site, next);
                        next
                    }
                };
                let function = match &items.shapes[fitted.shape as usize] {
                    Shape::Call(s) => s.function,
                    Shape::Comms(_) => 0,
                };
                let (interval, duration) = class
                    .times
                    .get(t)
                    .and_then(|ts| ts.get(i))
                    .copied()
                    .unwrap_or_default();
                record.timing[term as usize].add(interval, duration);
                *counts.entry(function).or_default() += 1;
                *mpi_ns.entry(function).or_default() += duration;
                compute_ns += interval;
                grammar.push(term);
            }
            record.grammars.push(grammar.freeze());
        }
        record.totals = RankTotals {
            recorder_ns: 0,
            compute_ns: compute_ns as u64,
            functions: mpi_ns
                .into_iter()
                .map(|(function, ns)| FunctionTotals {
                    function,
                    mpi_ns: ns as u64,
                })
                .collect(),
        };
        records.push((record, counts.into_iter().collect(), host.to_string()));
    }
    for (key, ranks) in missing {
        let more = match ranks.len() {
            1 => String::new(),
            k => format!(" and {} more", k - 1),
        };
        problems.insert(format!(
            "{} (rank {}{more} of {n}): no input has a rank there, so nothing says what it does",
            model.classing.describe(&key),
            ranks[0]
        ));
    }
    if !problems.is_empty() {
        return Err(problems.into_iter().collect());
    }
    let mut merged = conifer_write::merge::merge(records);
    conifer_write::codes::choose_codes(&mut merged);
    Ok(merged)
}
