//! What a trace holds, and its mapping onto sections.

use crate::assemble::Merged;
use crate::container::{read_sections, write_sections, FormatError, Section};
use crate::rank_record::{Membership, Timing};
use crate::varint::{put_i64, put_u64, Reader};
use conifer_compress::FrozenGrammar;
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

/// One wrapped function: what the function ids in signatures stand for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionInfo {
    /// The id signatures use.
    pub id: u16,
    /// C spelling (`MPI_Isend`).
    pub name: String,
    /// Binding.
    pub language: Language,
    /// Parameter name of each value a signature of this function records, in order.
    pub slots: Vec<String>,
}

/// A whole trace in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The run.
    pub meta: Metadata,
    /// Per-function call counts kept by the wrappers (functions never called are omitted):
    /// a cross-check of the grammars, which hold the same calls.
    pub counts: Vec<FunctionCounts>,
    /// The functions the signatures use.
    pub catalog: Vec<FunctionInfo>,
    /// Signatures, grammars, rank map, communicators and timing.
    pub record: Merged,
}

const META: [u8; 4] = *b"META";
const COUNTS: [u8; 4] = *b"CNTS";
const CATALOG: [u8; 4] = *b"FUNC";
const SIGNATURES: [u8; 4] = *b"SIGS";
const GRAMMARS: [u8; 4] = *b"GRAM";
const RANK_MAP: [u8; 4] = *b"RMAP";
const COMMS: [u8; 4] = *b"COMM";
const TIMING: [u8; 4] = *b"TIME";
const TIMELINES: [u8; 4] = *b"TMLN";

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn encode_record(m: &Merged) -> [Vec<u8>; 6] {
    let mut sigs = Vec::new();
    put_u64(&mut sigs, m.signatures.len() as u64);
    m.signatures.iter().for_each(|s| put_bytes(&mut sigs, s));
    let mut grams = Vec::new();
    put_u64(&mut grams, m.grammars.len() as u64);
    m.grammars
        .iter()
        .for_each(|g| put_bytes(&mut grams, &g.to_bytes()));
    let mut map = Vec::new();
    put_u64(&mut map, m.rank_grammars.len() as u64);
    for threads in &m.rank_grammars {
        put_u64(&mut map, threads.len() as u64);
        threads.iter().for_each(|g| put_u64(&mut map, (*g).into()));
    }
    let mut comms = Vec::new();
    put_u64(&mut comms, m.comms.len() as u64);
    for list in &m.comms {
        put_u64(&mut comms, list.len() as u64);
        for c in list {
            put_bytes(&mut comms, &c.comm);
            put_i64(&mut comms, c.my_rank);
        }
    }
    let mut timing = Vec::new();
    put_u64(&mut timing, m.timing.len() as u64);
    for list in &m.timing {
        put_u64(&mut timing, list.len() as u64);
        for (t, stats) in list {
            put_u64(&mut timing, (*t).into());
            stats.encode(&mut timing);
        }
    }
    let mut timelines = Vec::new();
    if m.timelines.iter().any(|threads| !threads.is_empty()) {
        put_u64(&mut timelines, m.timelines.len() as u64);
        for threads in &m.timelines {
            put_u64(&mut timelines, threads.len() as u64);
            threads.iter().for_each(|t| put_bytes(&mut timelines, t));
        }
    }
    [sigs, grams, map, comms, timing, timelines]
}

fn malformed(what: &str) -> FormatError {
    FormatError::Malformed(format!("{what} section is inconsistent"))
}

fn list<T>(
    bytes: &[u8],
    what: &str,
    mut item: impl FnMut(&mut Reader) -> Option<T>,
) -> Result<Vec<T>, FormatError> {
    let mut r = Reader::new(bytes);
    let n = r.count().ok_or_else(|| malformed(what))?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(item(&mut r).ok_or_else(|| malformed(what))?);
    }
    if r.remaining() != 0 {
        return Err(malformed(what));
    }
    Ok(out)
}

