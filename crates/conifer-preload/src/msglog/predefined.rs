//! Predefined handles in the log go by name, not value: under Open MPI a handle is the
//! address of an object in the library, which moves between runs (`MPI_REQUEST_NULL` in the
//! run is not `MPI_REQUEST_NULL` in the replay). Every other handle is kept as its value, an
//! opaque token the replayed program only ever hands back to the replay.

use conifer_format::predefined;
use conifer_format::value::HandleKind;
use std::collections::HashMap;
use std::sync::LazyLock;

extern "C" {
    fn conifer_predefined_bits(kind: i32, code: i32, defined: *mut i32) -> u64;
}

/// Both directions of the installed MPI's predefined handles.
struct Table {
    codes: HashMap<(HandleKind, u64), u16>,
    values: HashMap<(HandleKind, u16), u64>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let mut table = Table {
        codes: HashMap::new(),
        values: HashMap::new(),
    };
    for (k, kind) in HandleKind::ALL.iter().enumerate() {
        for code in 0..predefined::names(*kind).len() as u16 {
            let mut defined = 0;
            // SAFETY: generated C function with an out-pointer to a local.
            let bits = unsafe { conifer_predefined_bits(k as i32, i32::from(code), &mut defined) };
            if defined != 0 {
                // Synonyms keep the first name; either gives the same value back.
                table.codes.entry((*kind, bits)).or_insert(code);
                table.values.insert((*kind, code), bits);
            }
        }
    }
    table
});

/// The name code of a predefined handle of `kind`, `None` for any other value.
pub fn code_of(kind: HandleKind, bits: u64) -> Option<u16> {
    TABLE.codes.get(&(kind, bits)).copied()
}

/// The value this process's MPI gives the predefined handle `code` of `kind`.
pub fn value_of(kind: HandleKind, code: u16) -> Option<u64> {
    TABLE.values.get(&(kind, code)).copied()
}
