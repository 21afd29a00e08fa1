//! What the slicer assumes about functions without a body in the module (libc, libm, the
//! Fortran runtime, whose names [`super::fortran`] sorts): whether they allocate, only
//! compute, only print, copy memory, or are unknown. Unknown functions are kept with
//! everything they read, and may write whatever their pointer arguments reach (pointers to
//! that memory or to memory of their own included), but do not keep the pointers.

use super::class::External;

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

/// Complex arithmetic the compiler calls (`__divdc3` for a complex division) and `<complex.h>`:
/// values in, a value out.
const COMPLEX: [&str; 18] = [
    "__divsc3", "__divdc3", "__divxc3", "__mulsc3", "__muldc3", "__mulxc3", "cabs", "cabsf",
    "carg", "cargf", "cexp", "cexpf", "csqrt", "csqrtf", "clog", "clogf", "cpow", "cpowf",
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
    } else if PURE.contains(&name) || COMPLEX.contains(&name) {
        External::Pure
    } else if PRINTS.contains(&name) {
        External::Prints
    } else if READS.contains(&name) {
        External::Reads
    } else if WRITES.contains(&name) {
        External::Writes
    } else if let Some(class) = super::fortran::classify(name) {
        class
    } else if let Some(class) = super::openmp::classify(name) {
        class
    } else if let Some(class) = super::cxx::classify(name) {
        class
    } else {
        External::Unknown
    }
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
        assert_eq!(classify("__divdc3"), External::Pure);
        assert_eq!(classify("free"), External::Frees);
        assert_eq!(classify("_FortranAioOutputReal64"), External::IoStatement);
        assert_eq!(classify("_FortranAAssign"), External::FortranAssign);
        assert_eq!(classify("exit"), External::Unknown);
        assert_eq!(classify("llvm.stacksave"), External::Unknown);
    }
}
