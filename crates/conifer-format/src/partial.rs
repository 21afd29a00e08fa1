//! Partial files: what one rank had recorded when its run ended early (a fatal signal,
//! `MPI_Abort`, `exit` without `MPI_Finalize`), written by that rank alone. The write side's
//! `conifer_write::partial::merge_partials` turns a run's partial files into a trace marked
//! partial (`conifer merge DIR -o FILE.cft`).

use crate::container::find_section;
use crate::container::{read_sections, write_sections, FormatError, Section};
use crate::model::{read_run_sections, run_sections};
use crate::stored::TraceRecord;
use crate::{FunctionInfo, Metadata};

const REASON: [u8; 4] = *b"WHY\0";

/// One rank's partial file.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialRecord {
    /// The run, as this rank knew it (`ranks` is the size of `MPI_COMM_WORLD`).
    pub meta: Metadata,
    /// The functions this rank's signatures use.
    pub catalog: Vec<FunctionInfo>,
    /// This rank's record (`first_rank` is its rank).
    pub record: TraceRecord,
    /// Why the rank stopped (`SIGSEGV`, `MPI_Abort`, `exit without MPI_Finalize`).
    pub reason: String,
}

impl PartialRecord {
    /// The file image.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut sections = run_sections(&self.meta, &self.catalog);
        sections.push(Section {
            tag: REASON,
            payload: self.reason.as_bytes().to_vec(),
        });
        sections.extend(self.record.sections());
        write_sections(&sections)
    }

    /// Parses a file image.
    pub fn from_bytes(file: &[u8]) -> Result<PartialRecord, FormatError> {
        let sections = read_sections(file)?;
        let (meta, catalog) = read_run_sections(&sections)?;
        let reason = String::from_utf8_lossy(find_section(&sections, REASON)?).into_owned();
        let record = TraceRecord::from_sections(&sections)?;
        if record.ranks.len() != 1 || record.first_rank >= meta.ranks {
            return Err(FormatError::Malformed(
                "a partial file holds exactly one rank of its run".into(),
            ));
        }
        Ok(PartialRecord {
            meta,
            catalog,
            record,
            reason,
        })
    }
}
