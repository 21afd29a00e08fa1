//! What a rank's calls are evaluated against: its positions in its communicators, the world
//! ranks of each communicator's members, its datatypes, windows and persistent requests.

use crate::call::Args;
use crate::effect::{self, Caller, Effect};
use crate::error::AnalyzeError;
use crate::types::TypeSizes;
use conifer_trace::grid::Grid;
use conifer_trace::value::{HandleKind, HandleRef, Position, Value};
use conifer_trace::Trace;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

/// The members of every communicator, in world ranks. Communicator ids are agreed among a
/// communicator's members, so disjoint communicators (the parts of one `MPI_Comm_split`, with
/// `MPI_UNDEFINED` or not) share an id; the recorder keeps each rank's id bound to one member
/// list and stores each membership's leader (the world rank of its local rank 0), so an id
/// plus a leader is one communicator, and its members are the ranks listing both, each at the
/// local rank it recorded. Memberships without a leader (groups, windows) fall back to
/// splitting the ranks holding an id in ascending order, each joining the first group that
/// lacks its local rank.
pub struct CommTable {
    groups: HashMap<Vec<u8>, Vec<Vec<Option<u32>>>>,
    /// Communicator id → world rank → which group of that id the rank is in.
    of_rank: HashMap<Vec<u8>, HashMap<u32, usize>>,
}

fn key(v: &Value) -> Vec<u8> {
    let mut k = Vec::new();
    v.encode(&mut k);
    k
}

fn world_key() -> Vec<u8> {
    key(&Value::Handle(HandleKind::Comm, HandleRef::Named(1)))
}

fn self_key() -> Vec<u8> {
    key(&Value::Handle(HandleKind::Comm, HandleRef::Named(2)))
}

/// The id part of a communicator's name ([`CommTable::label`]): `comm5` of `comm5@4`.
pub fn comm_id_of_name(name: &str) -> &str {
    name.split(['@', '#']).next().unwrap_or(name)
}

/// True for `MPI_COMM_SELF`.
pub fn is_comm_self(v: &Value) -> bool {
    key(v) == self_key()
}

/// One rank's membership of an id: its world rank, its local rank and its leader.
type Holder = (u32, i64, Option<u32>);

impl CommTable {
    /// From the trace's `COMM` column.
    pub fn new(trace: &Trace) -> CommTable {
        let mut held: BTreeMap<Vec<u8>, Vec<Holder>> = BTreeMap::new();
        for (rank, entry) in trace.record.ranks.iter().enumerate() {
            let mut seen = HashSet::new();
            for m in &entry.comms {
                if seen.insert(m.comm.clone()) {
                    held.entry(m.comm.clone()).or_default().push((
                        rank as u32,
                        m.my_rank,
                        m.leader,
                    ));
                }
            }
        }
        // MPI_COMM_WORLD when the column does not list it.
        held.entry(world_key()).or_insert_with(|| {
            (0..trace.meta.ranks)
                .map(|r| (r, i64::from(r), Some(0)))
                .collect()
        });
        let size_limit = trace.meta.ranks as usize;
        let mut groups = HashMap::new();
        let mut of_rank: HashMap<Vec<u8>, HashMap<u32, usize>> = HashMap::new();
        for (k, mut members) in held {
            members.sort_unstable();
            let mut gs: Vec<Vec<Option<u32>>> = Vec::new();
            let ranks = of_rank.entry(k.clone()).or_default();
            let (led, unled): (Vec<Holder>, Vec<Holder>) = members
                .into_iter()
                .partition(|(_, _, leader)| leader.is_some());
            let mut by_leader: BTreeMap<u32, Vec<(u32, usize)>> = BTreeMap::new();
            for (world, local, leader) in led {
                if let Some(l) = usize::try_from(local).ok().filter(|&l| l <= size_limit) {
                    by_leader
                        .entry(leader.expect("partitioned on a leader"))
                        .or_default()
                        .push((world, l));
                }
            }
            for members in by_leader.into_values() {
                let g = gs.len();
                let mut group = Vec::new();
                for (world, l) in members {
                    if group.len() <= l {
                        group.resize(l + 1, None);
                    }
                    group[l].get_or_insert(world);
                    ranks.insert(world, g);
                }
                gs.push(group);
            }
            place_in_order(unled, size_limit, &mut gs, ranks);
            groups.insert(k, gs);
        }
        CommTable { groups, of_rank }
    }

