//! Communicators: one symbolic id shared by all members, agreed collectively when the
//! communicator is created (through PMPI, on the new communicator itself, or on a temporary
//! merge of an inter-communicator), plus each rank's position in it for relative ranks.

use super::word_hash::FastMap;
use crate::mpi::*;
use conifer_format::grid::Grid;
use conifer_format::value::{derived_comm_id as derived_id, HandleKind, HandleRef};

/// Words of the free-id bitmap exchanged at agreement (ids 0..256 are recycled).
const WORDS: usize = 4;

/// What a rank knows about one communicator.
#[derive(Clone, Copy, Debug)]
pub struct CommInfo {
    /// Symbolic id or predefined name.
    pub handle: HandleRef,
    /// The caller's rank in it.
    pub my_rank: i64,
    /// Size of the local group.
    pub size: i64,
    /// Size of the remote group of an inter-communicator.
    pub remote_size: Option<i64>,
    /// True when it has a Cartesian topology (its grid is in [`Comms::grid`]).
    pub cartesian: bool,
}

/// The communicators a rank knows and the ids in use.
pub struct Comms {
    known: FastMap<u64, CommInfo>,
    /// Every communicator this rank has had, freed ones included, for decoding relative ranks
    /// and telling communicators that share a handle apart. Agreed ids are recycled only with
    /// the same rank, grid and members (see [`Comms::offer`]); past the first 256 ids a
    /// recycled id may be listed again with another rank (decoders use the first entry).
    history: Vec<Held>,
    /// Topologies of the Cartesian communicators, by handle bits.
    grids: FastMap<u64, Grid>,
    /// Every (group or window, rank in it) this rank has been a member of, for decoding
    /// ranks given relative to a group (`MPI_Group_translate_ranks`, `MPI_Group_incl`, ...)
    /// or to a window's group (the targets of `MPI_Put`, `MPI_Get`, ...).
    group_history: Vec<(HandleKind, HandleRef, i64)>,
    /// How many times each communicator (by its symbolic handle) was duplicated with
    /// `MPI_Comm_idup`: the duplicates' ids derive from it.
    idups: FastMap<u64, u32>,
    used: Vec<u64>,
    /// Ids of communicators created without agreement (`MPI_Comm_idup`, parents), from the
    /// top of the id space so they never collide with agreed ids.
    local_next: u32,
}

/// Where a rank stands in a new communicator: what [`Comms::offer`] keeps an id to.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    /// The caller's rank in it.
    pub my_rank: i64,
    /// Its Cartesian topology.
    pub grid: Option<Grid>,
    /// The world rank of its local rank 0 (`None` when MPI could not translate it).
    pub leader: Option<u32>,
    /// A hash of its members' world ranks in local order (of its local group, for an
    /// inter-communicator).
    pub members: u64,
}

/// A communicator a rank has had: its symbolic handle and where the rank stood in it.
#[derive(Clone, Debug, PartialEq)]
struct Held {
    handle: HandleRef,
    standing: Standing,
}

/// Bits of a communicator handle.
pub fn comm_bits(comm: MPI_Comm) -> u64 {
    super::arguments::bits(comm)
}

unsafe fn describe(comm: MPI_Comm, handle: HandleRef) -> CommInfo {
    let (mut rank, mut size, mut inter) = (0, 0, 0);
    PMPI_Comm_rank(comm, &mut rank);
    PMPI_Comm_size(comm, &mut size);
    PMPI_Comm_test_inter(comm, &mut inter);
    let remote_size = (inter != 0).then(|| {
        let mut remote = 0;
        PMPI_Comm_remote_size(comm, &mut remote);
        i64::from(remote)
    });
    CommInfo {
        handle,
        my_rank: rank.into(),
        size: size.into(),
        remote_size,
        cartesian: false,
    }
}

