//! Call-site names every reader shares (`profile`, `report`, `waits`, `diff`, Python): a
//! structure tree site by its `file:line` and vertex, a recorded caller by its source position
//! (from the binary's debug information, [`crate::callers`]), and a trace that records no
//! places by signature groups (its timing families), each named by a hash of its signature with sizes, offsets
//! and peers blanked: the same name in every trace of the program, so `diff` and `profile`
//! name one alike and two runs' profiles can be matched by it. Text tables show C++ names
//! shortened ([`short_name`]); JSON keeps them whole.

use crate::{Analysis, Site};
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

/// [`site_label`] with C++ names shortened for text tables ([`short_name`]).
pub fn short_site_label(
    trace: &Trace,
    site: &Site,
    function: &str,
    source: Option<&str>,
) -> String {
    short_name(&site_label(trace, site, function, source))
}

/// `text` with C++ names shortened: parameter lists and template arguments elided, and each
/// qualified name cut to its last two parts (`LAMMPS_NS::CommBrick::borders(int)` reads
/// `CommBrick::borders`); a parenthesis after a space (`file:line (function)`) is kept.
pub fn short_name(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let after_name = out
            .chars()
            .last()
            .is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '>' || p == ']');
        match c {
            '(' | '<' if after_name && !out.ends_with("operator") => {
                i = closing(&chars, i) + 1;
                // `f(int) const` or `f<T>()`: drop what follows a list up to the next part.
                while chars.get(i) == Some(&' ') && text_at(&chars, i + 1, "const") {
                    i += 6;
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    cut_qualifiers(&out)
}

/// True when `word` starts at `chars[i]`.
fn text_at(chars: &[char], i: usize, word: &str) -> bool {
    word.chars()
        .enumerate()
        .all(|(k, w)| chars.get(i + k) == Some(&w))
}

/// The index of the bracket closing the one at `open` (the last index when unbalanced).
fn closing(chars: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, &c) in chars.iter().enumerate().skip(open) {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    chars.len() - 1
}

/// Each `a::b::c` of `text` cut to `b::c`.
fn cut_qualifiers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let parts: Vec<&str> = word.split("::").collect();
        let keep = parts.len().saturating_sub(2);
        out.push_str(&parts[keep..].join("::"));
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' || c == '~' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
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

/// True when the sites of `analysis` are places in the program (structure-tree vertices or
/// recorded return addresses), false when the trace recorded no places and its calls are
/// grouped by timing family instead.
pub fn sites_are_places(analysis: &Analysis) -> bool {
    analysis
        .sites
        .keys()
        .all(|s| matches!(s, Site::Tree(_) | Site::Address { .. }))
}

/// What the rows of a site table are called: `call sites`, or `signature groups` for a trace
/// that recorded no places (its calls grouped by timing family, or by signature where a call
/// has none: not the stored timing families, which `stats` and `report` count).
pub fn site_noun(analysis: &Analysis) -> &'static str {
    if sites_are_places(analysis) {
        "call sites"
    } else {
        "signature groups"
    }
}

/// What the sites of `analysis` are, in a sentence, with the way to source positions when
/// the trace recorded none.
pub fn what_sites_are(trace: &Trace, analysis: &Analysis) -> &'static str {
    if trace.record.forest.is_some() {
        "call sites are the structure tree's file:line (program built with conifer cc)"
    } else if !analysis.sites.is_empty() && sites_are_places(analysis) {
        "call sites are the return addresses into the program, summed over the calls' \
         arguments and named by file:line from the binary's debug information where it has \
         any (C++ names shortened here; whole in --json)"
    } else {
        "this trace recorded no call sites, so calls are grouped by signature: by timing \
         family (one per function and argument shape) where they have one, named by a hash of their signature, the same in every \
         run and in `conifer diff`; call sites are recorded by default for programs built \
         with -g, or with `conifer run --callsites` (named by the symbol table without -g)"
    }
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn cpp_names_lose_namespaces_and_parameter_lists() {
        assert_eq!(
            short_name("LAMMPS_NS::CommBrick::borders() (liblammps.so.0) [0x2b353d]"),
            "CommBrick::borders (liblammps.so.0) [0x2b353d]"
        );
        assert_eq!(
            short_name(
                "lulesh-comm.cc:843 (CommSend(Domain&, int, int, double& (Domain::**)(int), \
                 bool)) [0x1234]"
            ),
            "lulesh-comm.cc:843 (CommSend) [0x1234]"
        );
        assert_eq!(
            short_name("a.cc:9 (std::vector<int, std::allocator<int> >::push_back(int const&))"),
            "a.cc:9 (vector::push_back)"
        );
        assert_eq!(
            short_name("ring.c:12 (main) [0x11cd]"),
            "ring.c:12 (main) [0x11cd]"
        );
        assert_eq!(
            short_name("MPI_Send family c78a20e4"),
            "MPI_Send family c78a20e4"
        );
        assert_eq!(short_name("f() const (lib.so)"), "f (lib.so)");
    }
}
