//! Rank values: how a peer, root or other rank argument is recorded (relative to the caller,
//! absolute, special, a grid displacement) or stored after the merge chose a code that makes
//! the ranks agree (modular, xor, transpose, torus, ring, fixed), with their binary and text forms.

use crate::grid::Grid;
use crate::varint::{put_i64, Reader};
use std::fmt;

/// Where the caller stands in a call's communicator: what relative ranks and coordinates are
/// restored against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Position<'a> {
    /// The caller's rank in the communicator.
    pub rank: i64,
    /// The communicator's Cartesian topology, if it has one.
    pub grid: Option<&'a Grid>,
}

/// A rank argument, relative to the caller's rank in the call's communicator where that is
/// meaningful, so that every rank of a regular pattern records the same value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rank {
    /// Peer = caller's rank + offset.
    Relative(i64),
    /// A rank not relative to the caller (inter-communicator remote ranks, group ranks).
    Absolute(i64),
    /// `MPI_ANY_SOURCE`.
    AnySource,
    /// `MPI_PROC_NULL`.
    ProcNull,
    /// `MPI_ROOT`.
    Root,
    /// `MPI_UNDEFINED`.
    Undefined,
    /// Peer of a Cartesian communicator: its displacement in the grid from the caller (see
    /// [`Grid::displacement`]).
    Grid(i64),
    /// Peer = (caller + `d`) mod `n`: a ring's neighbours, wrap-around included. Chosen at the
    /// merge (see `conifer_write::rank_codes`), like the codes below.
    Modular {
        /// The modulus (the communicator's size).
        n: i64,
        /// The displacement, in `0..n`.
        d: i64,
    },
    /// Peer = caller xor `k`: butterflies and recursive doubling.
    Xor(i64),
    /// Peer = the caller's transpose on a `q` × `q` grid numbered row-major:
    /// (caller mod q)·q + caller div q.
    Transpose(i64),
    /// Peer on a periodic `rows` × `cols` torus numbered row-major, displaced by (`dy`, `dx`)
    /// from the caller (a grid computed with arithmetic on a plain communicator).
    Torus {
        /// Rows of the torus.
        rows: i64,
        /// Columns of the torus.
        cols: i64,
        /// Row displacement, in `0..rows`.
        dy: i64,
        /// Column displacement, in `0..cols`.
        dx: i64,
    },
    /// The same rank whoever calls ("everyone sends to rank 0"): recorded relative, stored
    /// absolute because that makes the ranks agree.
    Fixed(i64),
    /// Peer `step` places along one periodic dimension of a grid numbered row-major, the
    /// dimension of `size` places whose ranks lie `stride` apart: with x = (caller div
    /// stride) mod size, the peer is caller + ((x + step) mod size − x)·stride. A halo
    /// exchange on a periodic grid computed by hand (NPB MG's 3D grid), wrap-around included.
    Ring {
        /// Ranks between neighbours along the dimension (the product of the faster ones).
        stride: i64,
        /// Places along the dimension.
        size: i64,
        /// Places moved, in `0..size`.
        step: i64,
    },
}

impl Rank {
    /// True for the named values (`MPI_ANY_SOURCE`, `MPI_PROC_NULL`, `MPI_ROOT`,
    /// `MPI_UNDEFINED`), which denote no peer.
    pub fn is_special(self) -> bool {
        matches!(
            self,
            Rank::AnySource | Rank::ProcNull | Rank::Root | Rank::Undefined
        )
    }

    /// The peer this code names for a caller of rank `me` in the value's communicator, for the
    /// codes that depend on the caller only through its rank (not [`Rank::Grid`], not
    /// [`Rank::Absolute`] or the special values): `None` for the others.
    pub fn peer_of(self, me: i64) -> Option<i64> {
        match self {
            Rank::Relative(d) => Some(me + d),
            Rank::Fixed(a) => Some(a),
            Rank::Modular { n, d } => (n > 0).then(|| (me + d).rem_euclid(n)),
            Rank::Xor(k) => Some(me ^ k),
            Rank::Transpose(q) => (q > 0).then(|| me.rem_euclid(q) * q + me.div_euclid(q)),
            Rank::Torus { rows, cols, dy, dx } => (rows > 0 && cols > 0).then(|| {
                let (y, x) = (me.div_euclid(cols), me.rem_euclid(cols));
                (y + dy).rem_euclid(rows) * cols + (x + dx).rem_euclid(cols)
            }),
            Rank::Ring { stride, size, step } => (stride > 0 && size > 0).then(|| {
                let x = me.div_euclid(stride).rem_euclid(size);
                me + ((x + step).rem_euclid(size) - x) * stride
            }),
            _ => None,
        }
    }

