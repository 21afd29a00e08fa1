//! The MPI function table Conifer is generated from.
//!
//! `mpi-functions.json` is derived from the MPI Forum's machine-readable API (PyPI package
//! `pympistandard`, MPI 5.0) by `tools/gen-mpi-table.py` and committed, so that building Conifer
//! needs neither Python nor network access; `make spec-check` proves it is current. This crate
//! parses it for build scripts (wrapper generation) and tools that need parameter semantics;
//! its build script also compiles in the table's hash, names and parameter names
//! ([`TABLE_HASH`], [`FUNCTION_NAMES`], [`PARAMETER_NAMES`]), which traces refer to.

use serde::Deserialize;

pub mod fnv;
pub mod message_log;
pub mod recording;
pub mod slicing;

/// The committed table, as text.
pub const TABLE_JSON: &str = include_str!("../mpi-functions.json");

include!(concat!(env!("OUT_DIR"), "/compact.rs"));

/// The index of the function named `name` (C spelling) in [`FUNCTION_NAMES`].
pub fn find_function(name: &str) -> Option<usize> {
    FUNCTION_NAMES.binary_search(&name).ok()
}

/// One parameter of the C binding.
#[derive(Debug, Clone, Deserialize)]
pub struct Param {
    /// Parameter name as the standard spells it (`buf`, `count`, `comm`, …).
    pub name: String,
    /// Semantic kind from the standard (`RANK`, `TAG`, `COMMUNICATOR`, `BUFFER`, …).
    pub kind: String,
    /// `in`, `out` or `inout`.
    pub dir: String,
    /// Declared `const` in the standard's C binding.
    #[serde(rename = "const")]
    pub constant: bool,
    /// Array extents (`["count"]`, `["n", "3"]`, …) when the parameter is an array.
    pub length: Option<Vec<String>>,
    /// May be `NULL` / ignored (e.g. statuses).
    pub optional: bool,
    /// Significant at the root only (rooted collectives).
    pub root_only: bool,
    /// The C element type named by the standard (`int`, `MPI_Count`, …); none for Fortran-only kinds.
    pub c_base_type: Option<String>,
}

/// One parameter of the mpif.h Fortran binding.
#[derive(Debug, Clone, Deserialize)]
pub struct FortranParam {
    /// Parameter name.
    pub name: String,
    /// A `CHARACTER*(*)` argument: gfortran appends a hidden length argument for it.
    pub string: bool,
}

/// One MPI procedure.
#[derive(Debug, Clone, Deserialize)]
pub struct Function {
    /// C name, e.g. `MPI_Send` or the large-count `MPI_Send_c`.
    pub name: String,
    /// The entry is the `_c` large-count variant of another.
    pub large_count: bool,
    /// Has a C binding.
    pub c: bool,
    /// Has an mpif.h / `use mpi` Fortran binding.
    pub fortran: bool,
    /// Deprecated by the standard.
    pub deprecated: bool,
    /// Kind of the C return value (`ERROR_CODE` for nearly all).
    pub return_kind: String,
    /// Parameters of the C binding, in order.
    pub params: Vec<Param>,
    /// Parameters of the Fortran binding, in order (including `ierror` when present).
    pub fortran_params: Vec<FortranParam>,
}

impl Function {
    /// The Fortran symbol stem: lower-case name (`mpi_send`), to which manglings add `_`/`__`.
    pub fn fortran_stem(&self) -> String {
        self.name.to_ascii_lowercase()
    }
}

#[derive(Deserialize)]
struct Table {
    functions: Vec<Function>,
}

/// Parses the committed table.
pub fn functions() -> Vec<Function> {
    let table: Table =
        serde_json::from_str(TABLE_JSON).expect("mpi-functions.json is produced by the generator");
    table.functions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(fs: &'a [Function], name: &str) -> &'a Function {
        fs.iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn send_has_the_standard_parameter_kinds() {
        let fs = functions();
        let send = find(&fs, "MPI_Send");
        let kinds: Vec<_> = send.params.iter().map(|p| p.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "BUFFER",
                "POLYXFER_NUM_ELEM_NNI",
                "DATATYPE",
                "RANK",
                "TAG",
                "COMMUNICATOR"
            ]
        );
        let fortran: Vec<_> = send
            .fortran_params
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(
            fortran,
            ["buf", "count", "datatype", "dest", "tag", "comm", "ierror"]
        );
    }

    #[test]
    fn large_count_variants_use_mpi_count() {
        let fs = functions();
        let send_c = find(&fs, "MPI_Send_c");
        assert!(send_c.large_count && !send_c.fortran);
        assert_eq!(send_c.params[1].c_base_type.as_deref(), Some("MPI_Count"));
    }

    #[test]
    fn fortran_only_and_string_arguments_are_marked() {
        let fs = functions();
        assert!(!find(&fs, "MPI_Sizeof").c);
        assert!(!find(&fs, "MPI_F_sync_reg").c);
        let set_name = find(&fs, "MPI_Comm_set_name");
        assert!(set_name.fortran_params.iter().any(|p| p.string));
        let pcontrol = find(&fs, "MPI_Pcontrol");
        assert_eq!(
            pcontrol.fortran_params.len(),
            1,
            "varargs and no ierror in Fortran"
        );
    }

    #[test]
    fn the_compact_table_matches_the_json() {
        assert_eq!(TABLE_HASH, fnv::fnv1a(TABLE_JSON.as_bytes()));
        let fs = functions();
        assert_eq!(fs.len(), FUNCTION_NAMES.len());
        for (i, f) in fs.iter().enumerate() {
            assert_eq!(find_function(&f.name), Some(i));
            let params: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(params, PARAMETER_NAMES[i], "{}", f.name);
        }
        assert_eq!(find_function("MPIX_Foo"), None);
    }

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(fnv::fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv::fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv::fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn waitall_requests_have_a_length_expression() {
        let fs = functions();
        let waitall = find(&fs, "MPI_Waitall");
        assert_eq!(waitall.params[1].length, Some(vec!["count".to_string()]));
        assert_eq!(waitall.params[1].dir, "inout");
    }
}
