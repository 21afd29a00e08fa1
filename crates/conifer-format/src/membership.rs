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

/// A leader as stored, relative to the rank's world rank, its rank in the communicator and
/// the membership before it, so that the common cases cost nothing beyond the flags and ranks
/// of consecutive communicators (the usual split into rows or blocks, keys in world order)
/// store the same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelativeLeader {
    /// The leader is `world - my_rank`.
    Consecutive,
    /// The leader is world rank 0.
    Zero,
    /// The leader is the previous membership's (a duplicate, an inter-communicator over its
    /// local communicator).
    Previous,
    /// The leader's world rank.
    At(u32),
    /// Not recorded.
    Unknown,
}

impl RelativeLeader {
    /// How `leader` is stored by the rank of world rank `world` at `my_rank`, after a
    /// membership whose leader was `previous`.
    pub fn of(leader: Option<u32>, world: i64, my_rank: i64, previous: Option<u32>) -> Self {
        match leader {
            Some(l) if i64::from(l) == world - my_rank => RelativeLeader::Consecutive,
            Some(0) => RelativeLeader::Zero,
            Some(l) if previous == Some(l) => RelativeLeader::Previous,
            Some(l) => RelativeLeader::At(l),
            None => RelativeLeader::Unknown,
        }
    }

    /// The leader's world rank, for the rank of world rank `world` at `my_rank`, after a
    /// membership whose leader was `previous`.
    pub fn resolve(self, world: i64, my_rank: i64, previous: Option<u32>) -> Option<u32> {
        match self {
            RelativeLeader::Consecutive => u32::try_from(world - my_rank).ok(),
            RelativeLeader::Zero => Some(0),
            RelativeLeader::Previous => previous,
            RelativeLeader::At(l) => Some(l),
            RelativeLeader::Unknown => None,
        }
    }

    /// Its code in a membership's flags (see [`put_rank_and_leader`]).
    fn code(self) -> u64 {
        match self {
            RelativeLeader::Consecutive => 0,
            RelativeLeader::At(_) => 1,
            RelativeLeader::Unknown => 2,
            RelativeLeader::Zero => 3,
            RelativeLeader::Previous => 4,
        }
    }
}

/// Leader codes in a membership's flags.
const LEADER_CODES: u64 = 5;

/// Appends a membership's rank (`None`: its world rank) and leader: one varint of flags,
/// `5 × (rank given) + leader code` (0 consecutive, 1 given, 2 unknown, 3 world rank 0, 4 the
/// previous membership's), then the zigzag rank when given, then the leader when given. A
/// membership of a communicator numbered like `MPI_COMM_WORLD` costs one byte.
pub fn put_rank_and_leader(out: &mut Vec<u8>, rank: Option<i64>, leader: RelativeLeader) {
    put_u64(
        out,
        LEADER_CODES * u64::from(rank.is_some()) + leader.code(),
    );
    if let Some(r) = rank {
        put_i64(out, r);
    }
    if let RelativeLeader::At(l) = leader {
        put_u64(out, l.into());
    }
}

/// Reads what [`put_rank_and_leader`] wrote; `None` when malformed.
pub fn read_rank_and_leader(r: &mut Reader) -> Option<(Option<i64>, RelativeLeader)> {
    let flags = r.u64()?;
    if flags >= 2 * LEADER_CODES {
        return None;
    }
    let rank = if flags >= LEADER_CODES {
        Some(r.i64()?)
    } else {
        None
    };
    let leader = match flags % LEADER_CODES {
        0 => RelativeLeader::Consecutive,
        1 => RelativeLeader::At(u32::try_from(r.u64()?).ok()?),
        2 => RelativeLeader::Unknown,
        3 => RelativeLeader::Zero,
        _ => RelativeLeader::Previous,
    };
    Some((rank, leader))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_leaders_round_trip_in_their_shortest_form() {
        // (world, my_rank, leader, previous leader) → the form chosen, bytes written.
        let cases = [
            (5, 5, Some(0), None, RelativeLeader::Consecutive, 1),
            (6, 2, Some(4), None, RelativeLeader::Consecutive, 2),
            (6, 3, Some(0), None, RelativeLeader::Zero, 2),
            (7, 3, Some(1), Some(1), RelativeLeader::Previous, 2),
            (7, 3, Some(1), None, RelativeLeader::At(1), 3),
            (7, 7, None, None, RelativeLeader::Unknown, 1),
        ];
        for (world, my_rank, leader, previous, form, bytes) in cases {
            let relative = RelativeLeader::of(leader, world, my_rank, previous);
            assert_eq!(relative, form, "{world} {my_rank} {leader:?}");
            let rank = (my_rank != world).then_some(my_rank);
            let mut out = Vec::new();
            put_rank_and_leader(&mut out, rank, relative);
            assert_eq!(out.len(), bytes, "{form:?}");
            let (back_rank, back) = read_rank_and_leader(&mut Reader::new(&out)).unwrap();
            assert_eq!((back_rank, back), (rank, relative));
            assert_eq!(back.resolve(world, my_rank, previous), leader);
        }
        assert_eq!(read_rank_and_leader(&mut Reader::new(&[10])), None);
    }
}
