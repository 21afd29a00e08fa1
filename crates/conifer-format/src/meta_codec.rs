//! The `META` section: the run's [`Metadata`] as varints and length-prefixed strings, behind a
//! mode byte (0 stored, 1 zstd) — compressed only when that is smaller, which takes a long
//! command line.

use crate::container::FormatError;
use crate::metadata::Metadata;
use crate::packing::unpack;
use crate::varint::{put_str, put_u64, Reader};

/// The `META` payload of `meta`.
pub fn encode(meta: &Metadata) -> Vec<u8> {
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
    let packed = zstd::bulk::compress(&plain, 19).ok();
    match packed.filter(|p| p.len() < plain.len()) {
        Some(packed) => [&[1u8][..], &packed].concat(),
        None => [&[0u8][..], &plain].concat(),
    }
}

/// Parses a `META` payload.
pub fn decode(payload: &[u8]) -> Result<Metadata, FormatError> {
    let plain = unpack(payload, "META")?;
    read(&mut Reader::new(&plain))
        .ok_or_else(|| FormatError::Malformed("META section is inconsistent".into()))
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
        assert_eq!(encode(&short)[0], 0, "a short run stays stored");
        assert_eq!(
            encode(&long)[0],
            1,
            "a long, repetitive command line is compressed"
        );
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
