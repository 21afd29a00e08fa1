//! What the slicer assumes about flang's runtime library (`_FortranA…`): which calls allocate
//! an array behind a descriptor, fill in descriptors, associate pointers, assign or compute
//! into a result descriptor, only read (reductions, inquiries, character comparison), only
//! compute (rounding, powers, clocks), or write their arguments (environment, date); I/O
//! statements (`_FortranAio…`) are [`External::IoStatement`], and which unit an external I/O
//! statement works on ([`unit_argument`]). Anything else (`STOP`, program start, `EXIT`,
//! callbacks) is [`External::Unknown`].

use super::class::External;

/// Inquiries and comparisons that return a value and write nothing (checked before the
/// reductions, whose `…Dim` forms fill a result descriptor).
const READS: [&str; 15] = [
    "LboundDim",
    "TransferSize",
    "SizeDim",
    "Size",
    "CharacterCompare",
    "Index",
    "Scan",
    "Verify",
    "LenTrim",
    "IsContiguous",
    "IsAssumedSize",
    "PointerIsAssociated",
    "SameTypeAs",
    "ExtendsTypeOf",
    "ClassIs",
];

/// Reductions: to a scalar they only read; with `DIM` (`…Dim`) or of characters they fill a
/// result descriptor, their first argument.
const REDUCTIONS: [&str; 13] = [
    "Sum",
    "Product",
    "Maxval",
    "Minval",
    "DotProduct",
    "Count",
    "All",
    "Any",
    "Parity",
    "IAll",
    "IAny",
    "IParity",
    "Norm2",
];

/// Calls whose first argument is a result (a descriptor the runtime allocates, or a result
/// scalar's address) computed from the others, and assignments.
const RESULTS: [&str; 25] = [
    "Assign",
    "CopyInAssign",
    "CopyOutAssign",
    "Adjustl",
    "Adjustr",
    "Cshift",
    "Eoshift",
    "Matmul",
    "Maxloc",
    "Minloc",
    "Findloc",
    "Pack",
    "Unpack",
    "Repeat",
    "Reshape",
    "Spread",
    "Transfer",
    "Transpose",
    "Trim",
    "Shape",
    "Lbound",
    "Ubound",
    "BesselJn",
    "BesselYn",
    "Cpp",
];

/// `ALLOCATE` of an allocatable or pointer: the descriptor gets fresh memory.
const ALLOCATES: [&str; 3] = [
    "AllocatableAllocate",
    "PointerAllocate",
    "RaggedArrayAllocate",
];

/// Calls that fill in or release a descriptor (or initialise what it describes) without
/// making a pointer to other memory.
const DESCRIPTORS: [&str; 15] = [
    "AllocatableSetBounds",
    "AllocatableInit",
    "AllocatableSetDerivedLength",
    "AllocatableDeallocate",
    "AllocatableApplyMold",
    "PointerNullify",
    "PointerSetBounds",
    "PointerDeallocate",
    "PointerApplyMold",
    "PointerSetDerivedLength",
    "RaggedArrayDeallocate",
    "Destroy",
    "Finalize",
    "Initialize",
    "RandomNumber",
];

/// Pointer association and `MOVE_ALLOC`: the first descriptor takes the second's memory.
const ASSOCIATES: [&str; 3] = ["PointerAssociate", "MoveAlloc", "CopyAndUpdateDescriptor"];

/// Intrinsics that write what their arguments point to and nothing else.
const WRITES_ARGUMENTS: [&str; 7] = [
    "DateAndTime",
    "GetEnvVariable",
    "GetCommand",
    "GetCwd",
    "Etime",
    "RandomSeed",
    "RandomInit",
];

/// Intrinsics that only compute from their values (and clocks).
const PURE: [&str; 21] = [
    "Ceiling",
    "Floor",
    "Nint",
    "Mod",
    "Exponent",
    "Fraction",
    "Nearest",
    "Spacing",
    "RRSpacing",
    "Scale",
    "SetExponent",
    "ErfcScaled",
    "FPow",
    "cpow",
    "zpow",
    "cqpow",
    "Selected",
    "IsNaN",
    "IsFinite",
    "CpuTime",
    "SystemClock",
];

fn starts_with_any(name: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| name.starts_with(p))
}