    /// The members of the communicator `k` world rank `rank` belongs to.
    fn members(&self, k: &[u8], rank: u32) -> Option<&[Option<u32>]> {
        let g = *self.of_rank.get(k)?.get(&rank)?;
        Some(&self.groups.get(k)?[g])
    }

    /// The communicator `comm` names in the calls of world rank `rank`, as all its members
    /// know it (`None` for `MPI_COMM_SELF` and communicators the trace does not list).
    pub fn group_of(&self, comm: &Value, rank: u32) -> Option<CommGroup> {
        let id = key(comm);
        let group = *self.of_rank.get(&id)?.get(&rank)?;
        Some(CommGroup {
            id: id.into(),
            group,
        })
    }

    /// The name of communicator `g`: the name `decode` gives its id (`comm5`), followed by
    /// `@` and the world rank of its local rank 0 when other communicators share the id
    /// (`comm5@4`), or by `#` and its group number when that rank is unknown.
    pub fn label(&self, g: &CommGroup) -> String {
        let name = Value::decode(&mut conifer_trace::varint::Reader::new(&g.id))
            .map_or_else(|| "comm?".to_string(), |v| v.display(None).to_string());
        let groups = self.groups.get(&g.id[..]).map_or(&[][..], Vec::as_slice);
        if groups.len() <= 1 {
            return name;
        }
        match groups
            .get(g.group)
            .and_then(|m| m.first().copied().flatten())
        {
            Some(leader) => format!("{name}@{leader}"),
            None => format!("{name}#{}", g.group),
        }
    }

    /// Every communicator with its members (world ranks by local rank; `None` where a local
    /// rank's holder is unknown), in a fixed order.
    pub fn groups(&self) -> Vec<(CommGroup, &[Option<u32>])> {
        let mut all: Vec<(CommGroup, &[Option<u32>])> = self
            .groups
            .iter()
            .flat_map(|(id, gs)| {
                gs.iter().enumerate().map(|(group, members)| {
                    (
                        CommGroup {
                            id: id.as_slice().into(),
                            group,
                        },
                        members.as_slice(),
                    )
                })
            })
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }
}

/// A communicator as every member knows it: its id in the trace, and which of the disjoint
/// groups sharing that id (the parts of one `MPI_Comm_split`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommGroup {
    /// The communicator value's encoding (shared: ops name it on every message).
    pub id: Rc<[u8]>,
    /// Which group holding that id.
    pub group: usize,
}

/// Places memberships whose leader is unknown into new groups after `gs`: world ranks in
/// ascending order, each joining the first of these groups that lacks its local rank (exact
/// when a split keeps the parent's order within each part). The groups holding local rank `l`
/// are always the first `holders[l]`, so the one to join is found in O(1).
fn place_in_order(
    members: Vec<Holder>,
    size_limit: usize,
    gs: &mut Vec<Vec<Option<u32>>>,
    ranks: &mut HashMap<u32, usize>,
) {
    let first = gs.len();
    let mut holders: HashMap<usize, usize> = HashMap::new();
    for (world, local, _) in members {
        let Some(l) = usize::try_from(local).ok().filter(|&l| l <= size_limit) else {
            continue;
        };
        let held = holders.entry(l).or_insert(0);
        let g = first + *held;
        *held += 1;
        if g == gs.len() {
            gs.push(Vec::new());
        }
        if gs[g].len() <= l {
            gs[g].resize(l + 1, None);
        }
        gs[g][l] = Some(world);
        ranks.insert(world, g);
    }
}

/// True for the calls that set up state other calls refer to: datatype constructors, window
/// creations, persistent point-to-point requests, inter-communicators.
pub fn is_setup(name: &str) -> bool {
    let n = name.strip_prefix("MPI_").unwrap_or(name);
    n.starts_with("Type_")
        || n.starts_with("Win_allocate")
        || n.starts_with("Win_create")
        || matches!(
            n,
            "Send_init"
                | "Bsend_init"
                | "Ssend_init"
                | "Rsend_init"
                | "Recv_init"
                | "Send_init_c"
                | "Recv_init_c"
        )
        || is_intercomm_maker(n)
}

fn is_intercomm_maker(n: &str) -> bool {
    matches!(
        n,
        "Intercomm_create"
            | "Intercomm_create_from_groups"
            | "Comm_spawn"
            | "Comm_spawn_multiple"
            | "Comm_accept"
            | "Comm_connect"
            | "Comm_join"
            | "Comm_get_parent"
    )
}

