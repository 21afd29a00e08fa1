//! Reads the function symbols a shared library exports, so that Conifer wraps exactly what the
//! installed MPI provides.

use object::{Object, ObjectSymbol, SymbolKind};
use std::collections::BTreeSet;
use std::path::Path;

/// Names of the defined, exported function symbols of a shared library.
pub fn exported_functions(path: &Path) -> BTreeSet<String> {
    let data = std::fs::read(path).unwrap_or_else(|e| {
        super::mpi_install::fail(&format!("cannot read {}: {e}", path.display()))
    });
    let file = object::File::parse(&*data).unwrap_or_else(|e| {
        super::mpi_install::fail(&format!("{} is not a shared library: {e}", path.display()))
    });
    file.dynamic_symbols()
        .filter(|s| s.is_definition() && s.kind() == SymbolKind::Text && s.is_global())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect()
}