/// Where the caller stands in the new communicator `comm`, as [`Comms::offer`] takes it.
///
/// # Safety
/// `comm` must be a valid communicator.
pub unsafe fn standing(comm: MPI_Comm) -> Standing {
    let (leader, members) = members(comm);
    Standing {
        my_rank: describe(comm, HandleRef::Unknown).my_rank,
        grid: cartesian(comm),
        leader,
        members,
    }
}

/// The world rank of `comm`'s local rank 0 and a hash of its (local group's) members' world
/// ranks in local order: both local calls, no communication.
unsafe fn members(comm: MPI_Comm) -> (Option<u32>, u64) {
    let (mut group, mut world) = (std::mem::zeroed(), std::mem::zeroed());
    if PMPI_Comm_group(comm, &mut group) != 0 {
        return (None, 0);
    }
    let mut size = 0;
    let translated = PMPI_Comm_group(conifer_comm_world(), &mut world) == 0
        && PMPI_Group_size(group, &mut size) == 0
        && size > 0;
    let mut worlds = vec![-1; size.max(0) as usize];
    if translated {
        let locals: Vec<i32> = (0..size).collect();
        PMPI_Group_translate_ranks(group, size, locals.as_ptr(), world, worlds.as_mut_ptr());
        PMPI_Group_free(&mut world);
    }
    PMPI_Group_free(&mut group);
    let leader = worlds.first().and_then(|&w| u32::try_from(w).ok());
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for w in worlds {
        hash = (hash ^ u64::from(w as u32)).wrapping_mul(0x0100_0000_01b3);
    }
    (leader, hash)
}

/// The Cartesian topology of `comm`, if it has one.
unsafe fn cartesian(comm: MPI_Comm) -> Option<Grid> {
    let mut kind = 0;
    if PMPI_Topo_test(comm, &mut kind) != 0 || kind != conifer_cart() {
        return None;
    }
    let mut ndims = 0;
    if PMPI_Cartdim_get(comm, &mut ndims) != 0 || ndims < 0 {
        return None;
    }
    let n = ndims as usize;
    let (mut dims, mut periods, mut coords) = (vec![0; n], vec![0; n], vec![0; n]);
    if PMPI_Cart_get(
        comm,
        ndims,
        dims.as_mut_ptr(),
        periods.as_mut_ptr(),
        coords.as_mut_ptr(),
    ) != 0
    {
        return None;
    }
    Grid::new(
        dims.into_iter().map(i64::from).collect(),
        periods.into_iter().map(|p| p != 0).collect(),
    )
}

impl Comms {
    /// Registers `MPI_COMM_WORLD` and `MPI_COMM_SELF` (call after `MPI_Init`).
    pub fn new() -> Comms {
        let mut comms = Comms {
            known: FastMap::default(),
            history: Vec::new(),
            grids: FastMap::default(),
            group_history: Vec::new(),
            idups: FastMap::default(),
            used: vec![0; WORDS],
            local_next: u32::MAX,
        };
        // SAFETY: MPI is initialised; the predefined communicators are valid.
        unsafe {
            comms.known.insert(
                comm_bits(conifer_comm_world()),
                describe(conifer_comm_world(), HandleRef::Named(1)),
            );
            comms.known.insert(
                comm_bits(conifer_comm_self()),
                describe(conifer_comm_self(), HandleRef::Named(2)),
            );
        }
        comms.known.insert(
            comm_bits(unsafe { conifer_comm_null() }),
            CommInfo {
                handle: HandleRef::Named(0),
                my_rank: 0,
                size: 0,
                remote_size: None,
                cartesian: false,
            },
        );
        comms
    }

