//! Classifies the C type of a wrapped function's parameter, as bindgen rendered it from `mpi.h`,
//! into the shapes the encoder generator knows: integers, handles, statuses, buffers, strings,
//! pointers to those, and everything else.

use syn::Type;

/// The element type under at most one pointer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Base {
    /// Any integer type (`int`, `MPI_Aint`, `MPI_Count`, `MPI_Offset`, `MPI_Fint`, …).
    Int,
    /// An MPI handle; the string is the `HandleKind` variant name.
    Handle(&'static str),
    /// `MPI_Status`.
    Status,
    /// `void`.
    Void,
    /// `char`.
    Char,
    /// Anything else (callbacks, tool-interface handles, `double`, …).
    Other,
}

/// A parameter's type: a value, or a pointer (`mutable` for `*mut`) to one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    /// Passed by value.
    Value(Base),
    /// One level of pointer.
    Pointer { base: Base, mutable: bool },
    /// Pointers to pointers and other types the encoder does not interpret.
    Other,
}

fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn base(ty: &Type) -> Base {
    let Some(name) = last_ident(ty) else {
        return Base::Other;
    };
    match name.as_str() {
        "c_int" | "c_uint" | "c_long" | "c_ulong" | "c_longlong" | "c_ulonglong" | "c_short"
        | "c_ushort" | "usize" | "isize" | "i32" | "i64" | "u32" | "u64" | "MPI_Aint"
        | "MPI_Count" | "MPI_Offset" | "MPI_Fint" => Base::Int,
        "MPI_Comm" => Base::Handle("Comm"),
        "MPI_Datatype" => Base::Handle("Datatype"),
        "MPI_Op" => Base::Handle("Op"),
        "MPI_Group" => Base::Handle("Group"),
        "MPI_Info" => Base::Handle("Info"),
        "MPI_Errhandler" => Base::Handle("Errhandler"),
        "MPI_Request" => Base::Handle("Request"),
        "MPI_Win" => Base::Handle("Win"),
        "MPI_File" => Base::Handle("File"),
        "MPI_Message" => Base::Handle("Message"),
        "MPI_Session" => Base::Handle("Session"),
        "MPI_Status" => Base::Status,
        "c_void" => Base::Void,
        "c_char" => Base::Char,
        _ => Base::Other,
    }
}

/// The shape of a parameter type.
pub fn shape(ty: &Type) -> Shape {
    match ty {
        Type::Ptr(p) => match &*p.elem {
            Type::Ptr(_) => Shape::Other,
            elem => Shape::Pointer {
                base: base(elem),
                mutable: p.mutability.is_some(),
            },
        },
        other => Shape::Value(base(other)),
    }
}
