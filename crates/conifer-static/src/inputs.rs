//! Link inputs: which are LLVM bitcode, and the bitcode members of static archives.

use std::collections::{HashMap, HashSet};
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

/// Symbols each bitcode object defines and leaves undefined, read with one `llvm-nm-19` run.
struct SymbolTable {
    defined: Vec<HashSet<String>>,
    undefined: Vec<Vec<String>>,
}

impl SymbolTable {
    fn read(objects: &[PathBuf]) -> Result<SymbolTable, String> {
        let mut table = SymbolTable {
            defined: vec![HashSet::new(); objects.len()],
            undefined: vec![Vec::new(); objects.len()],
        };
        if objects.is_empty() {
            return Ok(table);
        }
        let out = std::process::Command::new("llvm-nm-19")
            .args(["-P", "-A"])
            .args(objects)
            .output()
            .map_err(|e| {
                format!("cannot run llvm-nm-19 ({e}); run scripts/setup.sh to install LLVM 19")
            })?;
        let index: HashMap<String, usize> = objects
            .iter()
            .enumerate()
            .map(|(i, o)| (o.display().to_string(), i))
            .collect();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Some((file, rest)) = line.split_once(": ") else {
                continue;
            };
            let mut fields = rest.split_whitespace();
            let (Some(&i), Some(name), Some(kind)) =
                (index.get(file), fields.next(), fields.next())
            else {
                continue;
            };
            match kind {
                "U" => table.undefined[i].push(name.to_string()),
                // Undefined weak references pull no member in.
                "w" | "v" => {}
                _ => {
                    table.defined[i].insert(name.to_string());
                }
            }
        }
        Ok(table)
    }
}

/// The archive members a link of `roots` pulls in, as a linker would: every member that
/// defines a symbol undefined so far, repeated until nothing more is needed (so the order of
/// members does not matter). When `roots` is empty the program is rooted at the member that
/// defines `main`, which comes first in the result.
pub fn needed_members(roots: &[PathBuf], members: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let all: Vec<PathBuf> = roots.iter().chain(members).cloned().collect();
    let table = SymbolTable::read(&all)?;
    let mut taken = vec![false; all.len()];
    let mut pending: Vec<usize> = (0..roots.len()).collect();
    if roots.is_empty() {
        let main = (0..all.len()).find(|&i| table.defined[i].contains("main"));
        pending.extend(main);
    }
    // The first member defining each symbol, as a linker searching the archives would find.
    let mut definer: HashMap<&str, usize> = HashMap::new();
    for j in roots.len()..all.len() {
        for symbol in &table.defined[j] {
            definer.entry(symbol.as_str()).or_insert(j);
        }
    }
    let mut order = Vec::new();
    let mut defined: HashSet<&str> = HashSet::new();
    while let Some(i) = pending.pop() {
        if std::mem::replace(&mut taken[i], true) {
            continue;
        }
        if i >= roots.len() {
            order.push(all[i].clone());
        }
        defined.extend(table.defined[i].iter().map(String::as_str));
        for symbol in &table.undefined[i] {
            if defined.contains(symbol.as_str()) {
                continue;
            }
            if let Some(&j) = definer.get(symbol.as_str()).filter(|&&j| !taken[j]) {
                pending.push(j);
            }
        }
    }
    Ok(order)
}
