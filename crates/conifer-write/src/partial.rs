//! [`merge_partials`]: a run's partial files (see [`conifer_format::partial`]) into one trace
//! marked partial (`conifer merge DIR -o FILE.cft`).

use crate::merge::{absorb, of_rank};
use conifer_format::model::Trace;
use conifer_format::partial::PartialRecord;
use conifer_format::rank_record::RankRecord;
use conifer_format::stored::TraceRecord;
use conifer_format::FunctionInfo;

/// Combines the partial files of one run (any order, at most one per rank) into a trace marked
/// partial. Ranks without a file get an empty record and are listed as missing.
pub fn merge_partials(mut parts: Vec<PartialRecord>) -> Result<Trace, String> {
    let first = parts.first().ok_or("no partial files to merge")?;
    let ranks = first.meta.ranks;
    let command = first.meta.command_line.clone();
    if let Some(other) = parts
        .iter()
        .find(|p| p.meta.ranks != ranks || p.meta.command_line != command)
    {
        return Err(format!(
            "the partial files come from different runs (rank {} ran {:?} on {} ranks, not {:?} on {ranks})",
            other.record.first_rank, other.meta.command_line, other.meta.ranks, command
        ));
    }
    parts.sort_by_key(|p| p.record.first_rank);
    if let Some(pair) = parts
        .windows(2)
        .find(|w| w[0].record.first_rank == w[1].record.first_rank)
    {
        return Err(format!(
            "two partial files for rank {}",
            pair[0].record.first_rank
        ));
    }
    let mut meta = parts[0].meta.clone();
    meta.partial = true;
    meta.missing_ranks.clear();
    meta.partial_reasons.clear();
    let mut catalog: Vec<FunctionInfo> = Vec::new();
    let mut merged: Option<TraceRecord> = None;
    let mut parts = parts.into_iter().peekable();
    for rank in 0..ranks {
        let record = match parts.next_if(|p| p.record.first_rank == rank) {
            Some(part) => {
                meta.partial_reasons
                    .push(format!("rank {rank}: {}", part.reason));
                for m in &part.meta.modules {
                    if !meta.modules.contains(m) {
                        meta.modules.push(m.clone());
                    }
                }
                for f in part.catalog {
                    if !catalog.iter().any(|known| known.id == f.id) {
                        catalog.push(f);
                    }
                }
                part.record
            }
            None => {
                meta.missing_ranks.push(rank);
                of_rank(rank, RankRecord::default(), Vec::new(), String::new())
            }
        };
        match &mut merged {
            Some(m) => absorb(m, record),
            None => merged = Some(record),
        }
    }
    catalog.sort_by_key(|f| f.id);
    let mut record = merged.unwrap_or_default();
    crate::codes::choose_codes(&mut record);
    Ok(Trace {
        meta,
        catalog,
        record,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use conifer_compress::Grammar;
    use conifer_format::rank_record::CallTiming;
    use conifer_format::{Language, Metadata};

    fn part(rank: u32, calls: u32, reason: &str) -> PartialRecord {
        let mut g = Grammar::new();
        (0..calls).for_each(|_| g.push(0));
        let record = RankRecord {
            signatures: vec![vec![0, 0, 0]],
            timing: vec![CallTiming::default()],
            grammars: vec![g.freeze()],
            ..Default::default()
        };
        PartialRecord {
            meta: Metadata {
                conifer_version: "0".into(),
                mpi: "openmpi".into(),
                mpi_library_version: String::new(),
                command_line: vec!["./app".into()],
                ranks: 4,
                start_unix_seconds: 0.0,
                partial: true,
                missing_ranks: Vec::new(),
                options: Vec::new(),
                partial_reasons: Vec::new(),
                modules: Vec::new(),
            },
            catalog: vec![FunctionInfo {
                id: 0,
                name: "MPI_Barrier".into(),
                language: Language::C,
                slots: Vec::new(),
            }],
            record: of_rank(rank, record, vec![(0, u64::from(calls))], "h".into()),
            reason: reason.into(),
        }
    }

    #[test]
    fn partial_files_round_trip_and_merge_with_missing_ranks() {
        let parts: Vec<PartialRecord> = [(3, 5, "SIGTERM"), (1, 7, "SIGSEGV"), (0, 5, "SIGTERM")]
            .into_iter()
            .map(|(r, n, why)| PartialRecord::from_bytes(&part(r, n, why).to_bytes()).unwrap())
            .collect();
        assert_eq!(parts[1], part(1, 7, "SIGSEGV"));
        let trace = merge_partials(parts).unwrap();
        assert!(trace.meta.partial);
        assert_eq!(trace.meta.missing_ranks, vec![2]);
        assert_eq!(
            trace.meta.partial_reasons,
            vec!["rank 0: SIGTERM", "rank 1: SIGSEGV", "rank 3: SIGTERM"]
        );
        let record = &trace.record;
        let lengths: Vec<u64> = (0..4)
            .map(|r| {
                let entry = &record.ranks[r];
                (0..entry.threads.len())
                    .map(|t| record.thread_calls(entry, t))
                    .sum()
            })
            .collect();
        assert_eq!(lengths, vec![5, 7, 0, 5]);
        let back = Trace::from_bytes(&trace.to_bytes()).unwrap();
        assert_eq!(back.meta, trace.meta);
    }

    #[test]
    fn files_of_different_runs_or_twice_the_same_rank_are_refused() {
        let mut other = part(1, 1, "x");
        other.meta.ranks = 8;
        assert!(merge_partials(vec![part(0, 1, "x"), other])
            .unwrap_err()
            .contains("different runs"));
        assert!(merge_partials(vec![part(0, 1, "x"), part(0, 2, "y")])
            .unwrap_err()
            .contains("two partial files for rank 0"));
        assert!(merge_partials(Vec::new()).is_err());
    }
}
