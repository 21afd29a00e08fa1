//! The MPI objects and memory a proxy program needs: dense tables of the trace's symbolic
//! handles, memory segments sized for every recorded use, the stack area, and the extents of
//! the datatypes (predefined ones by name, derived ones from their constructors' arguments).

use conifer_trace::value::{HandleKind, Value};
use std::collections::{BTreeMap, HashMap};

/// Everything the generated program declares globally, gathered while its calls are emitted.
#[derive(Default)]
pub struct Objects {
    /// (kind, symbolic id) → index in the kind's table.
    handles: HashMap<(HandleKind, u32), usize>,
    /// Entries of each kind's table.
    counts: BTreeMap<HandleKind, usize>,
    /// Segment id → (index, bytes needed, bytes needed before it).
    segments: BTreeMap<u32, (usize, i64, i64)>,
    /// Lowest and highest stack byte used.
    stack: Option<(i64, i64)>,
}

impl Objects {
    /// The C expression naming the table entry of handle `id` of `kind` (an lvalue).
    pub fn handle(&mut self, kind: HandleKind, id: u32) -> String {
        let next = self.counts.entry(kind).or_default();
        let index = *self.handles.entry((kind, id)).or_insert_with(|| {
            *next += 1;
            *next - 1
        });
        format!("{}[{index}]", table_name(kind))
    }

    /// The C expression of `offset` bytes into segment `id`, which must hold `bytes` bytes
    /// from there, and `below` (0 or negative) bytes before it: a datatype whose displacements
    /// are address differences to another allocation of the original reaches outside the
    /// segment, so the proxy keeps that much zeroed memory in front of it.
    pub fn segment(&mut self, id: u32, offset: i64, bytes: i64, below: i64) -> String {
        let n = self.segments.len();
        let entry = self.segments.entry(id).or_insert((n, 0, 0));
        entry.1 = entry.1.max(offset.max(0) + bytes);
        entry.2 = entry.2.max(-(offset + below.min(0)));
        format!("B({})+{offset}", entry.0)
    }

    /// The index of segment `id` (for freeing it), if any call used it.
    pub fn segment_index(&self, id: u32) -> Option<usize> {
        self.segments.get(&id).map(|s| s.0)
    }

    /// The C expression of `offset` bytes into the stack area, which must hold `bytes` bytes
    /// from there.
    pub fn stack(&mut self, offset: i64, bytes: i64) -> String {
        let (lo, hi) = self.stack.unwrap_or((offset, offset));
        self.stack = Some((lo.min(offset), hi.max(offset + bytes)));
        format!("S({offset})")
    }

    /// The C declarations of the tables, segments and stack area.
    pub fn declarations(&self) -> String {
        let mut out = String::new();
        for (kind, n) in &self.counts {
            let init = match kind {
                HandleKind::Request => {
                    " = {[0 ... {N}] = MPI_REQUEST_NULL}".replace("{N}", &(n - 1).to_string())
                }
                _ => String::new(),
            };
            out += &format!(
                "static {} {}[{n}]{init};\n",
                c_type(*kind),
                table_name(*kind)
            );
        }
        let sizes: Vec<String> = self
            .segments
            .values()
            .map(|s| s.1.max(1).to_string())
            .collect();
        let pads: Vec<String> = self
            .segments
            .values()
            .map(|s| s.2.max(0).to_string())
            .collect();
        out += &format!(
            "static char *seg_[{n}];\nstatic const size_t seg_size_[{n}] = {{{}}};\n\
             static const size_t seg_pad_[{n}] = {{{}}};\n",
            sizes.join(", "),
            pads.join(", "),
            n = sizes.len().max(1)
        );
        let (lo, hi) = self.stack.unwrap_or((0, 1));
        out += &format!(
            "static char stk_[{}] __attribute__((aligned(64)));\n#define S(off) (stk_ + ({}) + (off))\n",
            (hi - lo).max(1),
            -lo
        );
        out
    }
}

/// The name of the C table holding the handles of `kind`.
fn table_name(kind: HandleKind) -> String {
    format!("h_{}", kind.prefix())
}

/// The C type of handles of `kind`.
pub fn c_type(kind: HandleKind) -> &'static str {
    match kind {
        HandleKind::Comm => "MPI_Comm",
        HandleKind::Datatype => "MPI_Datatype",
        HandleKind::Op => "MPI_Op",
        HandleKind::Group => "MPI_Group",
        HandleKind::Info => "MPI_Info",
        HandleKind::Errhandler => "MPI_Errhandler",
        HandleKind::Request => "MPI_Request",
        HandleKind::Win => "MPI_Win",
        HandleKind::File => "MPI_File",
        HandleKind::Message => "MPI_Message",
        HandleKind::Session => "MPI_Session",
    }
}

