//! What the slicer assumes about functions without a body in the module (libc, libm, the
//! Fortran runtime): whether they allocate, only compute, only print, copy memory, or are
//! unknown. Unknown functions are kept with everything they read, and may write and capture
//! whatever their pointer arguments reach.

/// The behaviour of an external function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum External {
    /// Returns fresh memory (`malloc`, `calloc`, ...); `realloc` also keeps its argument's.
    Allocates,
    /// Only computes from its arguments: removable, writes nothing.
    Pure,
    /// Frees memory (`free`, `delete`): always kept — the recorder traces the release of
    /// heap buffers given to MPI — but reads nothing through its pointer.
    Frees,
    /// Writes program output and nothing the program reads back: removable.
    Prints,
    /// Reads what its pointer arguments point to and returns a number: removable.
    Reads,
    /// Writes what its first argument points to (`memcpy`, `memset`, `sprintf`): removable
    /// unless what it writes is live.
    Writes,
    /// A Fortran I/O runtime call: writes what every pointer argument points to, and what the
    /// array descriptors among them point to (a `READ` fills its variables), returns a fresh
    /// statement object; removable unless what it writes is live.
    IoStatement,
    /// A Fortran whole-array or derived-type assignment (`_FortranAAssign*`): its arguments
    /// are descriptors; it writes the left-hand side's descriptor (reallocating it, Fortran
    /// 2003) and data, and reads the right-hand side's; removable unless what it writes is
    /// live.
    FortranAssign,
    /// Anything else (may exit, read input, keep pointers): always kept.
    Unknown,
}

const ALLOCATORS: [&str; 8] = [
    "malloc",
    "calloc",
    "realloc",
    "aligned_alloc",
    "valloc",
    "_Znwm",
    "_Znam",
    "strdup",
];

const FREES: [&str; 4] = ["free", "_ZdlPv", "_ZdaPv", "_ZdlPvm"];

const PURE: [&str; 36] = [
    "sqrt", "sqrtf", "exp", "expf", "log", "logf", "log10", "pow", "powf", "sin", "sinf", "cos",
    "cosf", "tan", "atan", "atan2", "fabs", "fabsf", "floor", "ceil", "fmod", "round", "lround",
    "trunc", "fmax", "fmin", "abs", "labs", "cbrt", "hypot", "exp2", "log2", "erf", "tanh", "sinh",
    "cosh",
];

const PRINTS: [&str; 10] = [
    "printf", "fprintf", "vprintf", "vfprintf", "puts", "putchar", "fputs", "fputc", "fflush",
    "perror",
];

const READS: [&str; 10] = [
    "atoi", "atol", "atof", "strtol", "strtoul", "strtod", "strcmp", "strncmp", "strlen", "memcmp",
];

const WRITES: [&str; 8] = [
    "memcpy",
    "memmove",
    "memset",
    "sprintf",
    "snprintf",
    "vsprintf",
    "vsnprintf",
    "strcpy",
];

/// Classifies external function `name`.
pub fn classify(name: &str) -> External {
    if let Some(intrinsic) = name.strip_prefix("llvm.") {
        return intrinsic_class(intrinsic);
    }
    if ALLOCATORS.contains(&name) {
        External::Allocates
    } else if FREES.contains(&name) {
        External::Frees
    } else if PURE.contains(&name) {
        External::Pure
    } else if PRINTS.contains(&name) {
        External::Prints
    } else if READS.contains(&name) {
        External::Reads
    } else if WRITES.contains(&name) {
        External::Writes
    } else if name.starts_with("_FortranAio") {
        External::IoStatement
    } else if name.starts_with("_FortranAAssign") {
        External::FortranAssign
    } else {
        External::Unknown
    }
}

/// Whether Fortran I/O call `name` transfers an array descriptor
/// (`_FortranAio…Descriptor`): it reaches the data behind it.
pub fn io_reaches_data(name: &str) -> bool {
    name.starts_with("_FortranAio") && name.ends_with("Descriptor")
}

/// Whether Fortran I/O call `name` is an output item (`_FortranAioOutput…`): it writes only
/// its statement (its first argument), not the value it prints.
pub fn io_writes_only_statement(name: &str) -> bool {
    name.starts_with("_FortranAioOutput")
}

fn intrinsic_class(intrinsic: &str) -> External {
    let family = intrinsic.split('.').next().unwrap_or_default();
    match family {
        // `va_start` and `va_copy` write the `va_list` their first argument points to.
        "memcpy" | "memmove" | "memset" | "va_start" | "va_copy" => External::Writes,
        "dbg" | "lifetime" | "assume" | "va_end" | "experimental" | "invariant" | "sqrt"
        | "fabs" | "pow" | "exp" | "exp2" | "log" | "log2" | "log10" | "sin" | "cos" | "floor"
        | "ceil" | "trunc" | "round" | "rint" | "nearbyint" | "fma" | "fmuladd" | "minnum"
        | "maxnum" | "minimum" | "maximum" | "copysign" | "smax" | "smin" | "umax" | "umin"
        | "abs" | "ctpop" | "ctlz" | "cttz" | "bswap" | "sadd" | "uadd" | "ssub" | "usub"
        | "smul" | "umul" | "powi" | "lround" | "llround" | "expect" => External::Pure,
        _ => External::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(classify("malloc"), External::Allocates);
        assert_eq!(classify("llvm.memcpy.p0.p0.i64"), External::Writes);
        assert_eq!(classify("llvm.fmuladd.f64"), External::Pure);
        assert_eq!(classify("printf"), External::Prints);
        assert_eq!(classify("free"), External::Frees);
        assert_eq!(classify("_FortranAioOutputReal64"), External::IoStatement);
        assert_eq!(classify("_FortranAAssign"), External::FortranAssign);
        assert!(io_reaches_data("_FortranAioInputDescriptor"));
        assert!(!io_reaches_data("_FortranAioInputInteger"));
        assert!(io_writes_only_statement("_FortranAioOutputAscii"));
        assert!(!io_writes_only_statement("_FortranAioInputInteger"));
        assert_eq!(classify("exit"), External::Unknown);
        assert_eq!(classify("llvm.stacksave"), External::Unknown);
    }
}
