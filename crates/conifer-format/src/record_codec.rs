//! The sections that hold a [`TraceRecord`] record, used both in `.cft` files and in the messages of
//! the tracer's pairwise merge (so a partly merged record and a trace are the same bytes):
//! `SIGS` signatures, `GRAM` distinct grammars (combined by one more Sequitur pass), `RMAP` rank → grammars, `COMM` communicator
//! memberships, `CNTS` wrapper call counts, `HOST` host names, `TIME` timing per timing
//! family and per-rank totals, `THST` histograms per timing family and `TMLN` per-call
//! timelines, lossless or lossy (each only when recorded), `RECT` the recorder's own time per
//! call (with `TMLN`), `CLCK` each rank's clock offsets to rank 0 and its threads' spans,
//! `RTOT` each rank's exact per-function totals. In files every
//! section is zstd-compressed when that makes it smaller. Per-rank sections are columns
//! (see [`crate::columns`]), so they grow with distinct behaviours, not ranks.

use crate::clock::RankClock;
use crate::columns::{put_column, read_column};
use crate::container::{find_section, read_sections, write_sections, FormatError, Section};
use crate::grid::Grid;
use crate::membership::{
    put_grid, put_rank_and_leader, read_grid, read_rank_and_leader, Membership, RelativeLeader,
};
use crate::packing::{pack_above, pack_if_smaller, unpack};
use crate::rank_timing::Precision;
use crate::rank_totals::RankTotals;
use crate::stored::{RankEntry, TraceRecord};
use crate::timing::RankTime;
use crate::varint::{put_u64, Reader};
use conifer_compress::Symbol;

/// Tag of the section holding the global signature table.
pub const SIGNATURES: [u8; 4] = *b"SIGS";
const GRAMMARS: [u8; 4] = *b"GRAM";
const RANK_MAP: [u8; 4] = *b"RMAP";
const COMMS: [u8; 4] = *b"COMM";
const COUNTS: [u8; 4] = *b"CNTS";
const HOSTS: [u8; 4] = *b"HOST";
const TIMING: [u8; 4] = *b"TIME";
const TIMELINES: [u8; 4] = *b"TMLN";
const HISTOGRAMS: [u8; 4] = *b"THST";
const FIRST_RANK: [u8; 4] = *b"FRST";
const STREAMS: [u8; 4] = *b"STRM";
const STREAM_MAP: [u8; 4] = *b"SMAP";
const STREAM_VALUES: [u8; 4] = *b"SVAL";
const CLOCKS: [u8; 4] = *b"CLCK";
const TOTALS: [u8; 4] = *b"RTOT";
const RECORDER_TIMES: [u8; 4] = *b"RECT";
const QUANTISED_RANK_TIMES: [u8; 4] = *b"RQTM";
const CORES: [u8; 4] = *b"CORE";

/// The most ranks a record may claim: columns compress ranks to a few bytes, so the claim is
/// bounded explicitly to keep a corrupt file from making the reader allocate without limit.
pub const MAX_RANKS: usize = 1 << 24;

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn put_u32s(out: &mut Vec<u8>, values: &[u32]) {
    put_u64(out, values.len() as u64);
    values.iter().for_each(|&v| put_u64(out, v.into()));
}

fn read_u32s(r: &mut Reader) -> Option<Vec<u32>> {
    let n = r.count()?;
    (0..n).map(|_| r.u32()).collect()
}

/// A rank's communicators with its rank in each: `None` when it equals its world rank (so all
/// ranks of a communicator numbered like `MPI_COMM_WORLD` store the same value), else the rank
/// itself (so `MPI_COMM_SELF`, or the rows of a grid, repeat across ranks); and its leader,
/// relative too.
type RelativeComms = Vec<(Vec<u8>, Option<i64>, Option<Grid>, RelativeLeader)>;

fn relative_comms(world_rank: i64, comms: &[Membership]) -> RelativeComms {
    let mut previous = None;
    comms
        .iter()
        .map(|m| {
            let rank = (m.my_rank != world_rank).then_some(m.my_rank);
            let leader = RelativeLeader::of(m.leader, world_rank, m.my_rank, previous);
            previous = m.leader;
            (m.comm.clone(), rank, m.grid.clone(), leader)
        })
        .collect()
}

/// The memberships [`relative_comms`] made relative for the rank of world rank `world`.
fn absolute_comms(world: i64, comms: RelativeComms) -> Vec<Membership> {
    let mut previous = None;
    comms
        .into_iter()
        .map(|(comm, rank, grid, leader)| {
            let my_rank = rank.unwrap_or(world);
            let leader = leader.resolve(world, my_rank, previous);
            previous = leader;
            Membership {
                comm,
                my_rank,
                grid,
                leader,
            }
        })
        .collect()
}

