//! Tree mode: when the program was built by `conifer cc|cxx|fc`, its binary carries a
//! structure tree (ELF section `.conifer_tree`) and each thread fills a trace tree from the
//! structure hooks and its MPI calls (CYPRESS's top-down compression); the calls the tree
//! cannot hold go to the thread's grammar, in their place. `CONIFER_TREE=0` turns it off
//! (grammar path only); `CONIFER_TREE_WINDOW=n` sets how many runs a new one is compared with.
//!
//! Each thread's builder sits behind its own lock, taken by that thread's hooks and calls and
//! by the record at the end; hooks never take the recorder's lock.

use conifer_compress::tree::{TreeBuilder, TreeRecord};
use conifer_trace::forest::Structure;
use std::cell::OnceCell;
use std::io::{Read, Seek, SeekFrom};
use std::sync::{Arc, LazyLock, Mutex, TryLockError};

/// Section the static pass embeds the tree in.
const SECTION: &[u8] = b".conifer_tree";
/// Runs a new run is compared with, by default.
const DEFAULT_WINDOW: usize = 64;

/// The program's structure tree, when tree mode is on and the binary has one.
static STRUCTURE: LazyLock<Option<Structure>> = LazyLock::new(|| {
    if std::env::var("CONIFER_TREE").as_deref() == Ok("0") {
        return None;
    }
    let json = embedded_tree("/proc/self/exe").ok().flatten()?;
    match Structure::from_json(&json) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("conifer: ignoring the program's structure tree ({e}); recording without it");
            None
        }
    }
});

static WINDOW: LazyLock<usize> = LazyLock::new(|| {
    std::env::var("CONIFER_TREE_WINDOW")
        .ok()
        .and_then(|w| w.parse().ok())
        .filter(|&w| w >= 1)
        .unwrap_or(DEFAULT_WINDOW)
});

thread_local! {
    /// This thread's builder (`None` without tree mode).
    static BUILDER: OnceCell<Option<Arc<Mutex<TreeBuilder>>>> = const { OnceCell::new() };
}

/// The structure tree recorded with the trace, if any.
pub fn structure() -> Option<&'static Structure> {
    STRUCTURE.as_ref()
}

/// A builder for a new thread, in tree mode.
fn new_builder() -> Option<Arc<Mutex<TreeBuilder>>> {
    let s = STRUCTURE.as_ref()?;
    let builder = TreeBuilder::new(Arc::clone(&s.shape), *WINDOW);
    Some(Arc::new(Mutex::new(builder)))
}

/// This thread's builder, created on first use.
pub fn builder() -> Option<Arc<Mutex<TreeBuilder>>> {
    BUILDER
        .try_with(|cell| cell.get_or_init(new_builder).clone())
        .ok()
        .flatten()
}

fn with_builder(f: impl FnOnce(&mut TreeBuilder)) {
    let _ = BUILDER.try_with(|cell| {
        if let Some(b) = cell.get_or_init(new_builder) {
            f(&mut b.lock().unwrap_or_else(|p| p.into_inner()));
        }
    });
}

/// Hook: a new activation (loop iteration, arm, recursion) of vertex `v`.
pub fn activate(v: u32) {
    with_builder(|b| {
        b.activate(v);
    });
}

/// Hook: vertex `v` (a loop, a recursive function) was left.
pub fn leave(v: u32) {
    with_builder(|b| b.leave(v));
}

/// The tree of a builder; `None` when its lock is held (only at a fatal moment, when the
/// signal interrupted this very builder's update).
pub fn record_of(builder: &Mutex<TreeBuilder>, fatal: bool) -> Option<TreeRecord> {
    if fatal {
        return match builder.try_lock() {
            Ok(b) => Some(b.record()),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner().record()),
            Err(TryLockError::WouldBlock) => None,
        };
    }
    Some(builder.lock().unwrap_or_else(|p| p.into_inner()).record())
}

/// The contents of ELF section [`SECTION`] of the file at `path`, up to its first NUL: read
/// from the section headers alone, so large binaries cost a few small reads.
fn embedded_tree(path: &str) -> std::io::Result<Option<Vec<u8>>> {
    let mut file = std::fs::File::open(path)?;
    let mut header = [0u8; 64];
    file.read_exact(&mut header)?;
    // ELF64, little-endian: the only kind `conifer cc` builds on this platform.
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
    let section = |i: usize| &table[i * size..(i + 1) * size];
    let read = |file: &mut std::fs::File, at: u64, len: u64| -> std::io::Result<Vec<u8>> {
        let mut data = vec![0u8; usize::try_from(len).unwrap_or(0).min(1 << 28)];
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut data)?;
        Ok(data)
    };
    let strings = section(names);
    let strings = read(&mut file, u64_at(strings, 0x18), u64_at(strings, 0x20))?;
    for i in 0..count {
        let s = section(i);
        let name_at = u32_at(s, 0) as usize;
        let name = strings.get(name_at..).unwrap_or_default();
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        if &name[..end] == SECTION {
            let mut data = read(&mut file, u64_at(s, 0x18), u64_at(s, 0x20))?;
            let nul = data.iter().position(|&b| b == 0).unwrap_or(data.len());
            data.truncate(nul);
            return Ok(Some(data));
        }
    }
    Ok(None)
}