    /// The code as the recorder wrote it: a peer named by a merge-chosen code becomes
    /// relative to the caller `me` again (other codes are returned unchanged).
    pub fn as_recorded(self, me: i64) -> Rank {
        match self {
            Rank::Relative(_) | Rank::Absolute(_) | Rank::Grid(_) => self,
            r if r.is_special() => r,
            r => r.peer_of(me).map_or(r, |peer| Rank::Relative(peer - me)),
        }
    }
}

impl Rank {
    pub fn encode(self, out: &mut Vec<u8>) {
        match self {
            Rank::Relative(d) => {
                out.push(0);
                put_i64(out, d)
            }
            Rank::Absolute(r) => {
                out.push(1);
                put_i64(out, r)
            }
            Rank::AnySource => out.push(2),
            Rank::ProcNull => out.push(3),
            Rank::Root => out.push(4),
            Rank::Undefined => out.push(5),
            Rank::Grid(d) => {
                out.push(6);
                put_i64(out, d)
            }
            Rank::Modular { n, d } => {
                out.push(7);
                put_i64(out, n);
                put_i64(out, d)
            }
            Rank::Xor(k) => {
                out.push(8);
                put_i64(out, k)
            }
            Rank::Transpose(q) => {
                out.push(9);
                put_i64(out, q)
            }
            Rank::Torus { rows, cols, dy, dx } => {
                out.push(10);
                for v in [rows, cols, dy, dx] {
                    put_i64(out, v);
                }
            }
            Rank::Fixed(a) => {
                out.push(11);
                put_i64(out, a)
            }
            Rank::Ring { stride, size, step } => {
                out.push(12);
                for v in [stride, size, step] {
                    put_i64(out, v);
                }
            }
        }
    }

    pub fn decode(r: &mut Reader) -> Option<Rank> {
        Some(match r.byte()? {
            0 => Rank::Relative(r.i64()?),
            1 => Rank::Absolute(r.i64()?),
            2 => Rank::AnySource,
            3 => Rank::ProcNull,
            4 => Rank::Root,
            5 => Rank::Undefined,
            6 => Rank::Grid(r.i64()?),
            7 => Rank::Modular {
                n: r.i64()?,
                d: r.i64()?,
            },
            8 => Rank::Xor(r.i64()?),
            9 => Rank::Transpose(r.i64()?),
            10 => Rank::Torus {
                rows: r.i64()?,
                cols: r.i64()?,
                dy: r.i64()?,
                dx: r.i64()?,
            },
            11 => Rank::Fixed(r.i64()?),
            12 => Rank::Ring {
                stride: r.i64()?,
                size: r.i64()?,
                step: r.i64()?,
            },
            _ => return None,
        })
    }
}

pub fn fmt_rank(f: &mut fmt::Formatter<'_>, rank: Rank, at: Option<Position>) -> fmt::Result {
    if let Some(peer) = at.and_then(|me| rank.peer_of(me.rank)) {
        return write!(f, "{peer}");
    }
    match (rank, at) {
        (Rank::Relative(d), _) => write!(f, "{d:+}"),
        (Rank::Fixed(a), _) => write!(f, "{a}"),
        (Rank::Modular { n, d }, _) => write!(f, "%{n}{d:+}"),
        (Rank::Xor(k), _) => write!(f, "^{k}"),
        (Rank::Transpose(q), _) => write!(f, "T{q}"),
        (Rank::Torus { rows, cols, dy, dx }, _) => write!(f, "torus{rows}x{cols}{dy:+}{dx:+}"),
        (Rank::Ring { stride, size, step }, _) => write!(f, "ring{size}/{stride}{step:+}"),
        (Rank::Grid(d), at) => match at.and_then(|me| me.grid?.displaced(me.rank, d)) {
            Some(rank) => write!(f, "{rank}"),
            None => write!(f, "@{d}"),
        },
        (Rank::Absolute(r), _) => write!(f, "{r}"),
        (Rank::AnySource, _) => f.write_str("MPI_ANY_SOURCE"),
        (Rank::ProcNull, _) => f.write_str("MPI_PROC_NULL"),
        (Rank::Root, _) => f.write_str("MPI_ROOT"),
        (Rank::Undefined, _) => f.write_str("MPI_UNDEFINED"),
    }
}
