//! Rank and coordinate arguments: recorded relative to the caller, so every rank of a regular
//! pattern records the same value. Ranks of a Cartesian communicator become displacements in
//! its grid (see [`conifer_format::grid`]), which also makes the wrap-around neighbours of a
//! periodic grid look like every other neighbour; coordinates become offsets from the caller's.

use super::{AsI64, Call};
use crate::mpi::*;
use conifer_format::value::{encode_coords, encode_rank, Rank};
use std::sync::LazyLock;

/// `CONIFER_RELATIVE_TAGS=1`: tags recorded relative to the caller's rank.
static RELATIVE_TAGS: LazyLock<bool> =
    LazyLock::new(|| std::env::var("CONIFER_RELATIVE_TAGS").is_ok_and(|v| v == "1"));

/// MPI's special rank values, read once.
struct SpecialRanks {
    any_source: i64,
    proc_null: i64,
    root: i64,
    undefined: i64,
}

static SPECIAL_RANKS: LazyLock<SpecialRanks> = LazyLock::new(|| {
    // SAFETY: the shim functions return compile-time constants.
    unsafe {
        SpecialRanks {
            any_source: conifer_any_source().into(),
            proc_null: conifer_proc_null().into(),
            root: conifer_root().into(),
            undefined: conifer_undefined().into(),
        }
    }
});

impl Call<'_> {
    /// A rank of `comm` as recorded: special values by name, peers in a Cartesian communicator
    /// as grid displacements, other intra-communicator ranks relative to the caller's.
    pub(super) fn rank_value(&mut self, v: i64, comm: Option<u64>) -> Rank {
        let special = &*SPECIAL_RANKS;
        match v {
            v if v == special.any_source => return Rank::AnySource,
            v if v == special.proc_null => return Rank::ProcNull,
            v if v == special.root => return Rank::Root,
            v if v == special.undefined => return Rank::Undefined,
            _ => {}
        }
        let Some(comm) = comm else {
            return Rank::Absolute(v);
        };
        let Some(comms) = self.st().comms.as_ref() else {
            return Rank::Absolute(v);
        };
        match comms.get(comm) {
            Some(i) if i.remote_size.is_none() => {
                let on_grid = if i.cartesian {
                    comms.grid(comm).and_then(|g| g.displacement(i.my_rank, v))
                } else {
                    None
                };
                on_grid.map_or(Rank::Relative(v - i.my_rank), Rank::Grid)
            }
            // A rank of the remote group of an inter-communicator, relative to the caller's
            // rank in the local group: partners of the same index agree.
            Some(i) => Rank::Relative(v - i.my_rank),
            None => Rank::Absolute(v),
        }
    }

    /// A message tag: by value, or with `CONIFER_RELATIVE_TAGS=1` relative to the caller's rank
    /// in `comm` (so codes that tag by rank record one signature on every rank).
    pub fn tag(&mut self, v: i64, comm: Option<u64>) {
        if !*RELATIVE_TAGS || v < 0 {
            return self.int(v); // MPI_ANY_TAG and other negative values stay as they are
        }
        self.relative_int(v, comm);
    }

    /// An integer stored relative to the caller's rank in the intra-communicator `comm` (a
    /// plain integer elsewhere).
    fn relative_int(&mut self, v: i64, comm: Option<u64>) {
        let info = comm.and_then(|c| self.st().comms.as_ref().and_then(|cs| cs.get(c)).copied());
        match info {
            Some(i) if i.remote_size.is_none() => {
                encode_rank(self.sig, Rank::Relative(v - i.my_rank))
            }
            _ => self.int(v),
        }
    }

    /// A rank every member passes with the same value (a collective's root, an
    /// intercommunicator's leader): special values by name, others absolute.
    pub fn absolute_rank(&mut self, v: i64) {
        let r = self.rank_value(v, None);
        encode_rank(self.sig, r);
    }

    /// A `MPI_Comm_split` key: relative to the caller's rank in `comm` (keys are most often
    /// the caller's rank), with no special values.
    pub fn key(&mut self, v: i64, comm: Option<u64>) {
        self.relative_int(v, comm);
    }

    /// A rank of `comm` (relative to the caller's rank in it where meaningful).
    pub fn rank(&mut self, v: i64, comm: Option<u64>) {
        let r = self.rank_value(v, comm);
        encode_rank(self.sig, r);
    }

    /// An array of ranks of `comm`.
    ///
    /// # Safety
    /// As [`Call::ints`].
    pub unsafe fn ranks<T: AsI64>(&mut self, ptr: *const T, len: usize, comm: Option<u64>) {
        if ptr.is_null() || Self::is_sentinel(ptr.cast()) {
            return self.ignored();
        }
        self.array(len, |c, i| c.rank((*ptr.add(i)).as_i64(), comm));
    }

    /// A rank output.
    ///
    /// # Safety
    /// As [`Call::int_out`].
    pub unsafe fn rank_out<T: AsI64>(&mut self, ptr: *const T, comm: Option<u64>) {
        if ptr.is_null() {
            return self.ignored();
        }
        self.rank((*ptr).as_i64(), comm);
    }

    /// Coordinates in the Cartesian communicator `comm`, as offsets from the caller's own
    /// (plain integers when `comm` has no known grid or the length does not match it).
    ///
    /// # Safety
    /// As [`Call::ints`].
    pub unsafe fn coords<T: AsI64>(&mut self, ptr: *const T, len: usize, comm: Option<u64>) {
        if ptr.is_null() || Self::is_sentinel(ptr.cast()) {
            return self.ignored();
        }
        let values: Vec<i64> = (0..len).map(|i| (*ptr.add(i)).as_i64()).collect();
        let offsets = comm.and_then(|c| {
            let comms = self.st().comms.as_ref()?;
            let me = comms.get(c)?.my_rank;
            let grid = comms.grid(c)?;
            let here = grid.coords(me)?;
            // Out-of-range coordinates (allowed in periodic dimensions) stay plain integers,
            // so decoding gives back exactly what the program passed.
            let in_range = here.len() == values.len()
                && values
                    .iter()
                    .zip(&grid.dims)
                    .all(|(v, d)| (0..*d).contains(v));
            in_range.then(|| grid.offsets(&here, &values))
        });
        match offsets {
            Some(offsets) => encode_coords(self.sig, &offsets),
            None => self.ints(ptr, len),
        }
    }
}
