//! Link inputs: which are LLVM bitcode, and the bitcode members of static archives.

use std::path::{Path, PathBuf};

/// What a non-source link input is.
pub enum Input {
    /// An LLVM bitcode object.
    Bitcode,
    /// A static archive with this many bitcode and other members.
    Archive {
        /// Bitcode members.
        bitcode: usize,
        /// Other members.
        plain: usize,
    },
    /// Anything else (native object, shared library, linker script): passed through.
    Other,
}

/// Raw bitcode or the bitcode wrapper header.
fn is_bitcode(data: &[u8]) -> bool {
    data.starts_with(b"BC\xC0\xDE") || data.starts_with(&[0xDE, 0xC0, 0x17, 0x0B])
}

/// Classifies a link input by its content.
pub fn classify(path: &Path) -> Result<Input, String> {
    let data = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if is_bitcode(&data) {
        return Ok(Input::Bitcode);
    }
    if !data.starts_with(b"!<arch>\n") {
        return Ok(Input::Other);
    }
    let archive = object::read::archive::ArchiveFile::parse(&*data)
        .map_err(|e| format!("cannot read archive {}: {e}", path.display()))?;
    let (mut bitcode, mut plain) = (0, 0);
    for member in archive.members() {
        let member = member.map_err(|e| format!("corrupt archive {}: {e}", path.display()))?;
        match member.data(&*data) {
            Ok(d) if is_bitcode(d) => bitcode += 1,
            _ => plain += 1,
        }
    }
    Ok(Input::Archive { bitcode, plain })
}

/// Writes the bitcode members of `archive` into `dir`, returning their paths.
pub fn extract_bitcode(archive: &Path, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let data =
        std::fs::read(archive).map_err(|e| format!("cannot read {}: {e}", archive.display()))?;
    let file = object::read::archive::ArchiveFile::parse(&*data)
        .map_err(|e| format!("cannot read archive {}: {e}", archive.display()))?;
    let stem = archive
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("lib");
    let mut out = Vec::new();
    for (n, member) in file.members().enumerate() {
        let member = member.map_err(|e| format!("corrupt archive {}: {e}", archive.display()))?;
        let Ok(bytes) = member.data(&*data) else {
            continue;
        };
        if is_bitcode(bytes) {
            let path = dir.join(format!("{stem}.{n}.bc"));
            std::fs::write(&path, bytes)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            out.push(path);
        }
    }
    Ok(out)
}

/// `libNAME.a` in one of `dirs` when it holds bitcode.
pub fn find_bitcode_archive(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter()
        .map(|d| d.join(format!("lib{name}.a")))
        .find(|p| p.is_file())
        .filter(|p| matches!(classify(p), Ok(Input::Archive { bitcode, .. }) if bitcode > 0))
}
