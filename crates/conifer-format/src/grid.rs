//! Ranks of Cartesian communicators, recorded as displacements in the grid rather than as
//! differences of rank numbers. In a periodic grid the neighbour "one to the left" is rank−1 for
//! most ranks but rank+(n−1) at the edge; as a grid displacement it is (0,…,−1) for every rank,
//! so all ranks of a periodic stencil record the same signatures. MPI numbers the ranks of a
//! Cartesian communicator in row-major order of their coordinates, so rank ↔ coordinates needs
//! only the dimensions.

/// A Cartesian topology: extent and periodicity of each dimension.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Grid {
    /// Extent of each dimension (all at least 1).
    pub dims: Vec<i64>,
    /// Whether each dimension wraps around.
    pub periods: Vec<bool>,
}

impl Grid {
    /// A grid, or `None` when the description is not one (a zero extent, mismatched lengths).
    pub fn new(dims: Vec<i64>, periods: Vec<bool>) -> Option<Grid> {
        (dims.len() == periods.len() && dims.iter().all(|&d| d >= 1))
            .then_some(Grid { dims, periods })
    }

    /// Number of ranks.
    pub fn size(&self) -> Option<i64> {
        self.dims.iter().try_fold(1i64, |n, &d| n.checked_mul(d))
    }

    /// Coordinates of `rank` (row-major), or `None` outside the grid.
    pub fn coords(&self, rank: i64) -> Option<Vec<i64>> {
        if rank < 0 || rank >= self.size()? {
            return None;
        }
        let mut rest = rank;
        let mut coords = vec![0; self.dims.len()];
        for (c, &d) in coords.iter_mut().zip(&self.dims).rev() {
            *c = rest % d;
            rest /= d;
        }
        Some(coords)
    }

    /// The rank at `coords`, wrapping periodic dimensions; `None` off a non-periodic edge.
    pub fn rank(&self, coords: &[i64]) -> Option<i64> {
        if coords.len() != self.dims.len() {
            return None;
        }
        let mut rank = 0i64;
        for ((&c, &d), &periodic) in coords.iter().zip(&self.dims).zip(&self.periods) {
            let c = if periodic { c.rem_euclid(d) } else { c };
            if !(0..d).contains(&c) {
                return None;
            }
            rank = rank.checked_mul(d)?.checked_add(c)?;
        }
        Some(rank)
    }

    /// Per-dimension displacement from `from` to `to` coordinates, the shortest way round in
    /// periodic dimensions (ties go forward).
    pub fn offsets(&self, from: &[i64], to: &[i64]) -> Vec<i64> {
        let deltas: Vec<i64> = from.iter().zip(to).map(|(&a, &b)| b - a).collect();
        self.shortest(&deltas)
    }

    /// `offsets` with each periodic dimension's offset taken the shortest way round (ties go
    /// forward): the form [`Grid::offsets`] gives, whatever multiple of the extent was added.
    pub fn shortest(&self, offsets: &[i64]) -> Vec<i64> {
        offsets
            .iter()
            .zip(self.dims.iter().zip(&self.periods))
            .map(|(&delta, (&d, &periodic))| {
                if periodic {
                    let wrapped = delta.rem_euclid(d);
                    if wrapped > d / 2 {
                        wrapped - d
                    } else {
                        wrapped
                    }
                } else {
                    delta
                }
            })
            .collect()
    }

    /// Radix of each dimension's digit in [`Grid::displacement`]: offsets lie in `(-d, d)`.
    fn radices(&self) -> impl Iterator<Item = i64> + '_ {
        self.dims.iter().map(|&d| 2 * d)
    }

    /// Offsets packed into one integer (mixed radix, zero for no displacement), or `None` when
    /// the grid is too large for 63 bits.
    pub fn pack(&self, offsets: &[i64]) -> Option<i64> {
        let mut packed = 0i64;
        let mut zero = 0i64;
        for (&o, (radix, &d)) in offsets.iter().zip(self.radices().zip(&self.dims)) {
            packed = packed.checked_mul(radix)?.checked_add(o + d)?;
            zero = zero.checked_mul(radix)?.checked_add(d)?;
        }
        packed.checked_sub(zero)
    }

    /// The per-dimension offsets [`Grid::pack`] packed into `value`, or `None` when it packs
    /// none.
    pub fn unpack(&self, value: i64) -> Option<Vec<i64>> {
        let zero = self
            .radices()
            .zip(&self.dims)
            .try_fold(0i64, |z, (radix, &d)| z.checked_mul(radix)?.checked_add(d))?;
        let mut rest = value.checked_add(zero)?;
        if rest < 0 {
            return None;
        }
        let radices: Vec<i64> = self.radices().collect();
        let mut offsets = vec![0; self.dims.len()];
        for ((o, radix), &d) in offsets.iter_mut().zip(&radices).zip(&self.dims).rev() {
            *o = rest % radix - d;
            rest /= radix;
        }
        (rest == 0).then_some(offsets)
    }

    /// The displacement from rank `from` to rank `to` as one integer, or `None` when either is
    /// not in the grid.
    pub fn displacement(&self, from: i64, to: i64) -> Option<i64> {
        let offsets = self.offsets(&self.coords(from)?, &self.coords(to)?);
        self.pack(&offsets)
    }

    /// The rank at `displacement` from rank `from` (inverse of [`Grid::displacement`]).
    pub fn displaced(&self, from: i64, displacement: i64) -> Option<i64> {
        let here = self.coords(from)?;
        let offsets = self.unpack(displacement)?;
        let there: Vec<i64> = here.iter().zip(&offsets).map(|(a, o)| a + o).collect();
        self.rank(&there)
    }
}