/// Signature tables larger than this are zstd-compressed: signatures of one program share most
/// of their bytes (the same request arrays, communicators, datatypes), and tables grow large
/// exactly when completion orders vary (`MPI_Testsome` over many requests).
const COMPRESS_SIGNATURES_ABOVE: usize = 4096;
/// The sections of `m`, in file order; `compact` compresses sections (files) rather than
/// keeping them quick to write and read (merge messages), and quantises timing.
pub fn encode_record(m: &TraceRecord, compact: bool) -> Vec<Section> {
    let mut sigs = Vec::new();
    put_u64(&mut sigs, m.signatures.len() as u64);
    m.signatures.iter().for_each(|s| put_bytes(&mut sigs, s));
    let grams = if compact {
        conifer_compress::encode_set(&m.grammars)
    } else {
        conifer_compress::encode_list(&m.grammars)
    };
    let mut map = Vec::new();
    put_u64(&mut map, m.ranks.len() as u64);
    let threads: Vec<&Vec<u32>> = m.ranks.iter().map(|r| &r.threads).collect();
    put_column(&mut map, &threads, |o, t| put_u32s(o, t));
    let mut comms = Vec::new();
    let relative: Vec<RelativeComms> = m
        .ranks
        .iter()
        .enumerate()
        .map(|(i, r)| relative_comms(i64::from(m.first_rank) + i as i64, &r.comms))
        .collect();
    put_column(&mut comms, &relative, |o, list| {
        put_u64(o, list.len() as u64);
        for (comm, rank, grid, leader) in list {
            put_bytes(o, comm);
            put_grid(o, grid.as_ref());
            put_rank_and_leader(o, *rank, *leader);
        }
    });
    let mut counts = Vec::new();
    let per_rank: Vec<&Vec<(u16, u64)>> = m.ranks.iter().map(|r| &r.counts).collect();
    put_column(&mut counts, &per_rank, |o, list| {
        put_u64(o, list.len() as u64);
        for &(id, n) in list.iter() {
            put_u64(o, id.into());
            put_u64(o, n);
        }
    });
    let mut hosts = Vec::new();
    let names: Vec<&str> = m.ranks.iter().map(|r| r.host.as_str()).collect();
    put_column(&mut hosts, &names, |o, h| o.extend_from_slice(h.as_bytes()));
    let precision = rank_precision(m, compact);
    let rank_times = precision.is_none().then(|| m.ranks.iter().map(|r| &r.time));
    let timing = crate::timing::encode_timing(&m.timing, rank_times, compact);
    let section = |tag: [u8; 4], payload: Vec<u8>| Section { tag, payload };
    let sigs = if compact {
        pack_if_smaller(sigs, true)
    } else {
        pack_above(sigs, Some(COMPRESS_SIGNATURES_ABOVE))
    };
    let packed = |tag: [u8; 4], payload: Vec<u8>| section(tag, pack_if_smaller(payload, compact));
    // Files leave out the grammar section when trace trees hold every call (one empty
    // grammar); readers then restore that grammar.
    let trees_hold_all =
        compact && m.forest.is_some() && m.grammars.len() == 1 && m.grammars[0].is_empty();
    let mut sections = vec![section(SIGNATURES, sigs)];
    if !trees_hold_all {
        sections.push(packed(GRAMMARS, grams));
    }
    sections.extend([
        packed(RANK_MAP, map),
        packed(COMMS, comms),
        packed(COUNTS, counts),
        packed(HOSTS, hosts),
        packed(TIMING, timing),
    ]);
    if m.timing.iter().any(|f| f.histogram.is_some()) {
        sections.push(packed(
            HISTOGRAMS,
            crate::histogram::encode_histograms(m.timing.iter().map(|f| f.histogram.as_ref())),
        ));
    }
    if m.ranks.iter().any(|r| !r.timelines.is_empty()) {
        let per_rank: Vec<&Vec<Vec<u8>>> = m.ranks.iter().map(|r| &r.timelines).collect();
        sections.push(packed(TIMELINES, per_thread_bytes(&per_rank)));
    }
    if m.ranks.iter().any(|r| !r.recorder_times.is_empty()) {
        let per_rank: Vec<&Vec<Vec<u8>>> = m.ranks.iter().map(|r| &r.recorder_times).collect();
        sections.push(packed(RECORDER_TIMES, per_thread_bytes(&per_rank)));
    }
    if let Some(p) = precision {
        let ranks: Vec<_> = m.ranks.iter().map(|r| (&r.clock, &r.totals)).collect();
        sections.push(packed(
            QUANTISED_RANK_TIMES,
            crate::rank_timing::encode(&p, &ranks),
        ));
    } else if m.ranks.iter().any(|r| r.clock != RankClock::default()) {
        let values: Vec<Vec<u8>> = m
            .ranks
            .iter()
            .map(|r| bytes_of(|o| r.clock.encode(o)))
            .collect();
        let mut clocks = Vec::new();
        put_column(&mut clocks, &values, |o, v| o.extend_from_slice(v));
        sections.push(packed(CLOCKS, clocks));
    }
    if m.ranks.iter().any(|r| r.cores > 0) {
        let cores: Vec<u32> = m.ranks.iter().map(|r| r.cores).collect();
        let mut column = Vec::new();
        put_column(&mut column, &cores, |o, &n| put_u64(o, n.into()));
        sections.push(packed(CORES, column));
    }
    if precision.is_none() && m.ranks.iter().any(|r| !r.totals.is_empty()) {
        let values: Vec<Vec<u8>> = m
            .ranks
            .iter()
            .map(|r| bytes_of(|o| r.totals.encode(o)))
            .collect();
        let mut totals = Vec::new();
        put_column(&mut totals, &values, |o, v| o.extend_from_slice(v));
        sections.push(packed(TOTALS, totals));
    }
    if !m.streams.is_empty() {
        let (streams, map) = crate::streams::encode_streams(
            &m.streams,
            &m.ranks.iter().map(|r| &r.streams).collect::<Vec<_>>(),
        );
        sections.push(packed(STREAMS, streams));
        sections.push(packed(STREAM_MAP, map));
        if let Some(values) = crate::streams::encode_values(&m.streams) {
            sections.push(packed(STREAM_VALUES, values));
        }
    }
    if let Some(forest) = &m.forest {
        let trees: Vec<Vec<u32>> = m.ranks.iter().map(|r| r.trees.clone()).collect();
        sections.extend(crate::forest_codec::encode(forest, &trees, compact));
    }
    sections
}

