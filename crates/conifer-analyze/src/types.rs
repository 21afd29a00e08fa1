//! Datatype sizes: the predefined types' sizes on LP64 Linux (what `MPI_Type_size` returns on
//! x86-64 and aarch64 with Open MPI and MPICH), and derived types' sizes from the rank's own
//! constructor calls.

use crate::call::Args;
use conifer_trace::predefined;
use conifer_trace::value::{HandleKind, HandleRef, Value};
use std::collections::HashMap;

/// Size in bytes of the predefined datatype named `name` (`None` for `MPI_DATATYPE_NULL` and
/// names this table does not know).
pub fn predefined_size(name: &str) -> Option<u64> {
    Some(match name {
        "MPI_CHAR" | "MPI_SIGNED_CHAR" | "MPI_UNSIGNED_CHAR" | "MPI_BYTE" | "MPI_PACKED"
        | "MPI_C_BOOL" | "MPI_INT8_T" | "MPI_UINT8_T" | "MPI_CHARACTER" | "MPI_INTEGER1"
        | "MPI_CXX_BOOL" => 1,
        "MPI_SHORT" | "MPI_UNSIGNED_SHORT" | "MPI_INT16_T" | "MPI_UINT16_T" | "MPI_INTEGER2" => 2,
        "MPI_INT" | "MPI_UNSIGNED" | "MPI_FLOAT" | "MPI_WCHAR" | "MPI_INT32_T" | "MPI_UINT32_T"
        | "MPI_INTEGER" | "MPI_REAL" | "MPI_LOGICAL" | "MPI_INTEGER4" | "MPI_REAL4" => 4,
        "MPI_SHORT_INT" => 6,
        "MPI_LONG"
        | "MPI_LONG_LONG_INT"
        | "MPI_LONG_LONG"
        | "MPI_UNSIGNED_LONG"
        | "MPI_UNSIGNED_LONG_LONG"
        | "MPI_DOUBLE"
        | "MPI_INT64_T"
        | "MPI_UINT64_T"
        | "MPI_AINT"
        | "MPI_COUNT"
        | "MPI_OFFSET"
        | "MPI_C_COMPLEX"
        | "MPI_C_FLOAT_COMPLEX"
        | "MPI_FLOAT_INT"
        | "MPI_2INT"
        | "MPI_DOUBLE_PRECISION"
        | "MPI_COMPLEX"
        | "MPI_2REAL"
        | "MPI_2INTEGER"
        | "MPI_INTEGER8"
        | "MPI_REAL8"
        | "MPI_COMPLEX8"
        | "MPI_CXX_FLOAT_COMPLEX" => 8,
        "MPI_LONG_INT" | "MPI_DOUBLE_INT" => 12,
        "MPI_LONG_DOUBLE"
        | "MPI_C_DOUBLE_COMPLEX"
        | "MPI_DOUBLE_COMPLEX"
        | "MPI_2DOUBLE_PRECISION"
        | "MPI_REAL16"
        | "MPI_COMPLEX16"
        | "MPI_CXX_DOUBLE_COMPLEX" => 16,
        "MPI_LONG_DOUBLE_INT" => 20,
        "MPI_C_LONG_DOUBLE_COMPLEX" | "MPI_COMPLEX32" | "MPI_CXX_LONG_DOUBLE_COMPLEX" => 32,
        _ => return None,
    })
}

/// The sizes of a rank's datatypes: predefined ones from the table, derived ones (symbolic ids)
/// from the constructors the rank called. A datatype id the rank created twice with different
/// sizes (ids are reused after `MPI_Type_free`) keeps the size of the smaller terminal; see
/// docs/guide/analysis.md (Bytes).
#[derive(Debug, Default, Clone)]
pub struct TypeSizes {
    derived: HashMap<u32, u64>,
}

impl TypeSizes {
    /// Sizes from the rank's constructor calls (any order: derived types built from derived
    /// types are resolved until nothing changes).
    pub fn from_calls<'a>(calls: impl IntoIterator<Item = Args<'a>> + Clone) -> TypeSizes {
        let mut sizes = TypeSizes::default();
        loop {
            let mut changed = false;
            for args in calls.clone() {
                if let Some((id, size)) = sizes.constructed(&args) {
                    if sizes.derived.get(&id) != Some(&size) && !sizes.derived.contains_key(&id) {
                        sizes.derived.insert(id, size);
                        changed = true;
                    }
                }
            }
            if !changed {
                return sizes;
            }
        }
    }

    /// The size of the datatype `v` (a datatype handle), when known.
    pub fn size(&self, v: &Value) -> Option<u64> {
        match v {
            Value::Handle(HandleKind::Datatype, HandleRef::Named(i)) => {
                predefined::names(HandleKind::Datatype)
                    .get(*i as usize)
                    .and_then(|n| predefined_size(n))
            }
            Value::Handle(HandleKind::Datatype, HandleRef::Id(id)) => self.derived.get(id).copied(),
            _ => None,
        }
    }

    /// The (id, size) a type constructor call creates, when its inputs' sizes are known.
    fn constructed(&self, a: &Args) -> Option<(u32, u64)> {
        let name = a.name.strip_prefix("MPI_")?;
        let name = name.strip_suffix("_c").unwrap_or(name);
        let new = match a.get("newtype")? {
            Value::Handle(HandleKind::Datatype, HandleRef::Id(id)) => *id,
            _ => return None,
        };
        let int = |slot: &str| a.int(slot);
        let old = || self.size(a.get("oldtype")?);
        let size = match name {
            "Type_contiguous" => int("count")?.checked_mul(old()?)?,
            "Type_vector" | "Type_create_hvector" | "Type_hvector" => int("count")?
                .checked_mul(int("blocklength")?)?
                .checked_mul(old()?)?,
            "Type_indexed" | "Type_create_hindexed" | "Type_hindexed" => {
                a.ints("array_of_blocklengths")?.iter().sum::<u64>() * old()?
            }
            "Type_create_indexed_block" | "Type_create_hindexed_block" => {
                int("count")? * int("blocklength")? * old()?
            }
            "Type_create_struct" | "Type_struct" => {
                let lens = a.ints("array_of_blocklengths")?;
                let types = match a.get("array_of_types")? {
                    Value::Array(items) => items,
                    _ => return None,
                };
                let mut total = 0u64;
                for (n, t) in lens.iter().zip(types) {
                    total += n * self.size(t)?;
                }
                total
            }
            "Type_create_resized" | "Type_dup" | "Type_create_f90_real" => old()?,
            "Type_create_subarray" => a.ints("array_of_subsizes")?.iter().product::<u64>() * old()?,
            "Type_create_darray" => return None,
            _ => return None,
        };
        Some((new, size))
    }
}
