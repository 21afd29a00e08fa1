//! Statistics of a Conifer trace that follow from counts — calls and bytes per function, per
//! call site and per communicator, the rank × rank matrix, message-size histograms —
//! computed on the compressed form: each thread's grammar and trace tree give how often each
//! signature occurs (a rule's or vertex's contribution × its multiplicity, never expanded),
//! each distinct signature is evaluated once per rank (peers are restored from the caller's
//! rank, so peer-dependent statistics need it) and its effect is weighted by its count.
//! Threads with the same grammar, tree and value streams share those counts.
//! [`analyze_expanded`] computes the same [`Analysis`] by expanding every call
//! (`Trace::calls`), as the reference the tests compare with.

mod arrivals;
pub mod call;
pub mod callers;
pub mod comm_origins;
mod completion_fills;
mod completions;
pub mod context;
pub mod effect;
mod error;
mod families;
pub mod hosts;
pub mod imbalance;
mod matrix;
pub mod messages;
pub mod rank_figures;
mod site;
pub mod site_names;
mod skeleton;
pub mod times;
pub mod types;
pub mod waits;

pub use error::AnalyzeError;
pub use matrix::{Matrix, MatrixSelect, UnknownWord};
pub use site::Site;

use call::Args;
use conifer_trace::decode::Signature;
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use context::RankContext;
use effect::Effect;
pub(crate) use families::Families;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

/// Calls and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Calls.
    pub calls: u64,
    /// Bytes sent.
    pub bytes_sent: u64,
    /// Bytes received: what arrived (for point-to-point receives from their statuses, else
    /// from the matching sends; see `arrivals/`), collectives' and one-sided gets' bytes.
    pub bytes_received: u64,
    /// Receive capacity posted by point-to-point receives (count × type size): more than
    /// arrived when receive buffers are larger than the messages.
    pub bytes_posted: u64,
}

impl Totals {
    fn add(&mut self, e: &Effect, n: u64) {
        self.calls += n;
        self.bytes_sent += e.sent * n;
        self.bytes_received += e.received * n;
        self.bytes_posted += e.posted * n;
    }
}

/// One call site's statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SiteStats {
    /// The function called there.
    pub function: String,
    /// `file:line` for tree sites (and for callers, once named from debug information).
    pub source: Option<String>,
    /// Calls and bytes over all ranks.
    pub totals: Totals,
    /// Calls per timing family (what times are computed from).
    pub families: BTreeMap<u32, u64>,
    /// Calls per rank.
    pub per_rank: Vec<u64>,
}

/// Everything [`analyze`] computes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    /// Ranks.
    pub ranks: u32,
    /// Per function (C name).
    pub functions: BTreeMap<String, Totals>,
    /// Per function, calls per timing family.
    pub function_families: BTreeMap<String, BTreeMap<u32, u64>>,
    /// Per call site.
    pub sites: BTreeMap<Site, SiteStats>,
    /// Per communicator (as the decoder names it), calls that name one.
    pub comms: BTreeMap<String, Totals>,
    /// Per rank.
    pub per_rank: Vec<Totals>,
    /// Per function, message sizes: bucket → calls. Bucket 0 holds 0 bytes, bucket k ≥ 1 sizes
    /// in [2^(k-1), 2^k).
    pub histograms: BTreeMap<String, BTreeMap<u32, u64>>,
    /// The rank × rank matrix.
    #[serde(skip)]
    pub matrix: Matrix,
    /// Calls that move data to or from peers the analysis could not name (inter-communicators,
    /// unknown datatypes): counted, but missing from the matrix.
    pub unresolved_calls: u64,
    /// Signatures whose function is not in the catalog (counted nowhere else).
    pub unknown_functions: u64,
    /// When set, only calls naming this communicator (as the decoder prints it) enter the
    /// matrix.
    #[serde(skip)]
    pub matrix_comm: Option<String>,
}

/// The histogram bucket of a message of `size` bytes.
pub fn bucket(size: u64) -> u32 {
    64 - size.leading_zeros()
}

/// The sizes bucket `k` holds, as text: `0 B`, `1 B`, `64-127 B`, and from 1 KiB on the
/// half-open range in the larger unit (`1-2 KiB` is [1 KiB, 2 KiB)).
pub fn bucket_label(k: u32) -> String {
    match k {
        0 => "0 B".into(),
        1 => "1 B".into(),
        k if k <= 10 => {
            let lo = 1u64 << (k - 1);
            format!("{lo}-{} B", (lo << 1) - 1)
        }
        k => {
            const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
            let e = k - 1; // lo = 2^e, e >= 10
            let u = ((e - 10) / 10) as usize;
            let lo = 1u64 << (e - 10 * (u as u32 + 1));
            format!("{lo}-{} {}", lo * 2, UNITS[u.min(5)])
        }
    }
}

