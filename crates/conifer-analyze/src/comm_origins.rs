//! How each communicator of a trace was made, in words: the call that created it, its parent,
//! the split colours and keys, the Cartesian dimensions, and its size, so readers can name
//! `comm0` … `comm6` by more than their ids. Read from the distinct signatures each rank
//! recorded (not from its calls one by one), so the cost follows the trace's size.

use crate::context::CommTable;
use conifer_trace::decode::Signature;
use conifer_trace::value::{HandleKind, HandleRef, Position, Value};
use conifer_trace::varint::Reader;
use conifer_trace::Trace;
use std::collections::{BTreeMap, BTreeSet};

/// The output slots that hold a communicator a call creates.
const NEW_COMM: &[&str] = &[
    "newcomm",
    "comm_cart",
    "newintercomm",
    "newintracomm",
    "comm_graph",
    "comm_dist_graph",
];

/// The input slots that hold the communicator a new one is made from.
const PARENT: &[&str] = &["comm", "comm_old", "local_comm", "intercomm"];

/// What the ranks recorded about one communicator's creation.
#[derive(Default)]
struct Made {
    /// The creating functions (without `MPI_`).
    functions: BTreeSet<String>,
    /// The communicators it was made from.
    parents: BTreeSet<String>,
    /// Split colours, Cartesian dimensions and periods, kept dimensions, split types.
    details: BTreeMap<&'static str, BTreeSet<String>>,
    /// Whether every rank's split key was its rank in the parent (`Some(false)`: not).
    key_is_rank: Option<bool>,
}

/// How every communicator the trace's calls create was made, by the name `decode` gives it
/// (`comm0`, `MPI_COMM_WORLD.idup0`): e.g. `Comm_split of MPI_COMM_WORLD, colour 0|1, key =
/// rank in parent; 2 groups of 2`.
pub fn comm_origins(trace: &Trace) -> BTreeMap<String, String> {
    let mut made: BTreeMap<String, Made> = BTreeMap::new();
    for entry in &trace.record.ranks {
        let terminals: BTreeSet<u32> = (0..entry.threads.len())
            .flat_map(|t| trace.record.thread_terminal_counts(entry, t).into_keys())
            .collect();
        for t in terminals {
            let Some(sig) = trace
                .record
                .signatures
                .get(t as usize)
                .and_then(|s| Signature::parse(s))
            else {
                continue;
            };
            let Some(f) = trace.catalog.iter().find(|f| f.id == sig.function) else {
                continue;
            };
            let slot = |names: &[&str]| {
                f.slots
                    .iter()
                    .position(|s| names.contains(&s.as_str()))
                    .and_then(|i| sig.values.get(i))
            };
            // MPI_COMM_NULL (a split's MPI_UNDEFINED part) is no communicator made.
            let Some(new @ Value::Handle(HandleKind::Comm, HandleRef::Id(_))) = slot(NEW_COMM)
            else {
                continue;
            };
            let m = made.entry(new.display(None).to_string()).or_default();
            m.functions
                .insert(f.name.trim_start_matches("MPI_").to_string());
            let parent = slot(PARENT);
            if let Some(p) = parent {
                m.parents.insert(p.display(None).to_string());
            }
            // The caller's position in the parent, for values recorded relative to it.
            let at = parent.and_then(|p| {
                let mut key = Vec::new();
                p.encode(&mut key);
                entry
                    .comms
                    .iter()
                    .find(|c| c.comm == key)
                    .map(|c| Position {
                        rank: c.my_rank,
                        grid: c.grid.as_ref(),
                    })
            });
            for (name, label) in [
                ("color", "colour"),
                ("split_type", "type"),
                ("dims", "dims"),
                ("periods", "periodic"),
                ("remain_dims", "keeping dims"),
            ] {
                if let Some(v) = slot(&[name]) {
                    m.details
                        .entry(label)
                        .or_default()
                        .insert(v.display(at).to_string());
                }
            }
            if let (Some(key), Some(at)) = (slot(&["key"]), at) {
                let restored = key.display(Some(at)).to_string();
                let is_rank = restored == at.rank.to_string();
                m.key_is_rank = Some(m.key_is_rank.unwrap_or(true) && is_rank);
            }
        }
    }
    let sizes = group_sizes(trace);
    made.into_iter()
        .map(|(name, m)| {
            let text = describe(&m, sizes.get(&name).map(Vec::as_slice));
            (name, text)
        })
        .collect()
}

/// The sizes of the groups holding each communicator id, by name.
fn group_sizes(trace: &Trace) -> BTreeMap<String, Vec<usize>> {
    let mut sizes: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (group, members) in CommTable::new(trace).groups() {
        if let Some(v) = Value::decode(&mut Reader::new(&group.id)) {
            sizes
                .entry(v.display(None).to_string())
                .or_default()
                .push(members.len());
        }
    }
    sizes
}

/// `FUNCTION of PARENT, details; N groups of S`.
fn describe(m: &Made, sizes: Option<&[usize]>) -> String {
    let join =
        |set: &BTreeSet<String>, sep: &str| set.iter().cloned().collect::<Vec<_>>().join(sep);
    let mut text = join(&m.functions, "/");
    if !m.parents.is_empty() {
        text.push_str(&format!(" of {}", join(&m.parents, ", ")));
    }
    for (label, values) in &m.details {
        let shown = if values.len() > 6 {
            format!("{} values", values.len())
        } else {
            join(values, "|")
        };
        text.push_str(&format!(", {label} {shown}"));
    }
    match m.key_is_rank {
        Some(true) => text.push_str(", key = rank in parent"),
        Some(false) => text.push_str(", other keys"),
        None => {}
    }
    if let Some(sizes) = sizes {
        let distinct: BTreeSet<usize> = sizes.iter().copied().collect();
        let each = distinct
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join("|");
        text.push_str(&match sizes.len() {
            1 => format!("; size {each}"),
            n => format!("; {n} groups of {each}"),
        });
    }
    text
}
