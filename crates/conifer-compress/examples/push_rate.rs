//! Measures the cost of `Grammar::push` in ns per terminal on repetitive,
//! nested-loop and random input. Each workload runs several times and the
//! median is printed. Run with
//! `cargo run -p conifer-compress --release --example push_rate [FILTER]`,
//! FILTER selecting the workloads whose name contains it.

use std::hint::black_box;
use std::time::Instant;

use conifer_compress::Grammar;

const RUNS: usize = 7;

/// xorshift64: a reproducible stream without a dependency.
fn random(len: usize, alphabet: u64, mut state: u64) -> Vec<u32> {
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % alphabet) as u32
        })
        .collect()
}

/// `for i in 0..outer { a; for _ in 0..8 { b c d }; if i is even { e } else { f } }`
fn nested(outer: usize) -> Vec<u32> {
    let mut sequence = Vec::new();
    for i in 0..outer {
        sequence.push(0);
        for _ in 0..8 {
            sequence.extend([1, 2, 3]);
        }
        sequence.push(if i % 2 == 0 { 4 } else { 5 });
    }
    sequence
}

/// `for i in 0..outer { a; for _ in 0..(i * 7 % 16) { b c }; d }`: repetitive
/// but not periodic at the outer level, so most pushes take the Sequitur
/// path rather than the repeat fast path.
fn irregular(outer: usize) -> Vec<u32> {
    let mut sequence = Vec::new();
    for i in 0..outer {
        sequence.push(0);
        for _ in 0..(i * 7 % 16) {
            sequence.extend([1, 2]);
        }
        sequence.push(3);
    }
    sequence
}

fn median_ns_per_push(sequence: &[u32]) -> (f64, usize, usize) {
    let mut samples = Vec::new();
    let mut size = (0, 0);
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut grammar = Grammar::new();
        for &terminal in sequence {
            grammar.push(black_box(terminal));
        }
        samples.push(start.elapsed().as_secs_f64() * 1e9 / sequence.len() as f64);
        size = (grammar.rule_count(), grammar.item_count());
        black_box(grammar);
    }
    samples.sort_by(f64::total_cmp);
    (samples[RUNS / 2], size.0, size.1)
}

fn main() {
    let workloads: [(&str, Vec<u32>); 6] = [
        (
            "5-symbol loop x 1,000,000",
            [1, 2, 3, 4, 5].repeat(1_000_000),
        ),
        ("nested loops (a (bcd)^8 e|f) x 200,000", nested(200_000)),
        (
            "irregular nest (a (bc)^(7i%16) d) x 200,000",
            irregular(200_000),
        ),
        ("random, alphabet 4, 2,000,000", random(2_000_000, 4, 1)),
        ("random, alphabet 64, 2,000,000", random(2_000_000, 64, 2)),
        (
            "random, alphabet 100,000, 2,000,000",
            random(2_000_000, 100_000, 3),
        ),
    ];
    let filter = std::env::args().nth(1).unwrap_or_default();
    for (name, sequence) in workloads.iter().filter(|(name, _)| name.contains(&filter)) {
        let (ns, rules, items) = median_ns_per_push(sequence);
        println!("{name:<45} {ns:>7.1} ns/push (median of {RUNS}), {rules} rules, {items} items");
    }
}