    /// Every communicator this rank has belonged to, with its rank, its grid and its leader
    /// (the world rank of its local rank 0).
    pub fn memberships(
        &self,
    ) -> impl Iterator<Item = (HandleRef, i64, Option<Grid>, Option<u32>)> + '_ {
        // Sorted so every rank lists them in the same order: equal lists compress across ranks.
        let mut predefined: Vec<(HandleRef, i64, Option<Grid>, Option<u32>)> = self
            .known
            .values()
            .filter(|i| matches!(i.handle, HandleRef::Named(_)))
            .map(|i| (i.handle, i.my_rank, None, self.predefined_leader(i.handle)))
            .collect();
        predefined.sort_by_key(|(handle, ..)| *handle);
        predefined.into_iter().chain(self.history.iter().map(|h| {
            let s = &h.standing;
            (h.handle, s.my_rank, s.grid.clone(), s.leader)
        }))
    }

    /// Every group and window this rank has been a member of, with its rank in it.
    pub fn group_memberships(&self) -> impl Iterator<Item = (HandleKind, HandleRef, i64)> + '_ {
        self.group_history.iter().copied()
    }

    /// Records a group the caller belongs to, or a window (`kind`; `handle` its symbolic id,
    /// `bits` the MPI handle) with the caller's rank in its group, so ranks given relative to
    /// it are recorded relative to the caller's rank in it (groups, windows and communicators
    /// never share handle bits while they live, in either MPI).
    pub fn insert_group(
        &mut self,
        kind: HandleKind,
        bits: u64,
        handle: HandleRef,
        my_rank: i64,
        size: i64,
    ) {
        if !matches!(handle, HandleRef::Id(_)) {
            return;
        }
        self.known.insert(
            bits,
            CommInfo {
                handle,
                my_rank,
                size,
                remote_size: None,
                cartesian: false,
            },
        );
        if !self.group_history.contains(&(kind, handle, my_rank)) {
            self.group_history.push((kind, handle, my_rank));
        }
    }

    /// What is known about a communicator (or a group the caller belongs to).
    pub fn get(&self, bits: u64) -> Option<&CommInfo> {
        self.known.get(&bits)
    }

    /// The grid of a Cartesian communicator.
    pub fn grid(&self, bits: u64) -> Option<&Grid> {
        self.grids.get(&bits)
    }

    /// The local free-id bitmap offered at agreement on a new communicator where the caller
    /// stands at `standing`: neither the ids in use nor those this rank held before with
    /// another rank, grid or member list, so that an id stands for one communicator of each
    /// rank for the whole run (readers restore relative ranks from it, and tell communicators
    /// sharing an id apart by their leaders).
    pub fn offer(&self, standing: &Standing) -> [u64; WORDS] {
        let mut words = [0u64; WORDS];
        for (w, used) in words.iter_mut().zip(&self.used) {
            *w = !used;
        }
        for held in &self.history {
            if let HandleRef::Id(id) = held.handle {
                let (word, bit) = ((id / 64) as usize, id % 64);
                if word < WORDS && held.standing != *standing {
                    words[word] &= !(1 << bit);
                }
            }
        }
        words
    }

    /// The lowest id free on every member, given the bitwise AND of all offers; `None` when
    /// the first 256 ids are exhausted somewhere.
    pub fn lowest_common_free(agreed: &[u64; WORDS]) -> Option<u32> {
        agreed
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i as u32 * 64 + w.trailing_zeros())
    }

    fn mark_used(&mut self, id: u32) {
        let (word, bit) = ((id / 64) as usize, id % 64);
        if word >= self.used.len() {
            self.used.resize(word + 1, 0);
        }
        self.used[word] |= 1 << bit;
    }

    /// Records a communicator created with the agreed `id`, where the caller stands at
    /// `standing` (from [`standing`]).
    ///
    /// # Safety
    /// `comm` must be a valid communicator.
    pub unsafe fn insert_agreed(
        &mut self,
        comm: MPI_Comm,
        id: u32,
        standing: Standing,
    ) -> HandleRef {
        self.mark_used(id);
        let mut info = describe(comm, HandleRef::Id(id));
        info.cartesian = standing.grid.is_some();
        self.known.insert(comm_bits(comm), info);
        match &standing.grid {
            Some(g) => self.grids.insert(comm_bits(comm), g.clone()),
            None => self.grids.remove(&comm_bits(comm)),
        };
        let held = Held {
            handle: info.handle,
            standing,
        };
        if !self.history.contains(&held) {
            self.history.push(held);
        }
        info.handle
    }

    /// Where the caller stands in the communicator it knows as `handle`: from its history, or
    /// for `MPI_COMM_WORLD` and `MPI_COMM_SELF` from what they are.
    fn standing_in(&self, info: &CommInfo) -> Standing {
        if let Some(held) = self.history.iter().rev().find(|h| h.handle == info.handle) {
            return held.standing.clone();
        }
        Standing {
            my_rank: info.my_rank,
            grid: None,
            leader: self.predefined_leader(info.handle),
            members: 0,
        }
    }

    /// The leader of a predefined communicator: `MPI_COMM_WORLD`'s local rank 0 is world rank
    /// 0, `MPI_COMM_SELF`'s the caller; `None` for others.
    fn predefined_leader(&self, handle: HandleRef) -> Option<u32> {
        match handle {
            HandleRef::Named(1) => Some(0),
            HandleRef::Named(2) => self
                .known
                .values()
                .find(|i| i.handle == HandleRef::Named(1))
                .and_then(|i| u32::try_from(i.my_rank).ok()),
            _ => None,
        }
    }

    /// Records the `k`-th `MPI_Comm_idup` of the communicator `parent` (handle bits) as
    /// `comm`, with an id made of the parent's and `k` (see [`derived_id`](conifer_format::value::derived_comm_id)) and the parent's
    /// rank, size and grid.
    ///
    /// # Safety
    /// `comm` must be a valid communicator handle.
    pub unsafe fn insert_duplicate(&mut self, comm: MPI_Comm, parent: u64) -> HandleRef {
        let Some(info) = self.known.get(&parent).copied() else {
            return self.insert_local(comm);
        };
        let counter = self.idups.entry(handle_key(info.handle)).or_insert(0);
        let Some(id) = derived_id(info.handle, *counter) else {
            return self.insert_local(comm);
        };
        *counter += 1;
        let handle = HandleRef::Id(id);
        let grid = self.grids.get(&parent).cloned();
        let standing = Standing {
            grid: grid.clone(),
            ..self.standing_in(&info)
        };
        self.known
            .insert(comm_bits(comm), CommInfo { handle, ..info });
        self.history.push(Held { handle, standing });
        if let Some(g) = grid {
            self.grids.insert(comm_bits(comm), g);
        }
        handle
    }

    /// Records a communicator whose id could not be agreed collectively.
    ///
    /// # Safety
    /// `comm` must be a valid communicator or `MPI_COMM_NULL`.
    pub unsafe fn insert_local(&mut self, comm: MPI_Comm) -> HandleRef {
        if let Some(info) = self.known.get(&comm_bits(comm)) {
            return info.handle;
        }
        self.local_next -= 1;
        let handle = HandleRef::Id(self.local_next);
        self.known.insert(
            comm_bits(comm),
            CommInfo {
                handle,
                my_rank: 0,
                size: 0,
                remote_size: None,
                cartesian: false,
            },
        );
        handle
    }

    /// The communicator behind `bits` was freed.
    pub fn release(&mut self, bits: u64) {
        self.grids.remove(&bits);
        if let Some(CommInfo {
            handle: HandleRef::Id(id),
            ..
        }) = self.known.remove(&bits)
        {
            let (word, bit) = ((id / 64) as usize, id % 64);
            if let Some(w) = self.used.get_mut(word) {
                *w &= !(1 << bit);
            }
        }
    }
}

