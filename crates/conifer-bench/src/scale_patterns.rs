//! The communication patterns of the scale suite: for any rank count P and rank r, the MPI
//! calls rank r of that program makes, and the communicators it belongs to. Each pattern is a
//! well-known kernel reduced to its communication: 2D/3D halo exchanges with and without
//! periodic edges, CG's transpose exchange, an MG V-cycle and a master–worker loop.

use crate::scale_calls::{peer, user_comm, world, Call, Calls};
use conifer_format::grid::{dims_create, Grid};
use conifer_format::rank_record::Membership;
use conifer_format::value::{Rank, Status, Value};

/// A generated program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// 5-point halo exchange on MPI_COMM_WORLD, neighbours computed by hand, edges PROC_NULL.
    Stencil2d,
    /// 5-point halo exchange on a periodic 2D Cartesian communicator.
    Stencil2dPeriodic,
    /// 7-point halo exchange on MPI_COMM_WORLD, edges PROC_NULL.
    Stencil3d,
    /// 7-point halo exchange on a periodic 3D Cartesian communicator.
    Stencil3dPeriodic,
    /// CG: the q × q ranks of a split communicator swap blocks with their transpose, then
    /// every rank joins two dot-product reductions.
    CgTranspose,
    /// MG: a V-cycle on a 3D grid; level l keeps the ranks whose coordinates are multiples of
    /// 2^l, and their halos shrink fourfold per level.
    MgVcycle,
    /// Master–worker: rank 0 hands out tasks, workers return results of irregular sizes.
    MasterWorker,
}

/// Every pattern, in report order.
pub const ALL: [Pattern; 7] = [
    Pattern::Stencil2d,
    Pattern::Stencil2dPeriodic,
    Pattern::Stencil3d,
    Pattern::Stencil3dPeriodic,
    Pattern::CgTranspose,
    Pattern::MgVcycle,
    Pattern::MasterWorker,
];

/// Doubles in one face of a halo (a 32 × 32 face: 8 KiB... kept eager: 64 doubles).
pub const FACE: i64 = 64;
/// Doubles of CG's transpose block.
pub const BLOCK: i64 = 128;
/// Computation of one iteration (ns).
pub const COMPUTE_NS: f64 = 20_000.0;
/// Tasks each worker does.
pub const TASKS: u32 = 2;
/// Symbolic id of the communicator a pattern creates.
const COMM_ID: u32 = 1;

impl Pattern {
    /// Name in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Stencil2d => "stencil2d",
            Pattern::Stencil2dPeriodic => "stencil2d periodic",
            Pattern::Stencil3d => "stencil3d",
            Pattern::Stencil3dPeriodic => "stencil3d periodic",
            Pattern::CgTranspose => "CG transpose",
            Pattern::MgVcycle => "MG V-cycle",
            Pattern::MasterWorker => "master-worker",
        }
    }

    /// Regular patterns: every rank's calls are one of a bounded number of behaviours, so the
    /// trace should not grow with P.
    pub fn regular(self) -> bool {
        self != Pattern::MasterWorker
    }

    /// The Cartesian grid the pattern lays its `p` ranks on (for the stencils and MG).
    pub fn grid(self, p: i64) -> Grid {
        let (ndims, periodic) = match self {
            Pattern::Stencil2d => (2, false),
            Pattern::Stencil2dPeriodic => (2, true),
            Pattern::Stencil3dPeriodic => (3, true),
            _ => (3, false),
        };
        Grid::new(dims_create(p, ndims), vec![periodic; ndims]).expect("dims are positive")
    }

    /// Rank `r`'s calls over `iters` iterations in a run of `p` ranks.
    pub fn calls(self, p: i64, r: i64, iters: u32) -> Vec<Call> {
        let mut c = Calls::default();
        c.start(p);
        match self {
            Pattern::Stencil2d | Pattern::Stencil3d => {
                halo_loop(&mut c, &self.grid(p), r, iters, &world(), false)
            }
            Pattern::Stencil2dPeriodic | Pattern::Stencil3dPeriodic => {
                let grid = self.grid(p);
                c.cart_create(&grid, COMM_ID);
                halo_loop(&mut c, &grid, r, iters, &user_comm(COMM_ID), true)
            }
            Pattern::CgTranspose => cg(&mut c, p, r, iters),
            Pattern::MgVcycle => mg(&mut c, &self.grid(p), r, iters),
            Pattern::MasterWorker => master_worker(&mut c, p, r),
        }
        c.finish();
        c.calls
    }

    /// The communicators rank `r` belongs to, as the recorder lists them.
    pub fn comms(self, p: i64, r: i64) -> Vec<Membership> {
        let named = |i: u16, my_rank, leader| Membership {
            comm: encoded(&Value::Handle(
                conifer_format::value::HandleKind::Comm,
                conifer_format::value::HandleRef::Named(i),
            )),
            my_rank,
            grid: None,
            leader,
        };
        let leader_of = |r: i64| u32::try_from(r).ok();
        let mut comms = vec![
            named(0, 0, None),
            named(1, r, Some(0)),
            named(2, 0, leader_of(r)),
        ];
        let created = |my_rank, grid| Membership {
            comm: encoded(&user_comm(COMM_ID)),
            my_rank,
            grid,
            leader: Some(0),
        };
        match self {
            Pattern::Stencil2dPeriodic | Pattern::Stencil3dPeriodic => {
                comms.push(created(r, Some(self.grid(p))))
            }
            Pattern::CgTranspose if r < cg_side(p).pow(2) => comms.push(created(r, None)),
            _ => {}
        }
        comms
    }
}