/// Bytes of one element of a predefined datatype (an upper bound for the unusual ones).
pub fn predefined_extent(name: &str) -> i64 {
    let n = name.trim_start_matches("MPI_");
    match n {
        "CHAR" | "SIGNED_CHAR" | "UNSIGNED_CHAR" | "BYTE" | "PACKED" | "INT8_T" | "UINT8_T"
        | "C_BOOL" | "CXX_BOOL" | "CHARACTER" | "LOGICAL1" | "INTEGER1" => 1,
        "SHORT" | "UNSIGNED_SHORT" | "INT16_T" | "UINT16_T" | "INTEGER2" => 2,
        "INT" | "UNSIGNED" | "FLOAT" | "INT32_T" | "UINT32_T" | "INTEGER" | "REAL" | "LOGICAL"
        | "WCHAR" | "INTEGER4" | "REAL4" | "2INT" | "SHORT_INT" => {
            if n == "2INT" {
                8
            } else {
                4
            }
        }
        "DOUBLE" | "LONG" | "UNSIGNED_LONG" | "LONG_LONG_INT" | "LONG_LONG"
        | "UNSIGNED_LONG_LONG" | "INT64_T" | "UINT64_T" | "AINT" | "OFFSET" | "COUNT"
        | "DOUBLE_PRECISION" | "C_FLOAT_COMPLEX" | "C_COMPLEX" | "COMPLEX" | "2REAL"
        | "2INTEGER" | "FLOAT_INT" | "INTEGER8" | "REAL8" => 8,
        _ => 32,
    }
}

/// The extent of the type a constructor call makes, from its arguments (slot name → value)
/// and the extents of the types it names; `None` for calls that make no datatype.
pub fn constructed_extent(
    function: &str,
    arg: &dyn Fn(&str) -> Option<Value>,
    extent_of: &dyn Fn(&Value) -> i64,
) -> Option<i64> {
    let int = |name: &str| match arg(name) {
        Some(Value::Int(v)) => v,
        _ => 0,
    };
    let ints = |name: &str| match arg(name) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| if let Value::Int(v) = i { *v } else { 0 })
            .collect(),
        _ => Vec::new(),
    };
    let old = arg("oldtype").map_or(1, |t| extent_of(&t));
    let zip_max = |d: Vec<i64>, b: Vec<i64>, scale: i64| {
        d.iter()
            .zip(b.iter().chain(std::iter::repeat(&int("blocklength"))))
            .map(|(d, b)| d * scale + b * old)
            .max()
            .unwrap_or(0)
    };
    Some(match function {
        "MPI_Type_contiguous" => int("count") * old,
        "MPI_Type_vector" => ((int("count") - 1) * int("stride") + int("blocklength")) * old,
        "MPI_Type_create_hvector" => (int("count") - 1) * int("stride") + int("blocklength") * old,
        "MPI_Type_indexed" => zip_max(
            ints("array_of_displacements"),
            ints("array_of_blocklengths"),
            old,
        ),
        "MPI_Type_create_hindexed" => zip_max(
            ints("array_of_displacements"),
            ints("array_of_blocklengths"),
            1,
        ),
        "MPI_Type_create_indexed_block" => zip_max(ints("array_of_displacements"), Vec::new(), old),
        "MPI_Type_create_hindexed_block" => zip_max(ints("array_of_displacements"), Vec::new(), 1),
        "MPI_Type_create_struct" => {
            let types: Vec<i64> = match arg("array_of_types") {
                Some(Value::Array(items)) => items.iter().map(extent_of).collect(),
                _ => Vec::new(),
            };
            let (d, b) = (
                ints("array_of_displacements"),
                ints("array_of_blocklengths"),
            );
            (0..d.len())
                .map(|i| {
                    d[i] + b.get(i).copied().unwrap_or(1) * types.get(i).copied().unwrap_or(32)
                })
                .max()
                .unwrap_or(0)
        }
        "MPI_Type_create_resized" => int("lb").max(0) + int("extent"),
        "MPI_Type_create_subarray" | "MPI_Type_create_darray" => {
            ints("array_of_sizes").iter().product::<i64>().max(1) * old
        }
        "MPI_Type_dup" => old,
        _ => return None,
    })
}

