//! The section container of a `.cft` file: magic, version, then `(tag code, length, payload)`
//! records, the last one `END`, followed by one crc32 of everything before it. A tag is one
//! byte for the sections this format knows ([`TAGS`]), five for others, so a small trace
//! spends two bytes per section on framing, not nine.

use std::fmt;

/// First eight bytes of every trace.
pub const MAGIC: &[u8; 8] = b"CONIFER\0";
/// The format version this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 8;
/// The oldest format version this build reads (version 8 added `RQTM` and per-rank value
/// columns).
const OLDEST_VERSION: u32 = 8;
const END_TAG: [u8; 4] = *b"END\0";
const CHECKSUM: usize = 4;
/// The tag code that says four ASCII tag bytes follow (a section this table does not name).
const SPELLED_OUT: u8 = 0;

/// The sections' tags by one-byte code (the code is the index + 1). Append only: a code once
/// given keeps its meaning.
pub const TAGS: [[u8; 4]; 23] = [
    *b"END\0", *b"META", *b"FUNC", *b"SIGS", *b"GRAM", *b"RMAP", *b"COMM", *b"CNTS", *b"HOST",
    *b"TIME", *b"THST", *b"TMLN", *b"RECT", *b"CLCK", *b"RTOT", *b"CORE", *b"STRM", *b"SMAP",
    *b"SVAL", *b"TREE", *b"FRST", *b"WHY\0", *b"RQTM",
];

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
    /// The file's checksum does not match its content.
    Corrupted,
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
            FormatError::Corrupted => {
                write!(f, "trace is corrupted: checksum mismatch (the file changed after it was written)")
            }
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

/// Appends `tag`'s code: one byte for a tag of [`TAGS`], else [`SPELLED_OUT`] and its bytes.
fn put_tag(out: &mut Vec<u8>, tag: &[u8; 4]) {
    match TAGS.iter().position(|t| t == tag) {
        Some(i) => out.push(i as u8 + 1),
        None => {
            out.push(SPELLED_OUT);
            out.extend_from_slice(tag);
        }
    }
}

/// Serialises sections into a complete file image.
pub fn write_sections(sections: &[Section]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    for section in sections {
        put_tag(&mut out, &section.tag);
        crate::varint::put_u64(&mut out, section.payload.len() as u64);
        out.extend_from_slice(&section.payload);
    }
    put_tag(&mut out, &END_TAG);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
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

/// Reads a tag code ([`put_tag`]); a code past this reader's table names a section it does
/// not know (`None`), which is skipped.
fn take_tag(rest: &mut &[u8]) -> Result<Option<[u8; 4]>, FormatError> {
    let code = take(rest, 1)?[0];
    if code == SPELLED_OUT {
        return Ok(Some(take(rest, 4)?.try_into().expect("4 bytes")));
    }
    Ok(TAGS.get(usize::from(code) - 1).copied())
}

/// Parses a file image into its sections (without the `END` marker), checking the file's
/// checksum. A file that ends before its `END` is truncated; one whose bytes are all there but
/// changed is corrupted.
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
    if version < OLDEST_VERSION {
        return Err(FormatError::Malformed(format!(
            "format version {version} is older than this conifer reads ({OLDEST_VERSION}); record the run again"
        )));
    }
    let mut sections = Vec::new();
    loop {
        let tag = take_tag(&mut rest)?;
        if tag == Some(END_TAG) {
            let checked = &file[..file.len() - rest.len()];
            let crc = u32::from_le_bytes(take(&mut rest, CHECKSUM)?.try_into().expect("4 bytes"));
            if crc32fast::hash(checked) != crc {
                return Err(FormatError::Corrupted);
            }
            if !rest.is_empty() {
                return Err(FormatError::Malformed("bytes after the END section".into()));
            }
            return Ok(sections);
        }
        let mut length = crate::varint::Reader::new(rest);
        let len = length.u64().ok_or(FormatError::Truncated)?;
        let header = rest.len() - length.remaining();
        take(&mut rest, header)?;
        // Checked against what is left before allocating anything: a corrupt length cannot
        // make the reader allocate more than the file holds.
        if len > (rest.len().saturating_sub(CHECKSUM + 1)) as u64 {
            return Err(FormatError::Truncated);
        }
        let payload = take(&mut rest, len as usize)?;
        if let Some(tag) = tag {
            sections.push(Section {
                tag,
                payload: payload.to_vec(),
            });
        }
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
                // Past the magic number every flip must be detected (the checksum covers the
                // whole file), and none may panic.
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
