//! The `META` section: the run's [`Metadata`] as varints and length-prefixed strings, behind a
//! mode byte: 0 stored, 1 zstd, 2 zstd with [`DICTIONARY`] — whichever is smallest. The
//! dictionary holds what most runs' metadata say (the MPI libraries' version lines, Conifer's
//! options), so the ~130 bytes of a typical run's metadata take ~40.

use crate::container::FormatError;
use crate::metadata::Metadata;
use crate::packing::unpack;
use crate::varint::{put_str, put_u64, Reader};

/// The `META` payload of `meta`.
pub fn encode(meta: &Metadata) -> Vec<u8> {
    let plain = plain(meta);
    let mut best = [&[0u8][..], &plain].concat();
    let packed = zstd::bulk::compress(&plain, 19).ok();
    let with_dictionary = zstd::bulk::Compressor::with_dictionary(19, DICTIONARY)
        .and_then(|mut c| c.compress(&plain))
        .ok();
    for (mode, candidate) in [(1u8, packed), (WITH_DICTIONARY, with_dictionary)] {
        if let Some(candidate) = candidate.filter(|c| c.len() + 1 < best.len()) {
            best = [&[mode][..], &candidate].concat();
        }
    }
    best
}

/// `meta`'s fields, before compression.
fn plain(meta: &Metadata) -> Vec<u8> {
    let mut plain = Vec::new();
    put_str(&mut plain, &meta.conifer_version);
    put_str(&mut plain, &meta.mpi);
    put_str(&mut plain, &meta.mpi_library_version);
    put_strings(&mut plain, &meta.command_line);
    put_u64(&mut plain, meta.ranks.into());
    plain.extend_from_slice(&meta.start_unix_seconds.to_le_bytes());
    plain.push(meta.partial.into());
    put_u64(&mut plain, meta.missing_ranks.len() as u64);
    for &rank in &meta.missing_ranks {
        put_u64(&mut plain, rank.into());
    }
    put_strings(&mut plain, &meta.options);
    put_strings(&mut plain, &meta.partial_reasons);
    if !meta.modules.is_empty() {
        put_strings(&mut plain, &meta.modules);
    }
    plain
}

/// The mode byte of metadata compressed with [`DICTIONARY`].
const WITH_DICTIONARY: u8 = 2;

/// zstd's raw-content dictionary for `META`: strings most runs' metadata repeat. Append only:
/// traces written with it must stay readable.
pub const DICTIONARY: &[u8] = b"exclude=start-offcallsitesrelative-tagsrawextrapolated=\
timing=histogramtiming=lossy:0.01timing=losslesstiming=aggregate./python3/usr/bin/\
Intel(R) MPI Library 2021 for Linux* OS\
MPICH Version:\t4.1.2MPICH Version:\t4.0.2\
Open MPI v5.0.3, package: Open MPI, ident: 5.0.3, repo rev: v5.0.3, Apr 08, 2024\
\x05mpich\x050.1.0\x07openmpi\
\x56Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022";

/// Parses a `META` payload.
pub fn decode(payload: &[u8]) -> Result<Metadata, FormatError> {
    let plain = match payload.split_first() {
        Some((&WITH_DICTIONARY, packed)) => {
            std::borrow::Cow::Owned(unpack_with_dictionary(packed)?)
        }
        _ => unpack(payload, "META")?,
    };
    read(&mut Reader::new(&plain)).ok_or_else(inconsistent)
}

fn inconsistent() -> FormatError {
    FormatError::Malformed("META section is inconsistent".into())
}

/// The contents of a frame compressed with [`DICTIONARY`] (its stated size bounded as
/// [`unpack`] bounds it).
fn unpack_with_dictionary(packed: &[u8]) -> Result<Vec<u8>, FormatError> {
    let size = zstd::zstd_safe::get_frame_content_size(packed)
        .ok()
        .flatten()
        .filter(|&n| n <= (packed.len() as u64).saturating_mul(crate::packing::MAX_INFLATION))
        .ok_or_else(inconsistent)?;
    zstd::bulk::Decompressor::with_dictionary(DICTIONARY)
        .and_then(|mut d| d.decompress(packed, size as usize))
        .map_err(|_| inconsistent())
}