fn decode_record<'a>(
    find: &dyn Fn([u8; 4]) -> Result<&'a [u8], FormatError>,
) -> Result<Merged, FormatError> {
    let signatures = list(find(SIGNATURES)?, "SIGS", |r| {
        let n = r.count()?;
        r.take(n).map(<[u8]>::to_vec)
    })?;
    let grammars = list(find(GRAMMARS)?, "GRAM", |r| {
        let n = r.count()?;
        FrozenGrammar::from_bytes(r.take(n)?).ok()
    })?;
    let rank_grammars = list(find(RANK_MAP)?, "RMAP", |r| {
        let n = r.count()?;
        (0..n).map(|_| r.u32()).collect::<Option<Vec<u32>>>()
    })?;
    let comms = list(find(COMMS)?, "COMM", |r| {
        let n = r.count()?;
        (0..n)
            .map(|_| {
                let len = r.count()?;
                let comm = r.take(len)?.to_vec();
                Some(Membership {
                    comm,
                    my_rank: r.i64()?,
                })
            })
            .collect::<Option<Vec<_>>>()
    })?;
    let timing = list(find(TIMING)?, "TIME", |r| {
        let n = r.count()?;
        (0..n)
            .map(|_| Some((r.u32()?, Timing::decode(r)?)))
            .collect::<Option<Vec<_>>>()
    })?;
    let terminals = signatures.len() as u32;
    let grammar_count = grammars.len() as u32;
    if grammars.iter().any(|g| {
        g.rules()
            .iter()
            .flatten()
            .any(|i| matches!(i.symbol, conifer_compress::Symbol::Terminal(t) if t >= terminals))
    }) || rank_grammars.iter().flatten().any(|&g| g >= grammar_count)
    {
        return Err(FormatError::Malformed(
            "a grammar refers to a signature or grammar that does not exist".into(),
        ));
    }
    // Only traces recorded with lossless timing have timelines.
    let timelines = match find(TIMELINES) {
        Ok(bytes) => list(bytes, "TMLN", |r| {
            let n = r.count()?;
            (0..n)
                .map(|_| {
                    let len = r.count()?;
                    r.take(len).map(<[u8]>::to_vec)
                })
                .collect::<Option<Vec<_>>>()
        })?,
        Err(_) => vec![Vec::new(); rank_grammars.len()],
    };
    Ok(Merged {
        signatures,
        grammars,
        rank_grammars,
        comms,
        timing,
        timelines,
    })
}

impl Trace {
    /// The file image of this trace.
    pub fn to_bytes(&self) -> Vec<u8> {
        let [sigs, grams, map, comms, timing, timelines] = encode_record(&self.record);
        let section = |tag: [u8; 4], payload: Vec<u8>| Section { tag, payload };
        let mut sections = vec![
            section(META, to_json(&self.meta)),
            section(CATALOG, to_json(&self.catalog)),
            section(COUNTS, to_json(&self.counts)),
            section(SIGNATURES, sigs),
            section(GRAMMARS, grams),
            section(RANK_MAP, map),
            section(COMMS, comms),
            section(TIMING, timing),
        ];
        if !timelines.is_empty() {
            sections.push(section(TIMELINES, timelines));
        }
        write_sections(&sections)
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
        let catalog: Vec<FunctionInfo> =
            serde_json::from_slice(find(CATALOG)?).map_err(|e| parse_err("FUNC", e))?;
        let record = decode_record(&find)?;
        let ranks = meta.ranks as usize;
        if record.rank_grammars.len() != ranks
            || record.comms.len() != ranks
            || record.timing.len() != ranks
        {
            return Err(FormatError::Malformed(
                "the record does not cover every rank".into(),
            ));
        }
        Ok(Trace {
            meta,
            counts,
            catalog,
            record,
        })
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
            catalog: vec![FunctionInfo {
                id: 0,
                name: "MPI_Send".into(),
                language: Language::C,
                slots: vec!["buf".into(), "count".into()],
            }],
            record: crate::assemble::merge(vec![rank(&[1, 2, 1, 2]), rank(&[2, 1])]),
        }
    }

    fn rank(seq: &[u32]) -> crate::rank_record::RankRecord {
        let mut g = conifer_compress::Grammar::new();
        seq.iter().for_each(|&t| g.push(t - 1));
        crate::rank_record::RankRecord {
            signatures: vec![vec![0, 1], vec![0, 2]],
            timing: vec![Timing::default(); 2],
            grammars: vec![g.freeze()],
            comms: vec![Membership {
                comm: vec![2, 0, 0, 1],
                my_rank: 1,
            }],
            timelines: Vec::new(),
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
