//! Builds the compact view of the table that trace readers and writers use without parsing
//! the JSON: `OUT_DIR/compact.rs` holds the table's hash, every function's C name and the names
//! of its C parameters, in table order.

#[path = "src/fnv.rs"]
mod fnv;

use serde::Deserialize;

#[derive(Deserialize)]
struct Param {
    name: String,
}

#[derive(Deserialize)]
struct Function {
    name: String,
    params: Vec<Param>,
}

#[derive(Deserialize)]
struct Table {
    functions: Vec<Function>,
}

fn main() {
    println!("cargo:rerun-if-changed=mpi-functions.json");
    println!("cargo:rerun-if-changed=src/fnv.rs");
    let json = std::fs::read_to_string("mpi-functions.json").expect("read mpi-functions.json");
    let table: Table = serde_json::from_str(&json).expect("mpi-functions.json parses");
    let names: Vec<&str> = table.functions.iter().map(|f| f.name.as_str()).collect();
    // `find_function` searches by name: the generator sorts the table.
    assert!(
        names.windows(2).all(|w| w[0] < w[1]),
        "mpi-functions.json must list its functions sorted by name, each once (run `make spec`)"
    );
    let params: String = table
        .functions
        .iter()
        .map(|f| {
            let names: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
            format!("&{names:?},")
        })
        .collect();
    let (n, hash) = (names.len(), fnv::fnv1a(json.as_bytes()));
    let out = format!(
        "/// FNV-1a (64-bit) hash of [`TABLE_JSON`]'s bytes: names this version of the table.
pub const TABLE_HASH: u64 = {hash:#018x};
/// The C name of each function, in table order (sorted by name).
pub static FUNCTION_NAMES: [&str; {n}] = {names:?};
/// The names of each function's C parameters, in order, indexed like [`FUNCTION_NAMES`].
pub static PARAMETER_NAMES: [&[&str]; {n}] = [{params}];
"
    );
    let dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(format!("{dir}/compact.rs"), out).expect("write compact.rs");
}