/// The dimensions `MPI_Dims_create(n, d)` gives: as close to each other as the factors of `n`
/// allow, in non-increasing order.
pub fn dims_create(n: i64, d: usize) -> Vec<i64> {
    let mut factors = Vec::new();
    let mut m = n.max(1);
    let mut p = 2;
    while p * p <= m {
        while m % p == 0 {
            factors.push(p);
            m /= p;
        }
        p += 1;
    }
    if m > 1 {
        factors.push(m);
    }
    let mut dims = vec![1i64; d.max(1)];
    for f in factors.into_iter().rev() {
        let smallest = (0..dims.len()).min_by_key(|&i| dims[i]).unwrap_or(0);
        dims[smallest] *= f;
    }
    dims.sort_unstable_by(|a, b| b.cmp(a));
    dims
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(dims: &[i64], periods: &[bool]) -> Grid {
        Grid::new(dims.to_vec(), periods.to_vec()).unwrap()
    }

    #[test]
    fn dims_are_those_mpi_dims_create_gives() {
        // Values from the MPI standard's examples and Open MPI's output.
        assert_eq!(dims_create(6, 2), vec![3, 2]);
        assert_eq!(dims_create(7, 2), vec![7, 1]);
        assert_eq!(dims_create(12, 2), vec![4, 3]);
        assert_eq!(dims_create(32, 2), vec![8, 4]);
        assert_eq!(dims_create(64, 3), vec![4, 4, 4]);
        assert_eq!(dims_create(12, 3), vec![3, 2, 2]);
        assert_eq!(dims_create(1000, 2), vec![40, 25]);
        assert_eq!(dims_create(10_000, 2), vec![100, 100]);
        assert_eq!(dims_create(1000, 3), vec![10, 10, 10]);
    }

    #[test]
    fn coordinates_are_row_major() {
        let g = grid(&[2, 3, 4], &[false; 3]);
        assert_eq!(g.coords(0), Some(vec![0, 0, 0]));
        assert_eq!(g.coords(5), Some(vec![0, 1, 1]));
        assert_eq!(g.coords(23), Some(vec![1, 2, 3]));
        assert_eq!(g.coords(24), None);
        for r in 0..24 {
            assert_eq!(g.rank(&g.coords(r).unwrap()), Some(r));
        }
    }

    #[test]
    fn periodic_neighbours_have_one_displacement_on_every_rank() {
        for side in [3, 4, 5] {
            let g = grid(&[side, side, side], &[true; 3]);
            let n = side * side * side;
            for dim in 0..3 {
                for step in [-1, 1] {
                    let mut values = std::collections::HashSet::new();
                    for r in 0..n {
                        let mut c = g.coords(r).unwrap();
                        c[dim] += step;
                        let peer = g.rank(&c).unwrap();
                        let d = g.displacement(r, peer).unwrap();
                        assert_eq!(g.displaced(r, d), Some(peer));
                        values.insert(d);
                    }
                    assert_eq!(values.len(), 1, "side {side} dim {dim} step {step}");
                }
            }
        }
    }

    #[test]
    fn every_pair_round_trips_in_a_mixed_grid() {
        let g = grid(&[3, 2, 4], &[true, false, true]);
        for a in 0..24 {
            for b in 0..24 {
                let d = g.displacement(a, b).unwrap();
                assert_eq!(g.displaced(a, d), Some(b), "{a} -> {b}");
            }
            assert_eq!(g.displacement(a, a), Some(0));
        }
    }

    #[test]
    fn bad_input_gives_none() {
        assert!(Grid::new(vec![0, 2], vec![false, false]).is_none());
        assert!(Grid::new(vec![2], vec![false, true]).is_none());
        let g = grid(&[2, 2], &[false, false]);
        assert_eq!(g.displacement(0, 9), None);
        assert_eq!(g.displaced(0, i64::MAX), None);
        assert_eq!(g.displaced(0, i64::MIN), None);
        // Off the non-periodic edge.
        let right = g.displacement(0, 1).unwrap();
        assert_eq!(g.displaced(1, right), None);
        let huge = grid(&[1 << 40, 1 << 40], &[true, true]);
        assert_eq!(huge.displacement(0, 1), None);
    }
}