/// Bytes in the binary unit that reads best.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else if v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

impl Analysis {
    fn new(ranks: u32) -> Analysis {
        Analysis {
            ranks,
            functions: BTreeMap::new(),
            function_families: BTreeMap::new(),
            sites: BTreeMap::new(),
            comms: BTreeMap::new(),
            per_rank: vec![Totals::default(); ranks as usize],
            histograms: BTreeMap::new(),
            matrix: Matrix::new(ranks),
            unresolved_calls: 0,
            unknown_functions: 0,
            matrix_comm: None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        rank: u32,
        function: &str,
        site: Site,
        source: Option<&str>,
        family: Option<u32>,
        e: &Effect,
        n: u64,
    ) {
        // `free` events (a buffer MPI had used, freed by the program) are not MPI calls.
        if n == 0 || function == "free" {
            return;
        }
        self.functions
            .entry(function.to_string())
            .or_default()
            .add(e, n);
        if let Some(f) = family {
            *self
                .function_families
                .entry(function.to_string())
                .or_default()
                .entry(f)
                .or_default() += n;
        }
        let ranks = self.ranks as usize;
        let s = self.sites.entry(site).or_insert_with(|| SiteStats {
            function: function.to_string(),
            source: source.map(str::to_string),
            per_rank: vec![0; ranks],
            ..SiteStats::default()
        });
        s.totals.add(e, n);
        s.per_rank[rank as usize] += n;
        if let Some(f) = family {
            *s.families.entry(f).or_default() += n;
        }
        if let Some(c) = &e.comm {
            self.comms.entry(c.clone()).or_default().add(e, n);
        }
        self.per_rank[rank as usize].add(e, n);
        if let Some(size) = e.size {
            *self
                .histograms
                .entry(function.to_string())
                .or_default()
                .entry(bucket(size))
                .or_default() += n;
        }
        if e.unresolved {
            self.unresolved_calls += n;
        }
        let selected = match (&self.matrix_comm, &e.comm) {
            (None, _) => true,
            // `comm5` selects every communicator sharing that id, `comm5@4` one of them.
            (Some(wanted), Some(c)) => wanted == c || wanted == context::comm_id_of_name(c),
            (Some(_), None) => false,
        };
        if selected {
            self.matrix.add(e, n);
        }
    }

    /// Credits `bytes` that arrived at `rank`'s receives of `key`.
    fn credit(&mut self, rank: u32, key: &arrivals::Key, bytes: u64) {
        let sums = [
            self.functions.get_mut(&key.function),
            self.sites.get_mut(&key.site).map(|s| &mut s.totals),
            key.comm.as_ref().and_then(|c| self.comms.get_mut(c)),
            self.per_rank.get_mut(rank as usize),
        ];
        for t in sums.into_iter().flatten() {
            t.bytes_received += bytes;
        }
    }

    /// Credits what arrived at every rank's receives ([`arrivals::settle`]).
    fn settle(&mut self, ranks: Vec<arrivals::Gathered>) {
        for (rank, credits) in arrivals::settle(ranks).into_iter().enumerate() {
            for (key, bytes) in credits {
                self.credit(rank as u32, &key, bytes);
            }
        }
    }
}

/// The function name and slots of a parsed signature.
fn function_of<'t>(trace: &'t Trace, sig: &Signature) -> Option<(&'t str, &'t [String])> {
    trace
        .catalog
        .iter()
        .find(|f| f.id == sig.function)
        .map(|f| (f.name.as_str(), f.slots.as_slice()))
}

/// A thread's calls as (terminal, call site, filled signature for skeletons, multiplicity).
type Weighted = Vec<(u32, Option<u32>, Option<Signature>, u64)>;

