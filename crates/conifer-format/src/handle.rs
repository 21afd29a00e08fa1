//! MPI handles as recorded: their kinds, which object a handle argument denotes, and the ids
//! of derived communicators and requests.

/// The kinds of MPI handles, each with its own id space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HandleKind {
    /// `MPI_Comm`: ids agreed by all members.
    Comm,
    /// `MPI_Datatype`.
    Datatype,
    /// `MPI_Op`.
    Op,
    /// `MPI_Group`.
    Group,
    /// `MPI_Info`.
    Info,
    /// `MPI_Errhandler`.
    Errhandler,
    /// `MPI_Request`: ids from a pool per creating call signature.
    Request,
    /// `MPI_Win`.
    Win,
    /// `MPI_File`.
    File,
    /// `MPI_Message`.
    Message,
    /// `MPI_Session`.
    Session,
}

impl HandleKind {
    /// Every kind, in code order.
    pub const ALL: [HandleKind; 11] = [
        HandleKind::Comm,
        HandleKind::Datatype,
        HandleKind::Op,
        HandleKind::Group,
        HandleKind::Info,
        HandleKind::Errhandler,
        HandleKind::Request,
        HandleKind::Win,
        HandleKind::File,
        HandleKind::Message,
        HandleKind::Session,
    ];

    /// Short prefix of symbolic ids in text (`comm3`, `type2`, `req1`).
    pub fn prefix(self) -> &'static str {
        match self {
            HandleKind::Comm => "comm",
            HandleKind::Datatype => "type",
            HandleKind::Op => "op",
            HandleKind::Group => "group",
            HandleKind::Info => "info",
            HandleKind::Errhandler => "errh",
            HandleKind::Request => "req",
            HandleKind::Win => "win",
            HandleKind::File => "file",
            HandleKind::Message => "msg",
            HandleKind::Session => "session",
        }
    }

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<HandleKind> {
        HandleKind::ALL.get(code as usize).copied()
    }
}

/// First id of the communicators made by `MPI_Comm_idup`, whose ids derive from their parent's
/// (see [`derived_comm_id`]): above agreed ids, below the ids given without agreement.
pub const DERIVED_COMM_BASE: u32 = 0x8000_0000;

/// The id of the `k`-th `MPI_Comm_idup` duplicate of `parent`: the parent's id (predefined
/// communicators 0-2, agreed ids from 3) in bits 14-29, `k` in bits 0-13; `None` beyond that
/// space. Every member computes the same id, since all duplicate a communicator in one order.
pub fn derived_comm_id(parent: HandleRef, k: u32) -> Option<u32> {
    let parent_index = match parent {
        HandleRef::Named(code) => u32::from(code),
        HandleRef::Id(id) if id < 0xFFFF - 3 => id + 3,
        _ => return None,
    };
    (k < 1 << 14 && parent_index < 1 << 16).then_some(DERIVED_COMM_BASE | parent_index << 14 | k)
}

/// Request ids carry their pool (the creating call signature) in the bits above these and
/// their index within the pool in these; decoded as `req<pool>.<index>`.
pub const REQUEST_LOCAL_BITS: u32 = 12;

/// Which object a handle argument denotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HandleRef {
    /// A predefined object: index into [`crate::predefined::names`] of the kind.
    Named(u16),
    /// A user-created object: its symbolic id.
    Id(u32),
    /// A handle Conifer never saw created (recorded as such rather than guessed).
    Unknown,
}