/// A symbolic handle as a map key.
fn handle_key(handle: HandleRef) -> u64 {
    match handle {
        HandleRef::Named(code) => u64::from(code),
        HandleRef::Id(id) => (1 << 32) | u64::from(id),
        HandleRef::Unknown => u64::MAX,
    }
}

/// Agrees on an id for the new communicator `comm` with all its members (a collective over
/// `comm`, through PMPI). Returns `None` if MPI reported an error.
///
/// # Safety
/// `comm` must be a valid, newly created communicator that every member is registering now.
pub unsafe fn agree(comm: MPI_Comm, offer: [u64; WORDS], fallback: u32) -> Option<u32> {
    let mut inter = 0;
    PMPI_Comm_test_inter(comm, &mut inter);
    let mut over = comm;
    if inter != 0 {
        let mut merged: MPI_Comm = std::mem::zeroed();
        if PMPI_Intercomm_merge(comm, 0, &mut merged) != 0 {
            return None;
        }
        over = merged;
    }
    let mut agreed = [0u64; WORDS];
    let t = conifer_type_uint64();
    let ok = PMPI_Allreduce(
        offer.as_ptr().cast(),
        agreed.as_mut_ptr().cast(),
        WORDS as i32,
        t,
        conifer_op_band(),
        over,
    ) == 0;
    let mut id = Comms::lowest_common_free(&agreed);
    if ok && id.is_none() {
        let mine = u64::from(fallback);
        let mut max = 0u64;
        PMPI_Allreduce(
            (&mine as *const u64).cast(),
            (&mut max as *mut u64).cast(),
            1,
            t,
            conifer_op_max(),
            over,
        );
        id = u32::try_from(max).ok();
    }
    if inter != 0 {
        PMPI_Comm_free(&mut over);
    }
    if ok {
        id
    } else {
        None
    }
}