/// The weighted calls of one thread, from its grammar's and trace tree's counts.
fn weighted_calls(
    trace: &Trace,
    entry: &conifer_trace::stored::RankEntry,
    thread: usize,
) -> Weighted {
    let record = &trace.record;
    let grammar = &record.grammars[entry.threads[thread] as usize];
    let mut out: Weighted = Vec::new();
    let mut counts: HashMap<(u32, Option<u32>), u64> = HashMap::new();
    for (t, n) in grammar.terminal_counts() {
        *counts.entry((t, None)).or_default() += n;
    }
    let tree = entry
        .trees
        .get(thread)
        .copied()
        .filter(|&t| t != conifer_trace::forest::NO_TREE);
    if let (Some(tree), Some(forest)) = (tree, record.forest.as_ref()) {
        for (v, r) in forest.records(tree).into_iter().enumerate() {
            let id = forest.structure.ids.get(v).copied();
            for (t, n) in r.terminals.value_counts() {
                *counts.entry((t as u32, id)).or_default() += n;
            }
        }
    }
    let streams = entry
        .streams
        .get(thread)
        .and_then(|&s| record.streams.get(s as usize));
    let skeletons: HashMap<u32, &[conifer_compress::tree::Series]> = streams
        .map(|s| {
            s.entries
                .iter()
                .map(|(t, series)| (*t, series.as_slice()))
                .collect()
        })
        .unwrap_or_default();
    let mut keys: Vec<_> = counts.into_iter().collect();
    keys.sort_unstable();
    let mut completion = streams.map_or_else(HashMap::new, |s| {
        completion_fills::completion_fills(record, entry, thread, s)
    });
    let mut i = 0;
    while i < keys.len() {
        let t = keys[i].0 .0;
        if let Some(fills) = completion.remove(&keys[i].0) {
            for (filled, k) in fills {
                out.push((t, keys[i].0 .1, filled, k));
            }
            i += 1;
            continue;
        }
        let Some(series) = skeletons.get(&t) else {
            out.push((t, keys[i].0 .1, None, keys[i].1));
            i += 1;
            continue;
        };
        // A skeleton: all its (site, calls) groups at once.
        let mut j = i;
        while j < keys.len() && keys[j].0 .0 == t {
            j += 1;
        }
        let group = &keys[i..j];
        let parsed = Signature::parse(&record.signatures[t as usize]);
        let slots = parsed
            .as_ref()
            .and_then(|sig| function_of(trace, sig))
            .map_or(&[][..], |(_, slots)| slots);
        match parsed {
            Some(sig) => {
                let calls: Vec<u64> = group.iter().map(|k| k.1).collect();
                // At several call sites, which call was made where takes the thread's order.
                let order = (group.len() > 1).then(|| {
                    let index: HashMap<Option<u32>, usize> = group
                        .iter()
                        .enumerate()
                        .map(|(g, ((_, site), _))| (*site, g))
                        .collect();
                    let ids = record.forest.as_ref().map(|f| &f.structure.ids);
                    let mut terminals = record.thread_terminals(entry, thread);
                    let mut order = Vec::new();
                    while let Some(x) = terminals.next() {
                        if x == t {
                            let site = terminals
                                .site()
                                .and_then(|v| ids.and_then(|ids| ids.get(v as usize).copied()));
                            order.push(index.get(&site).copied().unwrap_or(usize::MAX));
                        }
                    }
                    order
                });
                let fills = skeleton::fills(&sig, slots, series, &calls, order.as_deref());
                for (((_, site), _), fills) in group.iter().zip(fills) {
                    for (filled, k) in fills {
                        out.push((t, *site, Some(filled), k));
                    }
                }
            }
            None => group
                .iter()
                .for_each(|((t, site), n)| out.push((*t, *site, None, *n))),
        }
        i = j;
    }
    out
}

/// The site of a call (terminal `t`, structure-tree site `site`, recorded `caller`, timing
/// family `family`), and its source position.
pub(crate) fn site_of(
    trace: &Trace,
    family: Option<u32>,
    t: u32,
    site: Option<u32>,
    caller: Option<conifer_trace::caller::Caller>,
) -> (Site, Option<&str>) {
    if let (None, Some(c)) = (site, caller) {
        return (
            Site::Address {
                module: c.module,
                offset: c.offset,
            },
            None,
        );
    }
    match site {
        Some(id) => {
            let source = trace.record.forest.as_ref().and_then(|f| {
                let v = f.structure.ids.iter().position(|&i| i == id)?;
                f.structure.locs.get(v)?.as_deref()
            });
            (Site::Tree(id), source)
        }
        None => match family {
            Some(f) => (Site::Family(f), None),
            None => (Site::Signature(t), None),
        },
    }
}

/// The statistics of `trace`, computed on its compressed form. `progress(done, total)` is
/// called as ranks are done.
pub fn analyze(
    trace: &Trace,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Analysis, AnalyzeError> {
    analyze_with(trace, &Options::default(), progress)
}

/// What to analyse.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only calls naming this communicator (as the decoder prints it) enter the matrix.
    pub matrix_comm: Option<String>,
}

/// What both ways of analysing start from: the rank count, the calls' timing families, the
/// communicators, and an empty analysis with `options` applied.
fn start(trace: &Trace, options: &Options) -> (u32, Families, context::CommTable, Analysis) {
    let ranks = trace.meta.ranks;
    let mut a = Analysis::new(ranks);
    a.matrix_comm.clone_from(&options.matrix_comm);
    (
        ranks,
        Families::new(trace),
        context::CommTable::new(trace),
        a,
    )
}

