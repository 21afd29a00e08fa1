//! The communicators a rank belongs to, as its record and the stored trace keep them.

use crate::grid::Grid;
use crate::varint::{put_i64, put_u64, Reader};

/// A communicator a rank belongs to: its recorded handle (encoded value bytes), the rank's
/// position in it and which communicator of that handle it is.
///
/// A handle is agreed among a communicator's members only, so disjoint communicators (the
/// parts of one `MPI_Comm_split`) share it. The recorder never gives one rank the same handle
/// for two communicators with different members, so the handle plus the world rank of local
/// rank 0 (`leader`) names exactly one communicator of the run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Membership {
    /// The communicator as recorded in signatures (an encoded handle value).
    pub comm: Vec<u8>,
    /// The rank's rank in it.
    pub my_rank: i64,
    /// Its Cartesian topology, if it has one (ranks in it are recorded as grid displacements).
    pub grid: Option<Grid>,
    /// The world rank of its local rank 0 (of the local group, for an inter-communicator);
    /// `None` when the recorder could not tell.
    pub leader: Option<u32>,
}

/// A leader as stored, relative to the rank's world rank and its rank in the communicator,
/// so ranks of consecutive communicators (the usual split into rows or blocks, keys in world
/// order) store the same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelativeLeader {
    /// The leader is `world - my_rank`.
    Consecutive,
    /// The leader's world rank.
    At(u32),
    /// Not recorded.
    Unknown,
}

impl RelativeLeader {
    /// How `leader` is stored by the rank of world rank `world` at `my_rank`.
    pub fn of(leader: Option<u32>, world: i64, my_rank: i64) -> RelativeLeader {
        match leader {
            Some(l) if i64::from(l) == world - my_rank => RelativeLeader::Consecutive,
            Some(l) => RelativeLeader::At(l),
            None => RelativeLeader::Unknown,
        }
    }

    /// The leader's world rank, for the rank of world rank `world` at `my_rank`.
    pub fn resolve(self, world: i64, my_rank: i64) -> Option<u32> {
        match self {
            RelativeLeader::Consecutive => u32::try_from(world - my_rank).ok(),
            RelativeLeader::At(l) => Some(l),
            RelativeLeader::Unknown => None,
        }
    }

    /// Appends it: 0, 1 then the leader, or 2.
    pub fn put(self, out: &mut Vec<u8>) {
        match self {
            RelativeLeader::Consecutive => put_u64(out, 0),
            RelativeLeader::At(l) => {
                put_u64(out, 1);
                put_u64(out, l.into());
            }
            RelativeLeader::Unknown => put_u64(out, 2),
        }
    }

    /// Reads what [`RelativeLeader::put`] wrote; `None` when malformed.
    pub fn read(r: &mut Reader) -> Option<RelativeLeader> {
        match r.u64()? {
            0 => Some(RelativeLeader::Consecutive),
            1 => u32::try_from(r.u64()?).ok().map(RelativeLeader::At),
            2 => Some(RelativeLeader::Unknown),
            _ => None,
        }
    }
}

/// Appends an optional grid: 0, or 1 then the dimension count and each (extent, periodic).
pub fn put_grid(out: &mut Vec<u8>, grid: Option<&Grid>) {
    match grid {
        None => put_u64(out, 0),
        Some(g) => {
            put_u64(out, 1);
            put_u64(out, g.dims.len() as u64);
            for (&d, &p) in g.dims.iter().zip(&g.periods) {
                put_i64(out, d);
                put_u64(out, p.into());
            }
        }
    }
}

/// Reads what [`put_grid`] wrote: `Some(None)` for no grid, `None` when malformed.
pub fn read_grid(r: &mut Reader) -> Option<Option<Grid>> {
    match r.u64()? {
        0 => Some(None),
        1 => {
            let n = r.count()?;
            let (mut dims, mut periods) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for _ in 0..n {
                dims.push(r.i64()?);
                periods.push(r.u64()? != 0);
            }
            Grid::new(dims, periods).map(Some)
        }
        _ => None,
    }
}
