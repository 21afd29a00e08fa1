//! The classes of functions without a body in the module that the slicer tells apart
//! ([`super::externals`] sorts libc's and libm's, [`super::fortran`] flang's runtime).

/// The behaviour of an external function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum External {
    /// Returns fresh memory (`malloc`, `calloc`, ...); `realloc` also keeps its argument's.
    Allocates,
    /// Only computes from its arguments: removable, writes nothing.
    Pure,
    /// Frees memory (`free`, `delete`): kept when it may free memory MPI was given (the
    /// recorder traces the release of such buffers), else removable; reads nothing through
    /// its pointer.
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
    /// statement object; a statement on an external unit reads and writes that unit's state
    /// (`OPEN` before `READ`); removable unless what it writes is live.
    IoStatement,
    /// A Fortran assignment (`_FortranAAssign*`) or an intrinsic computing into a result
    /// (`MATMUL`, `TRANSPOSE`, reductions with `DIM`): the first argument is the result, whose
    /// descriptor may get new memory (reallocation, Fortran 2003) and whose data is written;
    /// it reads what the other arguments reach; removable unless what it writes is live.
    FortranAssign,
    /// `ALLOCATE` (`_FortranAAllocatableAllocate`, `…PointerAllocate`): the descriptor (first
    /// argument) gets fresh memory; removable unless the descriptor or memory is live.
    FortranAllocate,
    /// Fills in or releases a descriptor (bounds, deallocation, nullification) or initialises
    /// what it describes, making no pointer: writes what its first argument reaches.
    FortranDescriptor,
    /// Pointer association, `MOVE_ALLOC`: the first descriptor takes the second's memory.
    FortranAssociate,
    /// A Fortran intrinsic writing what its arguments reach and making no pointer
    /// (`GET_ENVIRONMENT_VARIABLE`, `DATE_AND_TIME`): removable unless what it writes is live.
    FortranWrites,
    /// Reads and writes what its pointer arguments point to, making no pointer (OpenMP's
    /// static loop bounds): removable unless what it writes is live.
    Updates,
    /// C++ formatted output and the stream's bookkeeping (`std::ostream`'s members,
    /// `std::endl`): reads what its arguments reach, writes the stream's own state (what its
    /// first argument points to and, one level down, its buffers), never the program's
    /// arrays: removable unless that state is read live.
    StreamOutput,
    /// A `std::string` member (or a free function returning a string through its first
    /// parameter): reads what its arguments reach, writes its own string, which may get new
    /// memory and the buffers of the strings it is given (a move): removable unless that
    /// string is read live.
    StringMember,
    /// Anything else (may exit, read input, keep pointers): always kept.
    Unknown,
}
