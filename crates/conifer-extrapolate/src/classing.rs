//! How ranks are put into classes by their place in the process grid, and the quantities a
//! rank's fields are fitted against (its *features*: P, its rank, the grid's dimensions, its
//! coordinates, log2 P).

use conifer_format::grid::dims_create;

/// A way of putting the ranks of a run into classes whose call sequences are alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classing {
    /// One class: every rank alike.
    Uniform,
    /// Ranks on a line: the first, the last and those between.
    Line,
    /// Ranks on the `d`-dimensional grid `MPI_Dims_create(P, d)` gives, numbered row-major:
    /// per dimension, first, last or between (corners, edges, faces, interior).
    Grid(usize),
}

/// The classings tried, in order: the first under which every call site fits is used.
pub const CLASSINGS: [Classing; 4] = [
    Classing::Uniform,
    Classing::Line,
    Classing::Grid(2),
    Classing::Grid(3),
];

/// Names of the features, in the order fits try them.
pub const FEATURES: [&str; 15] = [
    "rank",
    "P",
    "cols",
    "rows",
    "d3[2]",
    "d3[1]",
    "d3[0]",
    "d3[1]·d3[2]",
    "x",
    "y",
    "x3",
    "y3",
    "z3",
    "rank mod d3[1]·d3[2]",
    "log2 P",
];

/// A rank's class: per grid dimension (one for a line, none when uniform), 0 first, 1
/// between, 2 last, 3 both first and last (an extent of 1).
pub type ClassKey = Vec<u8>;

/// `log2 n` when `n` is a power of two.
fn exact_log2(n: i64) -> Option<i64> {
    (n > 0 && n & (n - 1) == 0).then(|| i64::from(n.trailing_zeros()))
}

/// Row-major coordinates of `rank` on `dims`.
fn coords(dims: &[i64], rank: i64) -> Vec<i64> {
    let mut out = vec![0; dims.len()];
    let mut r = rank;
    for i in (0..dims.len()).rev() {
        out[i] = r % dims[i];
        r /= dims[i];
    }
    out
}

fn place(c: i64, extent: i64) -> u8 {
    match (c == 0, c == extent - 1) {
        (true, true) => 3,
        (true, false) => 0,
        (false, true) => 2,
        (false, false) => 1,
    }
}

impl Classing {
    /// The class of `rank` among `p` ranks and its features (see [`FEATURES`]).
    pub fn classify(self, p: i64, rank: i64) -> (ClassKey, Vec<Option<i64>>) {
        let d2 = dims_create(p, 2);
        let d3 = dims_create(p, 3);
        let c2 = coords(&d2, rank);
        let c3 = coords(&d3, rank);
        let key = match self {
            Classing::Uniform => Vec::new(),
            Classing::Line => vec![place(rank, p)],
            Classing::Grid(d) => {
                let dims = dims_create(p, d);
                coords(&dims, rank)
                    .iter()
                    .zip(&dims)
                    .map(|(&c, &e)| place(c, e))
                    .collect()
            }
        };
        let features = vec![
            Some(rank),
            Some(p),
            Some(d2[1]),
            Some(d2[0]),
            Some(d3[2]),
            Some(d3[1]),
            Some(d3[0]),
            Some(d3[1] * d3[2]),
            Some(c2[1]),
            Some(c2[0]),
            Some(c3[2]),
            Some(c3[1]),
            Some(c3[0]),
            Some(rank % (d3[1] * d3[2])),
            exact_log2(p),
        ];
        (key, features)
    }

    /// The features in groups, tried group by group (see [`crate::fit::fit`]): the rank and
    /// P; then the grid of the classing's own dimension, then the other; then log2 P. A
    /// classing of no grid of its own (all alike, a line) tries the 3-D grid's features
    /// before the 2-D one's when the program's own Cartesian grids have three dimensions
    /// (`grid_dims`, 0 without one): small runs cannot tell a 3-D grid's largest extent from
    /// the 2-D grid's columns (2, 3, 3, 3 at 8, 12, 18 and 27 ranks).
    pub fn feature_groups(self, grid_dims: usize) -> Vec<Vec<usize>> {
        let plain = vec![0, 1];
        let two = vec![2, 3, 8, 9];
        let three = vec![4, 5, 6, 7, 10, 11, 12, 13];
        let log = vec![14];
        match self {
            Classing::Grid(3) => vec![plain, three, two, log],
            Classing::Uniform | Classing::Line if grid_dims == 3 => {
                vec![plain, three, two, log]
            }
            _ => vec![plain, two, three, log],
        }
    }

    /// A class in words ("first × between").
    pub fn describe(self, key: &[u8]) -> String {
        if key.is_empty() {
            return "every rank".into();
        }
        let word = |k: &u8| match k {
            0 => "first",
            1 => "between",
            2 => "last",
            _ => "only",
        };
        let places: Vec<&str> = key.iter().map(word).collect();
        match self {
            Classing::Line => format!("ranks {} on the line", places[0]),
            _ => format!("grid position {}", places.join(" × ")),
        }
    }

    /// The classing in words.
    pub fn name(self) -> String {
        match self {
            Classing::Uniform => "all ranks alike".into(),
            Classing::Line => "ranks on a line (first, between, last)".into(),
            Classing::Grid(d) => format!("{d}-D process grid (MPI_Dims_create)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_edges_and_interior_of_a_grid() {
        let g = Classing::Grid(2);
        // 3 × 3: rank 4 is the centre, rank 1 the top edge, rank 8 the bottom right corner.
        assert_eq!(g.classify(9, 4).0, vec![1, 1]);
        assert_eq!(g.classify(9, 1).0, vec![0, 1]);
        assert_eq!(g.classify(9, 8).0, vec![2, 2]);
        assert_eq!(Classing::Line.classify(5, 4).0, vec![2]);
    }
}
