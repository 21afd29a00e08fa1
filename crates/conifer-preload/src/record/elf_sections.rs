//! The sections of an ELF file, read from its section headers alone (a few small reads, however
//! large the binary): what the structure tree ([`super::trees`]) and the call-site default
//! ([`super::callers`]) look for in the program.

use std::io::{Read, Seek, SeekFrom};

/// One section: its name, and where its contents lie in the file.
pub struct Section {
    /// Its name (`.debug_line`).
    pub name: Vec<u8>,
    /// Offset of its contents in the file.
    pub offset: u64,
    /// Size of its contents.
    pub size: u64,
}

/// The sections of the ELF64 little-endian file `file` (the only kind this platform runs);
/// `None` for any other file.
pub fn sections(file: &mut std::fs::File) -> std::io::Result<Option<Vec<Section>>> {
    let mut header = [0u8; 64];
    file.read_exact(&mut header)?;
    if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return Ok(None);
    }
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4")) as u64;
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8"));
    let (offset, size, count, names) = (
        u64_at(&header, 0x28),
        u16_at(&header, 0x3a),
        u16_at(&header, 0x3c),
        u16_at(&header, 0x3e),
    );
    if size < 64 || names >= count {
        return Ok(None);
    }
    let mut table = vec![0u8; size * count];
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(&mut table)?;
    let header_of = |i: usize| &table[i * size..(i + 1) * size];
    let strings = header_of(names);
    let strings = read(file, u64_at(strings, 0x18), u64_at(strings, 0x20))?;
    Ok(Some(
        (0..count)
            .map(|i| {
                let s = header_of(i);
                let name = strings.get(u32_at(s, 0) as usize..).unwrap_or_default();
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                Section {
                    name: name[..end].to_vec(),
                    offset: u64_at(s, 0x18),
                    size: u64_at(s, 0x20),
                }
            })
            .collect(),
    ))
}

/// `len` bytes of `file` from `at` (at most 256 MiB).
pub fn read(file: &mut std::fs::File, at: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut data = vec![0u8; usize::try_from(len).unwrap_or(0).min(1 << 28)];
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(&mut data)?;
    Ok(data)
}

/// The section names of the ELF file at `path` (none for a file that is not one).
pub fn section_names(path: &str) -> Vec<Vec<u8>> {
    std::fs::File::open(path)
        .and_then(|mut f| sections(&mut f))
        .ok()
        .flatten()
        .map_or_else(Vec::new, |s| s.into_iter().map(|s| s.name).collect())
}