fn read(r: &mut Reader) -> Option<Metadata> {
    let meta = Metadata {
        conifer_version: r.str()?.to_string(),
        mpi: r.str()?.to_string(),
        mpi_library_version: r.str()?.to_string(),
        command_line: strings(r)?,
        ranks: r.u32()?,
        start_unix_seconds: f64::from_le_bytes(r.take(8)?.try_into().ok()?),
        partial: match r.byte()? {
            0 => false,
            1 => true,
            _ => return None,
        },
        missing_ranks: (0..r.count()?).map(|_| r.u32()).collect::<Option<_>>()?,
        options: strings(r)?,
        partial_reasons: strings(r)?,
        // Only traces recorded with `--callsites` list modules.
        modules: if r.remaining() > 0 {
            strings(r)?
        } else {
            Vec::new()
        },
    };
    (r.remaining() == 0).then_some(meta)
}

fn put_strings(out: &mut Vec<u8>, strings: &[String]) {
    put_u64(out, strings.len() as u64);
    strings.iter().for_each(|s| put_str(out, s));
}

fn strings(r: &mut Reader) -> Option<Vec<String>> {
    (0..r.count()?)
        .map(|_| r.str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metadata of a 4-rank run of `tests/apps/ring` under Open MPI 4.1.4.
    fn ring() -> Metadata {
        Metadata {
            conifer_version: "0.1.0".into(),
            mpi: "openmpi".into(),
            mpi_library_version: "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, \
                                  repo rev: v4.1.4, May 26, 2022"
                .into(),
            command_line: vec!["/tmp/catapps/ring".into(), "20".into()],
            ranks: 4,
            start_unix_seconds: 1795430128.277188,
            partial: false,
            missing_ranks: Vec::new(),
            options: Vec::new(),
            partial_reasons: Vec::new(),
            modules: Vec::new(),
        }
    }

    #[test]
    fn metadata_round_trips_stored_and_compressed() {
        let mut partial = ring();
        partial.partial = true;
        partial.missing_ranks = vec![2, 300];
        partial.options = vec!["timing=lossless".into(), "raw".into()];
        partial.partial_reasons = vec!["rank 0: SIGTERM".into(), "rank 1: SIGSEGV".into()];
        let mut with_callers = ring();
        with_callers.options = vec!["callsites".into()];
        with_callers.modules = vec!["/tmp/catapps/ring".into(), "/usr/lib/libc.so.6".into()];
        let mut short = ring();
        short.mpi_library_version = "MPICH Version: 4.0.2".into();
        let mut long = ring();
        long.command_line = (0..20)
            .map(|i| format!("--input=/home/user/project/data/part{i}.dat"))
            .collect();
        for meta in [ring(), partial, with_callers, short.clone(), long.clone()] {
            assert_eq!(decode(&encode(&meta)).unwrap(), meta);
        }
        assert_ne!(
            encode(&long)[0],
            0,
            "a long, repetitive command line is compressed"
        );
        // What the dictionary holds (the library's version line, the MPI's name) costs little:
        // stored, the ring's metadata take 136 bytes (6 + 8 + 87 for the version, MPI and
        // library strings, 22 for the command line, 1 + 8 + 1 + 1 + 1 + 1 for the rest).
        assert_eq!(plain(&ring()).len(), 136);
        let ring = encode(&ring());
        assert_eq!(ring[0], WITH_DICTIONARY);
        assert!(ring.len() < 64, "{} bytes: {ring:?}", ring.len());
        // The mode the writer picks is the smallest, and MPICH's line is in the dictionary too.
        assert_eq!(encode(&short)[0], WITH_DICTIONARY);
    }

    /// `META` of the same run as JSON, as format version 3 stored it.
    const RING_JSON: &str = r#"{"conifer_version":"0.1.0","mpi":"openmpi","mpi_library_version":"Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022","command_line":["/tmp/catapps/ring","20"],"ranks":4,"start_unix_seconds":1795430128.277188,"partial":false,"missing_ranks":[],"options":[],"partial_reasons":[]}"#;

    #[test]
    fn binary_is_smaller_than_json_even_compressed() {
        let zstd_json = zstd::bulk::compress(RING_JSON.as_bytes(), 19).unwrap();
        let binary = encode(&ring());
        assert!(
            binary.len() < zstd_json.len(),
            "{binary:?} vs {zstd_json:?}"
        );
    }

    #[test]
    fn damaged_metadata_is_rejected() {
        let good = encode(&ring());
        for cut in 0..good.len() {
            assert!(decode(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        assert!(decode(&[2]).is_err());
    }
}