impl Comms {
    /// An id beyond the bitmap for the rare program with more than 256 live communicators.
    pub fn fallback_id(&self) -> u32 {
        (self.used.len() * 64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_get_distinct_ids_outside_the_agreed_and_local_ranges() {
        let world = HandleRef::Named(1);
        let first = derived_id(world, 0).unwrap();
        assert_ne!(first, derived_id(world, 1).unwrap());
        assert_ne!(first, derived_id(HandleRef::Id(0), 0).unwrap());
        assert_ne!(first, derived_id(HandleRef::Named(2), 0).unwrap());
        for id in [first, derived_id(HandleRef::Id(5000), 16383).unwrap()] {
            assert!((0x8000_0000..0xC000_0000).contains(&id), "{id:#x}");
        }
        assert_eq!(derived_id(world, 1 << 14), None);
        assert_eq!(derived_id(HandleRef::Unknown, 0), None);
    }

    #[test]
    fn lowest_common_free_id() {
        let a = [!0b1011u64, !0, !0, !0];
        let b = [!0b0111u64, !0, !0, !0];
        let both = [a[0] & b[0], !0, !0, !0];
        assert_eq!(Comms::lowest_common_free(&both), Some(4));
        assert_eq!(Comms::lowest_common_free(&[0, 0, 1 << 5, 0]), Some(133));
        assert_eq!(Comms::lowest_common_free(&[0; WORDS]), None);
    }

    #[test]
    fn ids_held_with_another_rank_are_not_offered_again() {
        let at = |my_rank, grid: Option<&Grid>, members| Standing {
            my_rank,
            grid: grid.cloned(),
            leader: Some(0),
            members,
        };
        let held = |id, standing| Held {
            handle: HandleRef::Id(id),
            standing,
        };
        let mut comms = Comms {
            known: FastMap::default(),
            history: vec![held(0, at(1, None, 7)), held(1, at(0, None, 7))],
            grids: FastMap::default(),
            group_history: Vec::new(),
            idups: FastMap::default(),
            used: vec![0; WORDS],
            local_next: u32::MAX,
        };
        comms.mark_used(2);
        // Rank 0 again: id 0 (held as rank 1) and id 2 (in use) are out, id 1 is back.
        let offer = comms.offer(&at(0, None, 7));
        assert_eq!(offer[0] & 0b111, 0b010);
        assert_eq!(Comms::lowest_common_free(&offer), Some(1));
        let grid = Grid::new(vec![2], vec![true]).unwrap();
        assert_eq!(
            Comms::lowest_common_free(&comms.offer(&at(0, Some(&grid), 7))),
            Some(3)
        );
        // The same rank among other members: id 1 is out too.
        assert_eq!(
            Comms::lowest_common_free(&comms.offer(&at(0, None, 8))),
            Some(3)
        );
    }
}