/// How far below its buffer the type a constructor call makes reaches (0 or negative), from
/// its arguments, the extents and the reach of the types it names; `None` for calls that
/// make no datatype. Only displacements can reach below: negative ones in structs and
/// (h)indexed types, and negative strides.
pub fn constructed_reach_below(
    function: &str,
    arg: &dyn Fn(&str) -> Option<Value>,
    extent_of: &dyn Fn(&Value) -> i64,
    below_of: &dyn Fn(&Value) -> i64,
) -> Option<i64> {
    let int = |name: &str| match arg(name) {
        Some(Value::Int(v)) => v,
        _ => 0,
    };
    let ints = |name: &str| -> Vec<i64> {
        match arg(name) {
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| if let Value::Int(v) = i { *v } else { 0 })
                .collect(),
            _ => Vec::new(),
        }
    };
    let old = arg("oldtype");
    let old_extent = old.as_ref().map_or(1, extent_of);
    let old_below = old.as_ref().map_or(0, below_of);
    let lowest = |d: Vec<i64>, scale: i64| d.iter().map(|d| d * scale).min().unwrap_or(0).min(0);
    let low = match function {
        "MPI_Type_vector" => ((int("count") - 1) * int("stride")).min(0) * old_extent + old_below,
        "MPI_Type_create_hvector" => ((int("count") - 1) * int("stride")).min(0) + old_below,
        "MPI_Type_indexed" | "MPI_Type_create_indexed_block" => {
            lowest(ints("array_of_displacements"), old_extent) + old_below
        }
        "MPI_Type_create_hindexed" | "MPI_Type_create_hindexed_block" => {
            lowest(ints("array_of_displacements"), 1) + old_below
        }
        "MPI_Type_create_struct" => {
            let types: Vec<i64> = match arg("array_of_types") {
                Some(Value::Array(items)) => items.iter().map(below_of).collect(),
                _ => Vec::new(),
            };
            ints("array_of_displacements")
                .iter()
                .enumerate()
                .map(|(i, d)| d + types.get(i).copied().unwrap_or(0))
                .min()
                .unwrap_or(0)
        }
        "MPI_Type_contiguous" | "MPI_Type_dup" | "MPI_Type_create_resized" => old_below,
        "MPI_Type_create_subarray" | "MPI_Type_create_darray" => 0,
        _ => return None,
    };
    Some(low.min(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Value {
        Value::Array(v.iter().map(|&i| Value::Int(i)).collect())
    }

    #[test]
    fn types_reach_below_their_buffer_by_their_lowest_displacement() {
        let double = Value::Int(8);
        let extent = |v: &Value| if *v == double { 8 } else { 32 };
        // A struct of HPL's kind: blocks of a panel, and one block in another allocation
        // 17,710,208 bytes below (an address difference).
        let structure = |name: &str| match name {
            "array_of_displacements" => Some(ints(&[0, 3840, -17_710_208])),
            "array_of_blocklengths" => Some(ints(&[160, 160, 6481])),
            "array_of_types" => Some(Value::Array(vec![double.clone(); 3])),
            _ => None,
        };
        let reach = constructed_reach_below("MPI_Type_create_struct", &structure, &extent, &|_| 0);
        assert_eq!(reach, Some(-17_710_208));
        // A vector with a negative stride of 3 elements, 4 blocks: 9 elements of 8 bytes below.
        let vector = |name: &str| match name {
            "count" => Some(Value::Int(4)),
            "stride" => Some(Value::Int(-3)),
            "blocklength" => Some(Value::Int(1)),
            "oldtype" => Some(double.clone()),
            _ => None,
        };
        assert_eq!(
            constructed_reach_below("MPI_Type_vector", &vector, &extent, &|_| 0),
            Some(-72)
        );
        // Positive displacements reach nothing below; other calls make no type.
        let forward = |name: &str| (name == "array_of_displacements").then(|| ints(&[16, 0]));
        assert_eq!(
            constructed_reach_below("MPI_Type_create_hindexed", &forward, &extent, &|_| 0),
            Some(0)
        );
        assert_eq!(
            constructed_reach_below("MPI_Send", &forward, &extent, &|_| 0),
            None
        );
        // The segment keeps that much room in front of the buffer's offset.
        let mut objects = Objects::default();
        objects.segment(7, 1_231_376, 2_000, -17_710_208);
        assert!(objects
            .declarations()
            .contains(&format!("seg_pad_[1] = {{{}}}", 17_710_208 - 1_231_376)));
    }
}
