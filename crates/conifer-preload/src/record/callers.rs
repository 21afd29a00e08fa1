//! `--callsites` (`CONIFER_CALLSITES=1`): each call's return address into the program, kept
//! as the module that holds it and the offset in that module's file (see
//! [`conifer_format::caller`]). The executable ranges of the loaded modules are read once with
//! `dl_iterate_phdr` and again only when an address falls outside all of them (a library
//! loaded later).

use conifer_format::caller::{module_key, Caller};
use std::ffi::{c_int, c_void, CStr};

/// True when the run records call sites: `CONIFER_CALLSITES=1` (or any value but `0`) asks,
/// `CONIFER_CALLSITES=0` declines; by default, when the program carries line information
/// (built with `-g`: a `.debug_line` section) and no structure tree (`conifer cc`, whose
/// tree names its call sites). Decided once per process.
pub fn requested() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| match std::env::var("CONIFER_CALLSITES") {
        Ok(v) => !v.is_empty() && v != "0",
        Err(_) => by_default(),
    })
}

/// True when the program has line information to name call sites by and no structure tree
/// (the section `conifer cc` embeds it in).
fn by_default() -> bool {
    let names = super::elf_sections::section_names("/proc/self/exe");
    let has = |name: &[u8]| names.iter().any(|n| n == name);
    has(b".debug_line") && !has(b".conifer_tree")
}

/// An executable range of one loaded module.
#[derive(Clone, Copy)]
struct Range {
    start: usize,
    end: usize,
    /// The module's load bias: address in memory minus address in the file.
    bias: usize,
    key: u32,
}

/// The executable ranges of the loaded modules, sorted by start.
#[derive(Default)]
pub struct Modules {
    ranges: Vec<Range>,
    /// Index of the range the last lookup hit: the calls of a loop come from one module.
    last: usize,
}

impl Modules {
    /// The caller at return address `address`; `None` outside every loaded module.
    #[inline]
    pub fn locate(&mut self, address: usize) -> Option<Caller> {
        if let Some(c) = self.hit(self.last, address) {
            return Some(c);
        }
        let found = self.search(address).or_else(|| {
            self.ranges = loaded_ranges();
            self.search(address)
        })?;
        self.last = found;
        self.hit(found, address)
    }

    fn hit(&self, i: usize, address: usize) -> Option<Caller> {
        let r = self.ranges.get(i)?;
        (r.start <= address && address < r.end).then(|| Caller {
            module: r.key,
            offset: (address - r.bias) as u64,
        })
    }

    fn search(&self, address: usize) -> Option<usize> {
        let i = self.ranges.partition_point(|r| r.start <= address);
        let i = i.checked_sub(1)?;
        (address < self.ranges[i].end).then_some(i)
    }
}

/// The path of a loaded module as `dl_iterate_phdr` names it (the executable has no name
/// there: its path comes from `/proc/self/exe`).
fn module_name(name: &CStr) -> String {
    if name.is_empty() {
        std::env::current_exe()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        name.to_string_lossy().into_owned()
    }
}

/// A loaded module: its path, load bias and executable ranges (start, end) in memory.
struct Loaded {
    path: String,
    bias: usize,
    ranges: Vec<(usize, usize)>,
}

/// Every loaded module.
fn loaded() -> Vec<Loaded> {
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, out: *mut c_void) -> c_int {
        // SAFETY: `dl_iterate_phdr` passes a valid `info` and our `out`.
        let (info, out) = unsafe { (&*info, &mut *out.cast::<Vec<Loaded>>()) };
        let name = if info.dlpi_name.is_null() {
            c""
        } else {
            // SAFETY: a NUL-terminated string owned by the dynamic loader.
            unsafe { CStr::from_ptr(info.dlpi_name) }
        };
        let bias = info.dlpi_addr as usize;
        // SAFETY: `dlpi_phdr` points at `dlpi_phnum` program headers.
        let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
        let ranges = headers
            .iter()
            .filter(|h| h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0)
            .map(|h| {
                let start = bias + h.p_vaddr as usize;
                (start, start + h.p_memsz as usize)
            })
            .collect();
        out.push(Loaded {
            path: module_name(name),
            bias,
            ranges,
        });
        0
    }
    let mut out = Vec::new();
    // SAFETY: `each` only reads what it is given and pushes to `out`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut out as *mut Vec<_>).cast()) };
    out
}

fn loaded_ranges() -> Vec<Range> {
    let mut ranges: Vec<Range> = loaded()
        .into_iter()
        .flat_map(|m| {
            let key = module_key(&m.path);
            m.ranges.into_iter().map(move |(start, end)| Range {
                start,
                end,
                bias: m.bias,
                key,
            })
        })
        .collect();
    ranges.sort_by_key(|r| r.start);
    ranges
}

/// The paths of the loaded modules, for the trace's metadata.
pub fn module_paths() -> Vec<String> {
    let mut paths: Vec<String> = loaded().into_iter().map(|m| m.path).collect();
    paths.sort();
    paths.dedup();
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_of_this_test_is_located_in_the_test_executable() {
        let mut modules = Modules::default();
        let address = a_function_of_this_test_is_located_in_the_test_executable as fn() as usize;
        let caller = modules.locate(address).expect("located");
        let exe = std::env::current_exe().unwrap();
        assert_eq!(caller.module, module_key(&exe.to_string_lossy()));
        assert_eq!(
            modules.locate(address),
            Some(caller),
            "second lookup hits the cache"
        );
        assert_eq!(modules.locate(0x10), None, "no module at page zero");
    }
}
