//! The communicators a rank belongs to, as its record and the stored trace keep them.

use crate::grid::Grid;
use crate::varint::{put_i64, put_u64, Reader};

/// A communicator a rank belongs to: its recorded handle (encoded value bytes) and the rank's
/// position in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Membership {
    /// The communicator as recorded in signatures (an encoded handle value).
    pub comm: Vec<u8>,
    /// The rank's rank in it.
    pub my_rank: i64,
    /// Its Cartesian topology, if it has one (ranks in it are recorded as grid displacements).
    pub grid: Option<Grid>,
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
