//! What a trace holds, and its mapping onto sections.

use crate::record_codec::{decode_record, encode_record};
use crate::stored::TraceRecord;
use conifer_format::container::{
    find_section, read_sections, write_sections, FormatError, Section,
};
pub use conifer_format::metadata::{FunctionCounts, FunctionInfo, Language, Metadata};

/// A whole trace in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The run.
    pub meta: Metadata,
    /// The functions the signatures use, one per id (a file holds them in id order).
    pub catalog: Vec<FunctionInfo>,
    /// Signatures, grammars, per-rank entries (grammar ids, communicators, counts, hosts) and
    /// timing.
    pub record: TraceRecord,
}

/// Tag of the run's metadata section.
const META: [u8; 4] = *b"META";
/// Tag of the function catalog section.
const CATALOG: [u8; 4] = *b"FUNC";

/// The `META` and `FUNC` sections every trace and partial file starts with.
pub(crate) fn run_sections(meta: &Metadata, catalog: &[FunctionInfo]) -> Vec<Section> {
    vec![
        Section {
            tag: META,
            payload: conifer_format::meta_codec::encode(meta),
        },
        Section {
            tag: CATALOG,
            payload: conifer_format::catalog_codec::encode(catalog),
        },
    ]
}

/// The run and the function catalog, from the sections [`run_sections`] wrote.
pub(crate) fn read_run_sections(
    sections: &[Section],
) -> Result<(Metadata, Vec<FunctionInfo>), FormatError> {
    let meta = conifer_format::meta_codec::decode(find_section(sections, META)?)?;
    let catalog = conifer_format::catalog_codec::decode(find_section(sections, CATALOG)?)?;
    Ok((meta, catalog))
}

impl Trace {
    /// The file image of this trace.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut sections = run_sections(&self.meta, &self.catalog);
        sections.extend(encode_record(&self.record, true));
        write_sections(&sections)
    }

    /// Parses a file image.
    pub fn from_bytes(file: &[u8]) -> Result<Trace, FormatError> {
        let sections = read_sections(file)?;
        let (meta, catalog) = read_run_sections(&sections)?;
        let record = decode_record(&sections, 0)?;
        if record.ranks.len() != meta.ranks as usize {
            return Err(FormatError::Malformed(
                "the record does not cover every rank".into(),
            ));
        }
        Ok(Trace {
            meta,
            catalog,
            record,
        })
    }

    /// Per-function call counts kept by the wrappers (functions never called are omitted),
    /// by binding: a cross-check of the grammars, which hold the same calls.
    pub fn function_counts(&self) -> Vec<FunctionCounts> {
        let ranks = self.record.ranks.len();
        let mut by_id: std::collections::BTreeMap<u16, Vec<u64>> = Default::default();
        for (rank, entry) in self.record.ranks.iter().enumerate() {
            for &(id, n) in &entry.counts {
                by_id.entry(id).or_insert_with(|| vec![0; ranks])[rank] += n;
            }
        }
        by_id
            .into_iter()
            .map(|(id, per_rank)| {
                let info = self.catalog.iter().find(|f| f.id == id);
                FunctionCounts {
                    name: info.map_or_else(|| format!("function #{id}"), |f| f.name.clone()),
                    language: info.map_or(Language::C, |f| f.language),
                    per_rank,
                }
            })
            .collect()
    }

    /// Total calls of `name` over all ranks and bindings.
    pub fn total_calls(&self, name: &str) -> u64 {
        self.function_counts()
            .iter()
            .filter(|c| c.name == name)
            .flat_map(|c| &c.per_rank)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank_record::{CallTiming, Membership, RankRecord};

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
            record: crate::merge::merge(vec![
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
        use crate::merge::merge;
        use crate::rank_record::{CallTiming, RankRecord};
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
            crate::stored::TraceRecord::from_bytes(&m.to_bytes()).unwrap(),
            m
        );
        let file = crate::record_codec::encode_record(&m, true);
        let back = crate::record_codec::decode_record(&file, 0).unwrap();
        assert_eq!(back.timing[0].histogram, m.timing[0].histogram);
    }
}