/// One rank's context.
pub struct RankContext<'t> {
    world: u32,
    table: &'t CommTable,
    positions: HashMap<Vec<u8>, (i64, Option<&'t Grid>, u32)>,
    types: TypeSizes,
    windows: HashMap<HandleRef, Value>,
    persistent: HashMap<HandleRef, Effect>,
    remote: HashMap<Vec<u8>, (i64, Vec<Option<u32>>)>,
    /// `MPI_COMM_SELF`'s key.
    self_key: Vec<u8>,
    /// A buffer for encoding lookup keys without allocating on every call.
    scratch: std::cell::RefCell<Vec<u8>>,
    /// The communicator looked up last, with what was found (most calls in a row name the
    /// same one, and the lookups encode and hash it).
    last_comm: std::cell::RefCell<Option<(Value, CommLookup<'t>)>>,
    /// Names of the communicators this rank's calls named ([`CommTable::label`]).
    names: std::cell::RefCell<HashMap<Vec<u8>, String>>,
}

/// What [`RankContext`] knows of one communicator value.
#[derive(Clone, Copy)]
struct CommLookup<'t> {
    /// The caller's rank, grid and the communicator's size, when the caller is a member.
    position: Option<(i64, Option<&'t Grid>, u32)>,
    /// World ranks by local rank, as this rank's group of the communicator lists them.
    members: Option<&'t [Option<u32>]>,
    /// True for `MPI_COMM_SELF`.
    is_self: bool,
}

impl<'t> RankContext<'t> {
    /// `f` of the key of `v` (its encoding).
    fn with_key<R>(&self, v: &Value, f: impl FnOnce(&[u8]) -> R) -> R {
        let mut k = self.scratch.borrow_mut();
        k.clear();
        v.encode(&mut k);
        f(&k)
    }

    /// What is known of communicator `comm`, from the last lookup when it named the same one.
    fn comm_lookup(&self, comm: &Value) -> CommLookup<'t> {
        if let Some((last, found)) = &*self.last_comm.borrow() {
            if last == comm {
                return *found;
            }
        }
        let found = self.with_key(comm, |k| CommLookup {
            position: self.positions.get(k).copied(),
            members: self.table.members(k, self.world),
            is_self: k == self.self_key.as_slice(),
        });
        *self.last_comm.borrow_mut() = Some((comm.clone(), found));
        found
    }

    /// The context of world rank `rank`, from a first pass over its calls that keeps the
    /// ones setting up state (datatypes, windows, persistent requests); no pass when the
    /// rank calls no setup function.
    pub fn of_rank(
        reader: &conifer_trace::decode::CallReader<'t>,
        table: &'t CommTable,
        rank: u32,
    ) -> Result<RankContext<'t>, AnalyzeError> {
        let trace = reader.trace();
        let mut setup: Vec<(Rc<conifer_trace::decode::Signature>, &str, &[String])> = Vec::new();
        // The pass is needed only when the rank calls a setup function at all.
        if reader.functions(rank).iter().any(|f| is_setup(&f.name)) {
            for call in reader.calls(rank) {
                let call = call.map_err(|e| AnalyzeError(e.0))?;
                if is_setup(call.name) {
                    setup.push((call.signature, call.name, call.slots));
                }
            }
        }
        Ok(RankContext::new(
            trace,
            table,
            rank,
            setup.iter().map(|(s, name, slots)| Args {
                name,
                slots,
                values: &s.values,
            }),
        ))
    }

    /// The context of world rank `rank`, given (at least) its setup calls.
    pub fn new<'a>(
        trace: &'t Trace,
        table: &'t CommTable,
        rank: u32,
        calls: impl Iterator<Item = Args<'a>> + Clone,
    ) -> RankContext<'t> {
        let setup: Vec<Args> = calls.filter(|a| is_setup(a.name)).collect();
        let inter: HashSet<Vec<u8>> = setup
            .iter()
            .filter(|a| is_intercomm_maker(a.name.strip_prefix("MPI_").unwrap_or(a.name)))
            .flat_map(|a| {
                ["newintercomm", "intercomm", "newcomm", "parent"]
                    .into_iter()
                    .filter_map(|slot| a.get(slot))
            })
            .filter(|v| matches!(v, Value::Handle(HandleKind::Comm, HandleRef::Id(_))))
            .map(key)
            .collect();
        let entry = &trace.record.ranks[rank as usize];
        let mut positions = HashMap::new();
        for m in &entry.comms {
            if inter.contains(&m.comm) || positions.contains_key(&m.comm) {
                continue;
            }
            let size = table.members(&m.comm, rank).map_or(0, |g| g.len() as u32);
            positions.insert(m.comm.clone(), (m.my_rank, m.grid.as_ref(), size));
        }
        positions
            .entry(world_key())
            .or_insert((i64::from(rank), None, trace.meta.ranks));
        positions.insert(self_key(), (0, None, 1));
        let types = TypeSizes::from_calls(setup.iter().copied());
        let windows = setup
            .iter()
            .filter(|a| a.name.starts_with("MPI_Win_"))
            .filter_map(|a| {
                let win = match a.get("win")? {
                    Value::Handle(HandleKind::Win, h) => *h,
                    _ => return None,
                };
                Some((win, a.get("comm")?.clone()))
            })
            .collect();
        // Remote groups of inter-communicators made by MPI_Intercomm_create: the group of
        // `local_comm` that holds the remote leader (named in `peer_comm`), as the standard
        // defines it. Found when the two groups' local communicators share an id (halves of
        // one MPI_Comm_split, the usual way to make them).
        let remote = setup
            .iter()
            .filter(|a| a.name == "MPI_Intercomm_create")
            .filter_map(|a| {
                let inter = key(a.get("newintercomm")?);
                let local = key(a.get("local_comm")?);
                let peer = key(a.get("peer_comm")?);
                let Value::Rank(leader) = a.get("remote_leader")? else {
                    return None;
                };
                let &(my, grid, _) = positions.get(&peer)?;
                let l = effect::local_peer(leader, Position { rank: my, grid })?;
                let leader = (*table.members(&peer, rank)?.get(usize::try_from(l).ok()?)?)?;
                // The caller's rank in its local group: its rank in `local_comm`.
                let &(mine, _, _) = positions.get(&local)?;
                Some((inter, (mine, table.members(&local, leader)?.to_vec())))
            })
            .collect();
        let mut ctx = RankContext {
            world: rank,
            table,
            positions,
            types,
            windows,
            persistent: HashMap::new(),
            remote,
            self_key: self_key(),
            scratch: Default::default(),
            last_comm: Default::default(),
            names: Default::default(),
        };
        let mut persistent = HashMap::new();
        for a in &setup {
            let Some(base) = a.name.strip_suffix("_init") else {
                continue;
            };
            let Some(Value::Handle(HandleKind::Request, req)) = a.get("request") else {
                continue;
            };
            let as_op = Args {
                name: base,
                slots: a.slots,
                values: a.values,
            };
            persistent.insert(*req, effect::evaluate(&as_op, &ctx));
        }
        ctx.persistent = persistent;
        ctx
    }
}

