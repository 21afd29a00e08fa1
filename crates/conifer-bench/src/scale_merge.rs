//! The tracer's pairwise merge run in-process: level k joins the survivor of ranks [i, i+2^k)
//! with that of [i+2^k, i+2^(k+1)), the right one serialised and read back as the message
//! `conifer-preload`'s pairwise rounds send, then [`conifer_write::merge::absorb`]ed. Threads
//! stand in for ranks; leaves are built and merged in aligned batches of 2^10 so that 10⁶ ranks
//! never exist at once, which changes when merges run, never which records they join.

use crate::alloc_count;
use conifer_format::stored::TraceRecord;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Leaves per batch, as a power of two.
const BATCH_LEVELS: u32 = 10;

/// What one merge level cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LevelStats {
    /// Pairwise merges in the level.
    pub merges: u64,
    /// The slowest merge's work (serialise, read back, absorb), s: the level's time in a
    /// real run, network aside.
    pub critical_s: f64,
    /// All merges' work, s.
    pub cpu_s: f64,
    /// Bytes of all the level's messages.
    pub bytes_moved: u64,
    /// The largest message.
    pub largest_message: u64,
    /// The busiest merger's peak memory: its record plus what the merge allocated at most.
    pub peak_bytes: i64,
    /// The largest merged record in memory after the level.
    pub record_bytes: i64,
}

impl LevelStats {
    fn add(&mut self, other: &LevelStats) {
        self.merges += other.merges;
        self.critical_s = self.critical_s.max(other.critical_s);
        self.cpu_s += other.cpu_s;
        self.bytes_moved += other.bytes_moved;
        self.largest_message = self.largest_message.max(other.largest_message);
        self.peak_bytes = self.peak_bytes.max(other.peak_bytes);
        self.record_bytes = self.record_bytes.max(other.record_bytes);
    }
}

/// A partly merged record and the memory it holds.
struct Part {
    record: TraceRecord,
    footprint: i64,
}

/// The outcome of a whole merge.
pub struct Merged {
    /// The record of all ranks.
    pub record: TraceRecord,
    /// Per level, from the leaves up.
    pub levels: Vec<LevelStats>,
    /// The largest rank record: in memory, and serialised.
    pub largest_leaf: (i64, u64),
    /// Time building the leaves (generating and compressing every rank's calls), s.
    pub leaves_s: f64,
}

fn join(left: &mut Part, right: Part, stats: &mut LevelStats) {
    let resident = left.footprint;
    let start = alloc_count::live();
    alloc_count::reset_peak();
    let clock = Instant::now();
    let message = right.record.to_bytes();
    let theirs = TraceRecord::from_bytes(&message).expect("a merge message reads back");
    let moved = message.len() as u64;
    drop(message);
    conifer_write::merge::absorb(&mut left.record, theirs);
    let work = clock.elapsed().as_secs_f64();
    let peak = alloc_count::peak() - start;
    left.footprint += alloc_count::live() - start;
    drop(right);
    stats.add(&LevelStats {
        merges: 1,
        critical_s: work,
        cpu_s: work,
        bytes_moved: moved,
        largest_message: moved,
        peak_bytes: resident + peak,
        record_bytes: left.footprint,
    });
}

/// One level over `parts`: each even-indexed part absorbs the next one.
fn level(parts: Vec<Part>, stats: &mut LevelStats) -> Vec<Part> {
    let mut out = Vec::with_capacity(parts.len().div_ceil(2));
    let mut it = parts.into_iter();
    while let Some(mut left) = it.next() {
        if let Some(right) = it.next() {
            join(&mut left, right, stats);
        }
        out.push(left);
    }
    out
}

fn add_levels(total: &mut Vec<LevelStats>, first: usize, more: &[LevelStats]) {
    for (k, s) in more.iter().enumerate() {
        if total.len() <= first + k {
            total.resize(first + k + 1, LevelStats::default());
        }
        total[first + k].add(s);
    }
}

/// Merges ranks `0..p`, rank `r`'s record being `leaf(r)`, on `threads` threads.
pub fn merge_all(p: u32, threads: usize, leaf: &(dyn Fn(u32) -> TraceRecord + Sync)) -> Merged {
    let batch = 1u32 << BATCH_LEVELS;
    let batches = p.div_ceil(batch) as usize;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Part>>> = Mutex::new((0..batches).map(|_| None).collect());
    let levels: Mutex<Vec<LevelStats>> = Mutex::new(Vec::new());
    let largest: Mutex<(i64, u64)> = Mutex::new((0, 0));
    let leaves_s = Mutex::new(0.0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let b = next.fetch_add(1, Ordering::Relaxed);
                if b >= batches {
                    break;
                }
                let first = b as u32 * batch;
                let built = Instant::now();
                let mut parts: Vec<Part> = (first..(first + batch).min(p))
                    .map(|r| {
                        let before = alloc_count::live();
                        let record = leaf(r);
                        let footprint = alloc_count::live() - before;
                        Part { record, footprint }
                    })
                    .collect();
                *leaves_s.lock().unwrap() += built.elapsed().as_secs_f64();
                let mut big = (0, 0);
                for part in &parts {
                    big.0 = big.0.max(part.footprint);
                    big.1 = big.1.max(part.record.to_bytes().len() as u64);
                }
                let mut mine = Vec::new();
                while parts.len() > 1 {
                    let mut stats = LevelStats::default();
                    parts = level(parts, &mut stats);
                    mine.push(stats);
                }
                add_levels(&mut levels.lock().unwrap(), 0, &mine);
                let mut l = largest.lock().unwrap();
                *l = (l.0.max(big.0), l.1.max(big.1));
                results.lock().unwrap()[b] = parts.pop();
            });
        }
    });
    let mut parts: Vec<Part> = results
        .into_inner()
        .unwrap()
        .into_iter()
        .flatten()
        .collect();
    let mut levels = levels.into_inner().unwrap();
    while parts.len() > 1 {
        let mut stats = LevelStats::default();
        parts = upper_level(parts, threads, &mut stats);
        levels.push(stats);
    }
    Merged {
        record: parts.pop().map(|p| p.record).unwrap_or_default(),
        levels,
        largest_leaf: largest.into_inner().unwrap(),
        leaves_s: leaves_s.into_inner().unwrap(),
    }
}

/// A level above the batches: its pairs split among `threads` threads.
fn upper_level(parts: Vec<Part>, threads: usize, stats: &mut LevelStats) -> Vec<Part> {
    let mut pairs: Vec<Vec<Part>> = Vec::new();
    let mut it = parts.into_iter();
    while let Some(left) = it.next() {
        let mut pair = vec![left];
        pair.extend(it.next());
        pairs.push(pair);
    }
    let per = pairs.len().div_ceil(threads.max(1)).max(1);
    let mut groups: Vec<Vec<Vec<Part>>> = Vec::new();
    while !pairs.is_empty() {
        let rest = pairs.split_off(per.min(pairs.len()));
        groups.push(std::mem::replace(&mut pairs, rest));
    }
    let outs: Vec<(Vec<Part>, LevelStats)> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|group| {
                s.spawn(move || {
                    let mut st = LevelStats::default();
                    let joined = group
                        .into_iter()
                        .flat_map(|pair| level(pair, &mut st))
                        .collect::<Vec<_>>();
                    (joined, st)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut out = Vec::new();
    for (joined, st) in outs {
        stats.add(&st);
        out.extend(joined);
    }
    out
}