/// The class of flang runtime function `name`, or `None` when it is not one.
pub fn classify(name: &str) -> Option<External> {
    let n = name.strip_prefix("_FortranA")?;
    let class = if n.starts_with("io") {
        External::IoStatement
    } else if starts_with_any(n, &READS) {
        External::Reads
    } else if starts_with_any(n, &ALLOCATES) {
        External::FortranAllocate
    } else if starts_with_any(n, &DESCRIPTORS) {
        External::FortranDescriptor
    } else if starts_with_any(n, &ASSOCIATES) {
        External::FortranAssociate
    } else if starts_with_any(n, &REDUCTIONS) {
        // Checked after the allocation calls, which start with "All".
        match n.ends_with("Dim") || n.contains("Character") {
            true => External::FortranAssign,
            false => External::Reads,
        }
    } else if starts_with_any(n, &RESULTS) {
        External::FortranAssign
    } else if starts_with_any(n, &WRITES_ARGUMENTS) {
        External::FortranWrites
    } else if starts_with_any(n, &PURE) || n == "ArgumentCount" || n == "GetPID" {
        External::Pure
    } else {
        External::Unknown
    };
    Some(class)
}

/// Whether `name` is a flang runtime function (it reads through the descriptors it gets).
pub fn is_runtime(name: &str) -> bool {
    name.starts_with("_FortranA")
}

/// Where the unit is among the arguments of I/O call `name`: `Some(Some(k))` for a statement
/// on the external unit given by argument `k` (the first 32-bit integer but the source line
/// last), `Some(None)` for one that may work on any unit (`OPEN(NEWUNIT=)`, `INQUIRE(FILE=)`),
/// `None` for calls that start no external statement (internal I/O, items, ends).
pub fn unit_argument(name: &str, i32_args: &[bool]) -> Option<Option<usize>> {
    let n = name.strip_prefix("_FortranAioBegin")?;
    if n.starts_with("Internal") {
        return None;
    }
    let last = i32_args.len().saturating_sub(1);
    Some(i32_args[..last].iter().position(|&is| is))
}

/// Whether an I/O call transfers an array descriptor (`_FortranAio…Descriptor`): it reaches
/// the data behind it.
pub fn io_reaches_data(name: &str) -> bool {
    name.starts_with("_FortranAio") && name.ends_with("Descriptor")
}

/// Whether an I/O call is an output item (`_FortranAioOutput…`): it writes only its statement
/// (its first argument), not the value it prints.
pub fn io_writes_only_statement(name: &str) -> bool {
    name.starts_with("_FortranAioOutput")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_classes() {
        let class = |n: &str| classify(n).expect("a runtime function");
        assert_eq!(class("_FortranAioOutputReal64"), External::IoStatement);
        assert_eq!(class("_FortranAAssign"), External::FortranAssign);
        assert_eq!(class("_FortranASumReal8"), External::Reads);
        assert_eq!(class("_FortranASumDim"), External::FortranAssign);
        assert_eq!(class("_FortranAMaxvalCharacter"), External::FortranAssign);
        assert_eq!(class("_FortranASizeDim"), External::Reads);
        assert_eq!(class("_FortranALboundDim"), External::Reads);
        assert_eq!(class("_FortranALbound"), External::FortranAssign);
        assert_eq!(class("_FortranACharacterCompareScalar1"), External::Reads);
        assert_eq!(
            class("_FortranAAllocatableAllocate"),
            External::FortranAllocate
        );
        assert_eq!(
            class("_FortranAAllocatableSetBounds"),
            External::FortranDescriptor
        );
        assert_eq!(class("_FortranAMoveAlloc"), External::FortranAssociate);
        assert_eq!(class("_FortranAAllDim"), External::FortranAssign);
        assert_eq!(class("_FortranAAll"), External::Reads);
        assert_eq!(class("_FortranATransferSize"), External::Reads);
        assert_eq!(class("_FortranAGetEnvVariable"), External::FortranWrites);
        assert_eq!(class("_FortranAModulo8"), External::Pure);
        assert_eq!(class("_FortranAStopStatement"), External::Unknown);
        assert_eq!(class("_FortranAProgramStart"), External::Unknown);
        assert_eq!(classify("malloc"), None);
        assert!(io_reaches_data("_FortranAioInputDescriptor"));
        assert!(!io_reaches_data("_FortranAioInputInteger"));
        assert!(io_writes_only_statement("_FortranAioOutputAscii"));
        assert!(!io_writes_only_statement("_FortranAioInputInteger"));
    }

    #[test]
    fn units() {
        // `BeginExternalFormattedOutput(format, length, descriptor, unit, file, line)`.
        let formatted = [false, false, false, true, false, true];
        assert_eq!(
            unit_argument("_FortranAioBeginExternalFormattedOutput", &formatted),
            Some(Some(3))
        );
        assert_eq!(
            unit_argument("_FortranAioBeginOpenUnit", &[true, false, true]),
            Some(Some(0))
        );
        assert_eq!(
            unit_argument("_FortranAioBeginOpenNewUnit", &[false, true]),
            Some(None)
        );
        assert_eq!(
            unit_argument(
                "_FortranAioBeginInternalFormattedOutput",
                &[false, true, false, true]
            ),
            None
        );
        assert_eq!(
            unit_argument("_FortranAioInputInteger", &[false, false]),
            None
        );
    }
}
