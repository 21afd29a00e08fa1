//! What a trace holds, and its mapping onto sections.

use crate::container::{find_section, read_sections, write_sections, FormatError, Section};
pub use crate::metadata::{FunctionCounts, FunctionInfo, Language, Metadata};
use crate::record_codec::{decode_record, encode_record};
use crate::stored::TraceRecord;

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
            payload: crate::meta_codec::encode(meta),
        },
        Section {
            tag: CATALOG,
            payload: crate::catalog_codec::encode(catalog),
        },
    ]
}

/// The run and the function catalog, from the sections [`run_sections`] wrote.
pub(crate) fn read_run_sections(
    sections: &[Section],
) -> Result<(Metadata, Vec<FunctionInfo>), FormatError> {
    let meta = crate::meta_codec::decode(find_section(sections, META)?)?;
    let catalog = crate::catalog_codec::decode(find_section(sections, CATALOG)?)?;
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