/// The error the ranks' clocks and totals are written with (`None`: exact, `CLCK` and
/// `RTOT`): a record read with an error keeps it; files (`compact`) of runs without per-call
/// timelines (aggregate and histogram timing) take [`Precision::DEFAULT`].
fn rank_precision(m: &TraceRecord, compact: bool) -> Option<Precision> {
    let per_call = m
        .ranks
        .iter()
        .any(|r| !r.timelines.is_empty() || !r.recorder_times.is_empty());
    let kept = m
        .ranks
        .iter()
        .any(|r| r.clock != RankClock::default() || !r.totals.is_empty());
    m.rank_precision
        .or((compact && !per_call && kept).then_some(Precision::DEFAULT))
}

/// The bytes `write` appends to an empty vector.
fn bytes_of(write: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    write(&mut out);
    out
}

/// Per rank, its thread count and each thread's length-prefixed bytes (`TMLN`, `RECT`).
fn per_thread_bytes(per_rank: &[&Vec<Vec<u8>>]) -> Vec<u8> {
    let mut out = Vec::new();
    for threads in per_rank {
        put_u64(&mut out, threads.len() as u64);
        threads.iter().for_each(|t| put_bytes(&mut out, t));
    }
    out
}

/// Reads what [`per_thread_bytes`] wrote for `ranks` ranks.
fn read_per_thread_bytes(
    bytes: &[u8],
    ranks: usize,
    what: &str,
) -> Result<Vec<Vec<Vec<u8>>>, FormatError> {
    let mut r = Reader::new(bytes);
    let per_rank = (0..ranks)
        .map(|_| {
            let n = r.count()?;
            (0..n)
                .map(|_| {
                    let len = r.count()?;
                    r.take(len).map(<[u8]>::to_vec)
                })
                .collect::<Option<Vec<_>>>()
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| malformed(what))?;
    if r.remaining() != 0 {
        return Err(malformed(what));
    }
    Ok(per_rank)
}

fn malformed(what: &str) -> FormatError {
    FormatError::Malformed(format!("{what} section is inconsistent"))
}

/// Parses a whole section as a list of items, rejecting trailing bytes.
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

/// Parses a section holding one column of `ranks` values.
fn column<T: Clone>(
    bytes: &[u8],
    ranks: usize,
    what: &str,
    item: impl Fn(&mut Reader) -> Option<T>,
) -> Result<Vec<T>, FormatError> {
    let mut r = Reader::new(bytes);
    let values = read_column(&mut r, ranks, item).ok_or_else(|| malformed(what))?;
    if r.remaining() != 0 {
        return Err(malformed(what));
    }
    Ok(values)
}

/// Parses the record sections of `sections`; the first rank covered is `first_rank`.
pub fn decode_record(sections: &[Section], first_rank: u32) -> Result<TraceRecord, FormatError> {
    let find = |tag: [u8; 4]| -> Result<std::borrow::Cow<[u8]>, FormatError> {
        unpack(find_section(sections, tag)?, &String::from_utf8_lossy(&tag))
    };
    let signatures = list(&find(SIGNATURES)?, "SIGS", |r| {
        let n = r.count()?;
        r.take(n).map(<[u8]>::to_vec)
    })?;
    let grammars = match find(GRAMMARS) {
        Ok(set) => conifer_compress::decode_set(&set)
            .map_err(|e| FormatError::Malformed(format!("GRAM section: {e}")))?,
        Err(_) if find_section(sections, crate::forest_codec::TREES).is_ok() => {
            vec![conifer_compress::Grammar::new().freeze()]
        }
        Err(missing) => return Err(missing),
    };
    let map_bytes = find(RANK_MAP)?;
    let mut map = Reader::new(&map_bytes);
    let ranks = map.u64().ok_or_else(|| malformed("RMAP"))?;
    let ranks = usize::try_from(ranks)
        .ok()
        .filter(|&n| n <= MAX_RANKS)
        .ok_or_else(|| malformed("RMAP"))?;
    let threads = read_column(&mut map, ranks, read_u32s).ok_or_else(|| malformed("RMAP"))?;
    if map.remaining() != 0 {
        return Err(malformed("RMAP"));
    }
    let comms = column(&find(COMMS)?, ranks, "COMM", |r| {
        let n = r.count()?;
        (0..n)
            .map(|_| {
                let len = r.count()?;
                let comm = r.take(len)?.to_vec();
                let grid = read_grid(r)?;
                let (rank, leader) = read_rank_and_leader(r)?;
                Some((comm, rank, grid, leader))
            })
            .collect::<Option<RelativeComms>>()
    })?;
    let counts = column(&find(COUNTS)?, ranks, "CNTS", |r| {
        let n = r.count()?;
        (0..n)
            .map(|_| Some((u16::try_from(r.u64()?).ok()?, r.u64()?)))
            .collect::<Option<Vec<_>>>()
    })?;
    let hosts = column(&find(HOSTS)?, ranks, "HOST", |r| {
        let rest = r.take(r.remaining())?;
        Some(String::from_utf8_lossy(rest).into_owned())
    })?;
    let quantised = match find(QUANTISED_RANK_TIMES) {
        Ok(bytes) => {
            Some(crate::rank_timing::decode(&bytes, ranks).ok_or_else(|| malformed("RQTM"))?)
        }
        Err(_) => None,
    };
    let (mut timing, times) =
        crate::timing::decode_timing(&find(TIMING)?, ranks, quantised.is_none())
            .ok_or_else(|| malformed("TIME"))?;
    if let Ok(bytes) = find(HISTOGRAMS) {
        let histograms = crate::histogram::decode_histograms(&bytes, timing.len())
            .ok_or_else(|| malformed("THST"))?;
        for (family, histogram) in timing.iter_mut().zip(histograms) {
            family.histogram = histogram;
        }
    }
    let timelines = match find(TIMELINES) {
        Ok(bytes) => read_per_thread_bytes(&bytes, ranks, "TMLN")?,
        Err(_) => vec![Vec::new(); ranks],
    };
    let recorder_times = match find(RECORDER_TIMES) {
        Ok(bytes) => read_per_thread_bytes(&bytes, ranks, "RECT")?,
        Err(_) => vec![Vec::new(); ranks],
    };
    let rank_precision = quantised.as_ref().map(|(p, _)| *p);
    let (clocks, totals, times) = match quantised {
        Some((_, per_rank)) => {
            let times = per_rank
                .iter()
                .map(|(_, t)| RankTime {
                    mpi_ns: t.mpi_ns() as f64,
                    compute_ns: t.compute_ns as f64,
                })
                .collect();
            let (clocks, totals) = per_rank.into_iter().unzip();
            (clocks, totals, times)
        }
        None => {
            let clocks = match find(CLOCKS) {
                Ok(bytes) => column(&bytes, ranks, "CLCK", RankClock::decode)?,
                Err(_) => vec![RankClock::default(); ranks],
            };
            let totals = match find(TOTALS) {
                Ok(bytes) => column(&bytes, ranks, "RTOT", RankTotals::decode)?,
                Err(_) => vec![RankTotals::default(); ranks],
            };
            (clocks, totals, times)
        }
    };
    let (mut streams, stream_map) = match (find(STREAMS), find(STREAM_MAP)) {
        (Ok(streams), Ok(map)) => crate::streams::decode_streams(&streams, &map, ranks)
            .ok_or_else(|| malformed("STRM"))?,
        _ => (Vec::new(), vec![Vec::new(); ranks]),
    };
    if let Ok(values) = find(STREAM_VALUES) {
        crate::streams::decode_values(&values, &mut streams).ok_or_else(|| malformed("SVAL"))?;
    }
    // Traces before the section say nothing of their hosts' processors (0).
    let cores = match find(CORES) {
        Ok(bytes) => column(&bytes, ranks, "CORE", |r| r.u32())?,
        Err(_) => vec![0; ranks],
    };
    let (forest, trees) = crate::forest_codec::decode(sections, ranks)?;
    let merged = TraceRecord {
        first_rank,
        signatures,
        grammars,
        ranks: threads
            .into_iter()
            .zip(trees)
            .zip(comms)
            .zip(counts.into_iter().zip(hosts.into_iter().zip(cores)))
            .zip(timelines.into_iter().zip(times))
            .zip(stream_map)
            .zip(recorder_times.into_iter().zip(clocks).zip(totals))
            .enumerate()
            .map(
                |(
                    i,
                    (
                        (
                            (
                                (((threads, trees), comms), (counts, (host, cores))),
                                (timelines, time),
                            ),
                            streams,
                        ),
                        ((recorder_times, clock), totals),
                    ),
                )| {
                    let world = i64::from(first_rank) + i as i64;
                    // Exact totals, where the trace has them, replace the quantised ones.
                    let time = if totals.is_empty() {
                        time
                    } else {
                        RankTime {
                            mpi_ns: totals.mpi_ns() as f64,
                            compute_ns: totals.compute_ns as f64,
                        }
                    };
                    RankEntry {
                        threads,
                        trees,
                        comms: absolute_comms(world, comms),
                        counts,
                        host,
                        cores,
                        timelines,
                        time,
                        streams,
                        clock,
                        totals,
                        recorder_times,
                    }
                },
            )
            .collect(),
        timing,
        forest,
        streams,
        rank_precision,
    };
    check_references(&merged)?;
    crate::forest_codec::check(&merged)?;
    Ok(merged)
}

/// Rejects records whose grammars, rank map or timing refer to things that do not exist.
fn check_references(m: &TraceRecord) -> Result<(), FormatError> {
    let terminals = m.signatures.len() as u32;
    let grammar_count = m.grammars.len() as u32;
    let bad_terminal = m.grammars.iter().any(|g| {
        g.rules()
            .iter()
            .flatten()
            .any(|i| matches!(i.symbol, Symbol::Terminal(t) if t >= terminals))
    }) || m.timing.iter().any(|f| f.terminal >= terminals)
        || m.streams
            .iter()
            .flat_map(|s| &s.entries)
            .any(|(t, _)| *t >= terminals);
    let bad_grammar = m
        .ranks
        .iter()
        .flat_map(|r| &r.threads)
        .any(|&g| g >= grammar_count);
    if bad_terminal || bad_grammar {
        return Err(FormatError::Malformed(
            "a grammar refers to a signature or grammar that does not exist".into(),
        ));
    }
    Ok(())
}

impl TraceRecord {
    /// The sections of a partly merged record: the first rank covered, then the record.
    pub(crate) fn sections(&self) -> Vec<Section> {
        let mut first = Vec::new();
        put_u64(&mut first, self.first_rank.into());
        let mut sections = vec![Section {
            tag: FIRST_RANK,
            payload: first,
        }];
        sections.extend(encode_record(self, false));
        sections
    }

    /// Parses [`TraceRecord::sections`] (other sections among them are ignored).
    pub(crate) fn from_sections(sections: &[Section]) -> Result<TraceRecord, FormatError> {
        let first = Reader::new(find_section(sections, FIRST_RANK)?)
            .u32()
            .ok_or_else(|| malformed("FRST"))?;
        decode_record(sections, first)
    }

    /// The message form of a partly merged record.
    pub fn to_bytes(&self) -> Vec<u8> {
        write_sections(&self.sections())
    }

    /// Parses [`TraceRecord::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<TraceRecord, FormatError> {
        TraceRecord::from_sections(&read_sections(bytes)?)
    }
}
