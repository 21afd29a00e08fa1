//! Call-site names every command shares (`profile`, `report`, `waits`, `diff`): a structure
//! tree site by its `file:line` and vertex, a recorded caller (`--callsites`) by its source
//! position, and otherwise a timing family by a hash of its signature with sizes, offsets and
//! peers blanked: the same name in every trace of the program, so `diff` and `profile` name a
//! site alike and two runs' profiles can be matched by it.

use conifer_analyze::{Analysis, Site};
use conifer_trace::timing::timing_family;
use conifer_trace::Trace;

/// A call site's name: `file:line [vV]` in tree mode, `file:line (function) [0xOFFSET]` for a
/// recorded caller, else `FUNCTION family HASH` (or `FUNCTION signature HASH`).
pub fn site_label(trace: &Trace, site: &Site, function: &str, source: Option<&str>) -> String {
    match site {
        Site::Tree(id) => format!("{} [v{id}]", source.unwrap_or("?")),
        Site::Address { offset, .. } => format!("{} [{offset:#x}]", source.unwrap_or("?")),
        Site::Family(f) => format!("{function} family {}", family_hash(trace, *f)),
        Site::Signature(t) => format!("{function} signature {}", signature_hash(trace, *t)),
    }
}

/// The hash naming timing family `f`: of its signature with the values a family leaves out
/// blanked, so it is the same in every run of the program.
pub fn family_hash(trace: &Trace, f: u32) -> String {
    let bytes = trace
        .record
        .timing
        .get(f as usize)
        .and_then(|f| trace.record.signatures.get(f.terminal as usize))
        .map(|s| timing_family(s))
        .unwrap_or_default();
    fnv(&bytes)
}

/// The hash naming terminal `t`'s signature.
pub fn signature_hash(trace: &Trace, t: u32) -> String {
    fnv(trace
        .record
        .signatures
        .get(t as usize)
        .map_or(&[][..], Vec::as_slice))
}

/// A short stable hash of bytes (FNV-1a, 32 bits of it, hex).
fn fnv(bytes: &[u8]) -> String {
    format!("{:08x}", conifer_spec::fnv::fnv1a(bytes) >> 32)
}

/// What the sites of `analysis` are, in a sentence, with the way to source positions when
/// they are timing families.
pub fn what_sites_are(trace: &Trace, analysis: &Analysis) -> &'static str {
    if trace.record.forest.is_some() {
        "sites are the structure tree's file:line (program built with conifer cc)"
    } else if analysis
        .sites
        .keys()
        .any(|s| matches!(s, Site::Address { .. }))
    {
        "sites are the recorded callers (--callsites), named by file:line from the binary's \
         debug information where it has any"
    } else {
        "sites are timing families (about one per call site), named by a hash of their \
         signature, the same in every run and in `conifer diff`; `conifer run --callsites` \
         records file:line"
    }
}