impl Caller for RankContext<'_> {
    fn world(&self) -> u32 {
        self.world
    }

    fn position(&self, comm: &Value) -> Option<(Position<'_>, u32)> {
        let (rank, grid, size) = self.comm_lookup(comm).position?;
        (size > 0).then_some((Position { rank, grid }, size))
    }

    fn member(&self, comm: &Value, local: i64) -> Option<u32> {
        let found = self.comm_lookup(comm);
        if found.is_self {
            return (local == 0).then_some(self.world);
        }
        *found.members?.get(usize::try_from(local).ok()?)?
    }

    fn types(&self) -> &TypeSizes {
        &self.types
    }

    fn window_comm(&self, win: &Value) -> Option<&Value> {
        match win {
            Value::Handle(HandleKind::Win, h) => self.windows.get(h),
            _ => None,
        }
    }

    fn persistent(&self, req: &Value) -> Option<&Effect> {
        match req {
            Value::Handle(HandleKind::Request, h) => self.persistent.get(h),
            _ => None,
        }
    }

    fn remote(&self, comm: &Value) -> Option<(i64, &[Option<u32>])> {
        self.remote
            .get(&key(comm))
            .map(|(my, g)| (*my, g.as_slice()))
    }

    fn comm_name(&self, comm: &Value) -> String {
        let mut names = self.names.borrow_mut();
        self.with_key(comm, |k| {
            if let Some(name) = names.get(k) {
                return name.clone();
            }
            let name = match self.table.group_of(comm, self.world) {
                Some(g) => self.table.label(&g),
                None => comm.display(None).to_string(),
            };
            names.insert(k.to_vec(), name.clone());
            name
        })
    }
}
