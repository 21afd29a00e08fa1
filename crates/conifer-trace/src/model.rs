//! What a trace holds, and its mapping onto sections.

use crate::container::{read_sections, write_sections, FormatError, Section};
use serde::{Deserialize, Serialize};

/// The run a trace was recorded from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// Version of the Conifer that wrote the trace.
    pub conifer_version: String,
    /// The MPI Conifer was built for (`openmpi` / `mpich`).
    pub mpi: String,
    /// `MPI_Get_library_version` of the run.
    pub mpi_library_version: String,
    /// The application's command line, as rank 0 saw it.
    pub command_line: Vec<String>,
    /// Number of ranks in `MPI_COMM_WORLD`.
    pub ranks: u32,
    /// Host name of each rank.
    pub hosts: Vec<String>,
    /// When rank 0 returned from `MPI_Init`, seconds since the Unix epoch.
    pub start_unix_seconds: f64,
    /// True when some rank did not reach `MPI_Finalize`.
    pub partial: bool,
}

/// Which language binding a call came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// The C binding (`MPI_Send`).
    C,
    /// The mpif.h / `use mpi` Fortran binding (`mpi_send_`).
    Fortran,
}

/// How often each rank called one function through one binding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCounts {
    /// C spelling of the function (`MPI_Isend`).
    pub name: String,
    /// Binding the calls came through.
    pub language: Language,
    /// Calls per rank, indexed by `MPI_COMM_WORLD` rank.
    pub per_rank: Vec<u64>,
}

/// A whole trace in memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The run.
    pub meta: Metadata,
    /// Per-function call counts (functions never called are omitted).
    pub counts: Vec<FunctionCounts>,
}

const META: [u8; 4] = *b"META";
const COUNTS: [u8; 4] = *b"CNTS";

impl Trace {
    /// The file image of this trace.
    pub fn to_bytes(&self) -> Vec<u8> {
        write_sections(&[
            Section {
                tag: META,
                payload: to_json(&self.meta),
            },
            Section {
                tag: COUNTS,
                payload: to_json(&self.counts),
            },
        ])
    }

    /// Parses a file image.
    pub fn from_bytes(file: &[u8]) -> Result<Trace, FormatError> {
        let sections = read_sections(file)?;
        let find = |tag: [u8; 4]| {
            sections
                .iter()
                .find(|s| s.tag == tag)
                .map(|s| s.payload.as_slice())
                .ok_or_else(|| {
                    FormatError::Malformed(format!("no {} section", String::from_utf8_lossy(&tag)))
                })
        };
        let parse_err = |what: &str, e: serde_json::Error| {
            FormatError::Malformed(format!("{what} section: {e}"))
        };
        let meta: Metadata =
            serde_json::from_slice(find(META)?).map_err(|e| parse_err("META", e))?;
        let counts: Vec<FunctionCounts> =
            serde_json::from_slice(find(COUNTS)?).map_err(|e| parse_err("CNTS", e))?;
        if counts
            .iter()
            .any(|c| c.per_rank.len() != meta.ranks as usize)
        {
            return Err(FormatError::Malformed(
                "call counts do not cover every rank".into(),
            ));
        }
        Ok(Trace { meta, counts })
    }

    /// Total calls of `name` over all ranks and bindings.
    pub fn total_calls(&self, name: &str) -> u64 {
        self.counts
            .iter()
            .filter(|c| c.name == name)
            .flat_map(|c| &c.per_rank)
            .sum()
    }
}

fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("plain data serialises to JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace() -> Trace {
        Trace {
            meta: Metadata {
                conifer_version: "0.1.0".into(),
                mpi: "openmpi".into(),
                mpi_library_version: "Open MPI v4.1.4".into(),
                command_line: vec!["./ring".into(), "10".into()],
                ranks: 2,
                hosts: vec!["a".into(), "a".into()],
                start_unix_seconds: 1.5,
                partial: false,
            },
            counts: vec![
                FunctionCounts {
                    name: "MPI_Send".into(),
                    language: Language::C,
                    per_rank: vec![3, 4],
                },
                FunctionCounts {
                    name: "MPI_Send".into(),
                    language: Language::Fortran,
                    per_rank: vec![1, 0],
                },
            ],
        }
    }

    #[test]
    fn trace_round_trips_and_sums_bindings() {
        let t = trace();
        let back = Trace::from_bytes(&t.to_bytes()).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.total_calls("MPI_Send"), 8);
    }

    #[test]
    fn counts_must_cover_every_rank() {
        let mut t = trace();
        t.counts[0].per_rank.pop();
        let err = Trace::from_bytes(&t.to_bytes()).unwrap_err();
        assert!(matches!(err, FormatError::Malformed(_)));
    }
}
