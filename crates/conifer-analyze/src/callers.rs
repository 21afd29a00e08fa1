//! Names for the callers recorded with `--callsites`: each (module, offset) looked up in the
//! module's debug information (DWARF, through the `addr2line` crate) as `file:line
//! (function)`, the innermost inlined frame first, as mpiP names call sites. A module that is
//! gone or has no line information is named by its symbol table, else by its file name and
//! the offset.

use crate::{Analysis, Site};
use conifer_trace::caller::{module_key, Caller};
use conifer_trace::Metadata;
use std::collections::HashMap;

/// Looks up callers in the modules a trace names, loading each module's debug information
/// once.
pub struct Resolver<'t> {
    modules: HashMap<u32, &'t str>,
    loaders: HashMap<u32, Option<addr2line::Loader>>,
}

impl<'t> Resolver<'t> {
    /// A resolver for the modules listed in `meta`.
    pub fn new(meta: &'t Metadata) -> Resolver<'t> {
        Resolver {
            modules: meta
                .modules
                .iter()
                .map(|m| (module_key(m), m.as_str()))
                .collect(),
            loaders: HashMap::new(),
        }
    }

    /// `file:line (function)` of `caller`, else `function (module)`, else the module's file
    /// name.
    pub fn name(&mut self, caller: Caller) -> String {
        let Some(&path) = self.modules.get(&caller.module) else {
            return format!("unknown module {:08x}+{:#x}", caller.module, caller.offset);
        };
        let file = path.rsplit('/').next().unwrap_or(path);
        let loader = self
            .loaders
            .entry(caller.module)
            .or_insert_with(|| addr2line::Loader::new(path).ok());
        let Some(loader) = loader else {
            return file.to_string();
        };
        let probe = caller.lookup_address();
        let function = innermost_function(loader, probe);
        let line = loader.find_location(probe).ok().flatten().and_then(|l| {
            let source = l.file?.rsplit('/').next()?;
            Some(format!("{source}:{}", l.line?))
        });
        match (line, function) {
            (Some(line), Some(f)) => format!("{line} ({f})"),
            (Some(line), None) => line,
            (None, Some(f)) => format!("{f} ({file})"),
            (None, None) => file.to_string(),
        }
    }
}

/// The function containing `probe`: the innermost inlined frame's, else the symbol table's.
fn innermost_function(loader: &addr2line::Loader, probe: u64) -> Option<String> {
    let from_frames = loader.find_frames(probe).ok().and_then(|mut frames| {
        let frame = frames.next().ok().flatten()?;
        Some(frame.function?.demangle().ok()?.into_owned())
    });
    from_frames.or_else(|| {
        loader
            .find_symbol(probe)
            .map(|s| addr2line::demangle_auto(s.into(), None).into_owned())
    })
}

/// True when `source` (as [`Resolver::name`] made it) starts with `file:line`.
pub fn has_line(source: &str) -> bool {
    source
        .split_whitespace()
        .next()
        .and_then(|first| first.rsplit_once(':'))
        .is_some_and(|(_, line)| !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()))
}

/// Gives every caller site of `analysis` its source position.
pub fn name_sites(meta: &Metadata, analysis: &mut Analysis) {
    if meta.modules.is_empty() {
        return;
    }
    let mut resolver = Resolver::new(meta);
    for (site, stats) in analysis.sites.iter_mut() {
        if let Site::Address { module, offset } = *site {
            stats.source = Some(resolver.name(Caller { module, offset }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_positions_are_told_from_function_names() {
        assert!(has_line("stencil2d.c:83 (main)"));
        assert!(!has_line(
            "LAMMPS_NS::CommBrick::borders() (liblammps.so.0)"
        ));
        assert!(!has_line("liblammps.so.0"));
    }
}
