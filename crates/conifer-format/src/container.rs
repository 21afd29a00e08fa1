//! The section container of a `.cft` file: magic, version, then `(tag, length, payload, crc32 of
//! tag+length+payload)`
//! records, the last one tagged `END`.

use std::fmt;

/// First eight bytes of every trace.
pub const MAGIC: &[u8; 8] = b"CONIFER\0";
/// The format version this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 5;
const END_TAG: [u8; 4] = *b"END\0";
const TAG: usize = 4;
const SECTION_TRAILER: usize = 4;

/// One section: a four-byte tag naming its content and the payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Content tag, e.g. `META`.
    pub tag: [u8; 4],
    /// The payload bytes.
    pub payload: Vec<u8>,
}

/// Why a file is not a readable trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// The file does not start with the Conifer magic number.
    NotATrace,
    /// The file was written by a newer Conifer.
    NewerVersion(u32),
    /// The file ends in the middle of the header or a section.
    Truncated,
    /// A section's checksum does not match its content.
    Corrupted(String),
    /// A section's content cannot be parsed.
    Malformed(String),
    /// The function catalog refers to a different MPI function table than this build's
    /// (the hash of the table it was recorded with).
    DifferentSpec(u64),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::NotATrace => write!(f, "not a Conifer trace (no CONIFER magic number)"),
            FormatError::NewerVersion(v) => write!(
                f,
                "trace format version {v} is newer than this conifer reads ({FORMAT_VERSION}); use a newer conifer"
            ),
            FormatError::Truncated => {
                write!(f, "trace is truncated (the run may have been killed while writing it)")
            }
            FormatError::Corrupted(tag) => write!(f, "trace is corrupted: checksum mismatch in section {tag}"),
            FormatError::Malformed(why) => write!(f, "trace is malformed: {why}"),
            FormatError::DifferentSpec(hash) => write!(
                f,
                "trace was recorded with a different MPI function table (spec {hash:016x}, this conifer has {:016x}); read it with the conifer that wrote it",
                conifer_spec::TABLE_HASH
            ),
        }
    }
}

impl std::error::Error for FormatError {}

fn tag_name(tag: &[u8; 4]) -> String {
    String::from_utf8_lossy(tag)
        .trim_end_matches('\0')
        .to_string()
}

/// Serialises sections into a complete file image.
pub fn write_sections(sections: &[Section]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    let end = Section {
        tag: END_TAG,
        payload: Vec::new(),
    };
    for section in sections.iter().chain(std::iter::once(&end)) {
        let start = out.len();
        out.extend_from_slice(&section.tag);
        crate::varint::put_u64(&mut out, section.payload.len() as u64);
        out.extend_from_slice(&section.payload);
        let crc = crc32fast::hash(&out[start..]);
        out.extend_from_slice(&crc.to_le_bytes());
    }
    out
}

fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], FormatError> {
    if bytes.len() < n {
        return Err(FormatError::Truncated);
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

/// Parses a file image into its sections (without the `END` marker), checking every checksum.
pub fn read_sections(file: &[u8]) -> Result<Vec<Section>, FormatError> {
    let mut rest = file;
    if rest.len() < MAGIC.len() || &rest[..MAGIC.len()] != MAGIC {
        return Err(FormatError::NotATrace);
    }
    take(&mut rest, MAGIC.len())?;
    let version = u32::from_le_bytes(take(&mut rest, 4)?.try_into().expect("4 bytes"));
    if version > FORMAT_VERSION {
        return Err(FormatError::NewerVersion(version));
    }
    if version < FORMAT_VERSION {
        return Err(FormatError::Malformed(format!(
            "format version {version} is older than this conifer reads ({FORMAT_VERSION}); record the run again"
        )));
    }
    let mut sections = Vec::new();
    loop {
        let section_start = rest;
        let tag: [u8; 4] = take(&mut rest, TAG)?.try_into().expect("4 bytes");
        let mut length = crate::varint::Reader::new(rest);
        let len = length.u64().ok_or(FormatError::Truncated)?;
        let header = TAG + (rest.len() - length.remaining());
        take(&mut rest, header - TAG)?;
        // Checked against what is left before allocating anything: a corrupt length cannot
        // make the reader allocate more than the file holds.
        if len > (rest.len().saturating_sub(SECTION_TRAILER)) as u64 {
            return Err(FormatError::Truncated);
        }
        let payload = take(&mut rest, len as usize)?;
        let crc = u32::from_le_bytes(
            take(&mut rest, SECTION_TRAILER)?
                .try_into()
                .expect("4 bytes"),
        );
        let covered = &section_start[..header + payload.len()];
        if crc32fast::hash(covered) != crc {
            return Err(FormatError::Corrupted(tag_name(&tag)));
        }
        if tag == END_TAG {
            if !rest.is_empty() {
                return Err(FormatError::Malformed("bytes after the END section".into()));
            }
            return Ok(sections);
        }
        sections.push(Section {
            tag,
            payload: payload.to_vec(),
        });
    }
}

/// Size in bytes of each section of a valid file image (tag, payload bytes), `END` excluded.
pub fn section_sizes(file: &[u8]) -> Result<Vec<(String, usize)>, FormatError> {
    Ok(read_sections(file)?
        .iter()
        .map(|s| (tag_name(&s.tag), s.payload.len()))
        .collect())
}

/// The payload of the section tagged `tag`.
pub fn find_section(sections: &[Section], tag: [u8; 4]) -> Result<&[u8], FormatError> {
    sections
        .iter()
        .find(|s| s.tag == tag)
        .map(|s| s.payload.as_slice())
        .ok_or_else(|| {
            FormatError::Malformed(format!("no {} section", String::from_utf8_lossy(&tag)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        write_sections(&[
            Section {
                tag: *b"META",
                payload: b"{\"a\":1}".to_vec(),
            },
            Section {
                tag: *b"CNTS",
                payload: vec![7; 100],
            },
        ])
    }

    #[test]
    fn sections_round_trip() {
        let sections = read_sections(&sample()).unwrap();
        assert_eq!(sections.len(), 2);
        assert_eq!(&sections[0].tag, b"META");
        assert_eq!(sections[1].payload, vec![7; 100]);
    }

    #[test]
    fn every_truncation_is_detected() {
        let file = sample();
        for cut in 0..file.len() {
            let err = read_sections(&file[..cut]).unwrap_err();
            assert!(
                matches!(err, FormatError::Truncated | FormatError::NotATrace),
                "cut {cut}: {err}"
            );
        }
    }

    #[test]
    fn every_single_bit_flip_is_rejected_or_harmless() {
        let file = sample();
        for byte in 0..file.len() {
            for bit in 0..8 {
                let mut bad = file.clone();
                bad[byte] ^= 1 << bit;
                // Past the magic number every flip must be detected (the checksum covers each
                // section's tag, length and payload), and none may panic.
                let result = read_sections(&bad);
                if byte >= MAGIC.len() {
                    assert!(
                        result.is_err(),
                        "flip at byte {byte} bit {bit} went unnoticed"
                    );
                }
            }
        }
    }

    #[test]
    fn foreign_and_newer_files_are_named_as_such() {
        assert_eq!(
            read_sections(b"\x7fELF\x02\x01\x01\0\0\0\0\0"),
            Err(FormatError::NotATrace)
        );
        let mut newer = sample();
        newer[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        assert_eq!(
            read_sections(&newer),
            Err(FormatError::NewerVersion(FORMAT_VERSION + 1))
        );
    }
}