/// [`analyze`] with options.
pub fn analyze_with(
    trace: &Trace,
    options: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Analysis, AnalyzeError> {
    let (ranks, families, comms, mut a) = start(trace, options);
    // Threads with the same grammar, tree and streams have the same weighted calls.
    let mut shared: HashMap<(u32, u32, u32), std::rc::Rc<Weighted>> = HashMap::new();
    let mut arrived = Vec::new();
    for (rank, entry) in trace.record.ranks.iter().enumerate() {
        let rank = rank as u32;
        let mut threads = Vec::new();
        for thread in 0..entry.threads.len() {
            let key = (
                entry.threads[thread],
                entry.trees.get(thread).copied().unwrap_or(u32::MAX),
                entry.streams.get(thread).copied().unwrap_or(u32::MAX),
            );
            let w = shared
                .entry(key)
                .or_insert_with(|| std::rc::Rc::new(weighted_calls(trace, entry, thread)))
                .clone();
            threads.push(w);
        }
        // The rank's distinct signatures, parsed once.
        let mut sigs: Vec<(Cow<Signature>, u32, Option<u32>, u64)> = Vec::new();
        for w in &threads {
            for (t, site, filled, n) in w.iter() {
                let sig = match filled {
                    Some(sig) => Some(Cow::Borrowed(sig)),
                    // Parsed per rank, not kept: signatures with long arrays (a Waitany over
                    // every peer) would otherwise hold memory for all ranks at once.
                    None => Signature::parse(&trace.record.signatures[*t as usize]).map(Cow::Owned),
                };
                let sig = sig.ok_or_else(|| {
                    AnalyzeError(format!("rank {rank}: signature {t} is malformed"))
                })?;
                // Integers the merge stored as functions of the rank, as this rank passed them.
                let mut sig = sig;
                if conifer_trace::recorded::has_rank_affine(&sig) {
                    conifer_trace::recorded::resolve(sig.to_mut(), rank);
                }
                sigs.push((sig, *t, *site, *n));
            }
        }
        let args: Vec<Option<Args>> = sigs
            .iter()
            .map(|(s, ..)| {
                function_of(trace, s).map(|(name, slots)| Args {
                    name,
                    slots,
                    values: &s.values,
                })
            })
            .collect();
        let ctx = RankContext::new(trace, &comms, rank, args.iter().flatten().copied());
        let mut arrivals = arrivals::RankArrivals::default();
        for ((sig, t, site, n), args) in sigs.iter().zip(&args) {
            let Some(args) = args else {
                a.unknown_functions += n;
                continue;
            };
            let e = effect::evaluate(args, &ctx);
            let family = families.of(*t, sig);
            let (s, source) = site_of(trace, family, *t, *site, sig.caller);
            a.add(rank, args.name, s, source, family, &e, *n);
            let seen = arrivals::Seen::new(args, &e, arrivals::fortran(trace, sig), s);
            arrivals.add(seen, &ctx, *n);
        }
        arrived.push(arrivals.gather(&ctx));
        progress(u64::from(rank) + 1, u64::from(ranks));
    }
    a.settle(arrived);
    Ok(a)
}

/// The same statistics computed by expanding every call of every rank (`Trace::calls`): the
/// reference [`analyze`] is checked against.
pub fn analyze_expanded(
    trace: &Trace,
    options: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Analysis, AnalyzeError> {
    let (ranks, families, comms, mut a) = start(trace, options);
    let reader = trace.reader();
    let mut arrived = Vec::new();
    for rank in 0..ranks {
        let entry = &trace.record.ranks[rank as usize];
        let ctx = RankContext::of_rank(&reader, &comms, rank)?;
        let mut arrivals = arrivals::RankArrivals::default();
        let terminals = (0..entry.threads.len())
            .flat_map(|thread| trace.record.thread_terminals(entry, thread));
        for (call, t) in reader.calls(rank).zip(terminals) {
            let call = call.map_err(|e| AnalyzeError(e.0))?;
            let args = Args {
                name: call.name,
                slots: call.slots,
                values: &call.signature.values,
            };
            let e = effect::evaluate(&args, &ctx);
            let family = families.of(t, &call.signature);
            let (s, source) = site_of(trace, family, t, call.site, call.signature.caller);
            a.add(rank, call.name, s, source, family, &e, 1);
            let fortran = arrivals::fortran(trace, &call.signature);
            arrivals.add(arrivals::Seen::new(&args, &e, fortran, s), &ctx, 1);
        }
        arrived.push(arrivals.gather(&ctx));
        progress(u64::from(rank) + 1, u64::from(ranks));
    }
    a.settle(arrived);
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 1);
        assert_eq!((bucket(64), bucket(127), bucket(128)), (7, 7, 8));
        assert_eq!(bucket_label(7), "64-127 B");
        assert_eq!(bucket_label(bucket(1024)), "1-2 KiB");
        assert_eq!(bucket_label(bucket(3 << 20)), "2-4 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
}