fn encoded(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    v.encode(&mut out);
    out
}

/// The neighbour of `r` one step of `stride` along dimension `dim`, either way.
fn neighbour(grid: &Grid, r: i64, dim: usize, delta: i64) -> Option<i64> {
    let mut coords = grid.coords(r)?;
    coords[dim] += delta;
    grid.rank(&coords)
}

/// Posts receives and sends to both neighbours in every dimension at distance `stride`, then
/// waits: one halo exchange of `count` doubles per face.
fn halo(c: &mut Calls, grid: &Grid, r: i64, stride: i64, count: i64, comm: &Value, cart: bool) {
    let on_grid = cart.then_some(grid);
    let faces: Vec<(usize, i64)> = (0..grid.dims.len())
        .flat_map(|d| [(d, -stride), (d, stride)])
        .collect();
    for (i, &(dim, delta)) in faces.iter().enumerate() {
        let from = peer(r, neighbour(grid, r, dim, delta), on_grid);
        c.irecv(8 * count * i as i64, count, from, (i ^ 1) as i64, comm);
    }
    for (i, &(dim, delta)) in faces.iter().enumerate() {
        let to = peer(r, neighbour(grid, r, dim, delta), on_grid);
        c.isend(8 * count * (i + 8) as i64, count, to, i as i64, comm);
    }
    c.waitall();
}

fn halo_loop(c: &mut Calls, grid: &Grid, r: i64, iters: u32, comm: &Value, cart: bool) {
    for _ in 0..iters {
        halo(c, grid, r, 1, FACE, comm, cart);
        c.allreduce(comm, COMPUTE_NS);
    }
}

/// Side of CG's square process grid: the largest q with q² ≤ p.
pub fn cg_side(p: i64) -> i64 {
    let mut q = (p as f64).sqrt() as i64;
    while q * q > p {
        q -= 1;
    }
    while (q + 1) * (q + 1) <= p {
        q += 1;
    }
    q
}

fn cg(c: &mut Calls, p: i64, r: i64, iters: u32) {
    let q = cg_side(p);
    let member = r < q * q;
    c.split(member.then_some(0), COMM_ID);
    let comm = user_comm(COMM_ID);
    for _ in 0..iters {
        if member {
            let partner = (r % q) * q + r / q;
            let rel = Value::Rank(Rank::Relative(partner - r));
            c.irecv(0, BLOCK, rel.clone(), 3, &comm);
            c.isend(8 * BLOCK, BLOCK, rel, 3, &comm);
            c.waitall();
        }
        c.allreduce(&world(), COMPUTE_NS);
        c.allreduce(&world(), 100.0);
    }
}

/// Levels of the V-cycle on `grid`: while every extent still holds two active ranks.
pub fn mg_levels(grid: &Grid) -> u32 {
    let smallest = *grid.dims.iter().min().expect("a dimension");
    (smallest.max(2) as f64).log2().floor() as u32
}

fn mg(c: &mut Calls, grid: &Grid, r: i64, iters: u32) {
    let levels = mg_levels(grid);
    let coords = grid.coords(r).expect("rank on the grid");
    let active = |l: u32| coords.iter().all(|&x| x % (1 << l) == 0);
    let count = |l: u32| (FACE >> (2 * l)).max(1);
    for _ in 0..iters {
        let down = 0..levels;
        for l in down.clone().chain(down.rev()) {
            if active(l) {
                halo(c, grid, r, 1 << l, count(l), &world(), false);
            }
        }
        c.allreduce(&world(), COMPUTE_NS);
    }
}

/// Doubles in worker `w`'s result: irregular, between 1 and 97 blocks of 8.
pub fn result_count(w: i64) -> i64 {
    8 * (1 + (w * 2_654_435_761) % 97)
}

fn master_worker(c: &mut Calls, p: i64, r: i64) {
    let comm = world();
    if r == 0 {
        for task in 0..i64::from(TASKS) {
            for w in 1..p {
                c.send(4, Value::Rank(Rank::Relative(w)), 1, &comm, 100.0);
            }
            for w in 1..p {
                let status = Status {
                    source: Rank::Relative(w),
                    tag: 2,
                    error: 0,
                    bytes: 8 * result_count(w + task),
                };
                let any = Value::Rank(Rank::AnySource);
                c.recv(800, any, 2, &comm, status);
            }
        }
    } else {
        let master = Value::Rank(Rank::Relative(-r));
        for task in 0..i64::from(TASKS) {
            let status = Status {
                source: Rank::Relative(-r),
                tag: 1,
                error: 0,
                bytes: 32,
            };
            c.recv(4, master.clone(), 1, &comm, status);
            c.send(result_count(r + task), master.clone(), 2, &comm, COMPUTE_NS);
        }
    }
    c.allreduce(&comm, 100.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cg_sides_are_the_largest_square_below() {
        assert_eq!(cg_side(1000), 31);
    }
}
