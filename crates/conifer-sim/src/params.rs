//! The model's parameters and how users give them: `--set L=2us,G=0.1ns/B,eager=64KiB`,
//! a `--net FILE.toml` of `key = value` lines, `--compute-scale X`.
//!
//! | key | meaning | unit | default |
//! |---|---|---|---|
//! | `L` | latency: wire time of a message's first byte | time | 400 ns |
//! | `o` | CPU overhead of a send and of a receive (sets `os` and `or`) | time | 200 ns |
//! | `os`, `or` | send / receive overhead separately | time | 200 ns |
//! | `g` | gap: least time between two messages leaving a rank | time | 100 ns |
//! | `G` | gap per byte (inverse bandwidth), overlaps computation | time/B | 0.1 ns/B |
//! | `O` | LogGPO's per-byte CPU cost that does *not* overlap computation: the copy into and out of the eager buffer, paid by both sides of an eager message | time/B | 0.1 ns/B |
//! | `eager` | largest message sent eagerly; larger ones use rendezvous | bytes | 4 KiB |
//! | `R` | rendezvous handshake: extra time before a rendezvous message's data leaves (single-copy set-up, registration) | time | 0 ns |
//! | `self` | a message a rank sends itself (a copy, no network): CPU time, half at the send, half at the receive | time | 60 ns |
//! | `selfG` | per byte of a message to self, split the same way | time/B | 0.02 ns/B |
//! | `compute` | factor on every recorded computation interval | number | 1 |
//!
//! The defaults are those of Open MPI's shared-memory transport (vader) on a current
//! x86 machine: ≈ 0.4 µs latency, ≈ 10 GB/s copies, 4 KiB eager limit. Times take `ns`,
//! `us`, `ms` or `s` (bare numbers are nanoseconds); per-byte values `ns/B` (or a time
//! over `B`); sizes `B`, `KiB`, `MiB`, `GiB`, `KB`, `MB`, `GB` (bare numbers are bytes).

use serde::Serialize;

/// The simulator's parameters: LogGP plus LogGPO's non-overlapped per-byte cost, the eager
/// limit and a factor on computation. Times in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Params {
    /// L, latency (ns).
    pub latency: f64,
    /// o_s, CPU overhead of a send (ns).
    pub send_overhead: f64,
    /// o_r, CPU overhead of a receive (ns).
    pub recv_overhead: f64,
    /// g, least time between two injections by one rank (ns).
    pub gap: f64,
    /// G, time per byte on the wire (ns/B).
    pub gap_per_byte: f64,
    /// O, per-byte CPU time of an eager message on each side, not overlapped (ns/B).
    pub copy_per_byte: f64,
    /// Largest message sent eagerly (bytes).
    pub eager_limit: u64,
    /// R, time between a rendezvous message's clear-to-send and its data leaving (ns).
    pub rendezvous: f64,
    /// CPU time of a message a rank sends itself, half at each end (ns).
    pub self_overhead: f64,
    /// Per-byte CPU time of a message to self, half at each end (ns/B).
    pub self_per_byte: f64,
    /// Factor on every recorded computation interval.
    pub compute_scale: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            latency: 400.0,
            send_overhead: 200.0,
            recv_overhead: 200.0,
            gap: 100.0,
            gap_per_byte: 0.1,
            copy_per_byte: 0.1,
            eager_limit: 4096,
            rendezvous: 0.0,
            self_overhead: 60.0,
            self_per_byte: 0.02,
            compute_scale: 1.0,
        }
    }
}

impl Params {
    /// Sets parameter `key` (a key of the module table) from its text `value`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let bad = |what: &str| format!("bad value {value:?} for {key}: expected {what}");
        match key {
            "L" => self.latency = time(value).ok_or_else(|| bad("a time such as 2us"))?,
            "o" => {
                let t = time(value).ok_or_else(|| bad("a time such as 200ns"))?;
                self.send_overhead = t;
                self.recv_overhead = t;
            }
            "os" | "o_s" => {
                self.send_overhead = time(value).ok_or_else(|| bad("a time such as 200ns"))?
            }
            "or" | "o_r" => {
                self.recv_overhead = time(value).ok_or_else(|| bad("a time such as 200ns"))?
            }
            "g" => self.gap = time(value).ok_or_else(|| bad("a time such as 100ns"))?,
            "G" => self.gap_per_byte = per_byte(value).ok_or_else(|| bad("such as 0.1ns/B"))?,
            "O" => self.copy_per_byte = per_byte(value).ok_or_else(|| bad("such as 0.1ns/B"))?,
            "eager" => self.eager_limit = size(value).ok_or_else(|| bad("a size such as 64KiB"))?,
            "R" => self.rendezvous = time(value).ok_or_else(|| bad("a time such as 1us"))?,
            "self" => self.self_overhead = time(value).ok_or_else(|| bad("a time such as 60ns"))?,
            "selfG" => {
                self.self_per_byte = per_byte(value).ok_or_else(|| bad("such as 0.02ns/B"))?
            }
            "compute" => {
                self.compute_scale = value
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad("a number ≥ 0"))?
            }
            _ => {
                return Err(format!(
                    "unknown parameter {key:?}: use L, o, os, or, g, G, O, eager, R, self, selfG or compute"
                ))
            }
        }
        Ok(())
    }

    /// Applies `key=value,key=value` (the `--set` syntax).
    pub fn set_all(&mut self, assignments: &str) -> Result<(), String> {
        for item in assignments.split(',').filter(|s| !s.trim().is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("bad setting {item:?}: expected KEY=VALUE"))?;
            self.set(k.trim(), v.trim())?;
        }
        Ok(())
    }

    /// Applies a parameter file: `key = value` lines (TOML keys with string or number
    /// values), `#` comments, `[section]` headers ignored.
    pub fn set_file(&mut self, text: &str) -> Result<(), String> {
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() || line.starts_with('[') {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| format!("line {}: expected key = value", n + 1))?;
            let v = v.trim().trim_matches('"');
            self.set(k.trim().trim_matches('"'), v)
                .map_err(|e| format!("line {}: {e}", n + 1))?;
        }
        Ok(())
    }

    /// The parameters as a parameter file `set_file` reads back.
    pub fn to_file(&self) -> String {
        format!(
            "# conifer sim network parameters (times in ns)\nL = {}\nos = {}\nor = {}\ng = {}\n\
             G = \"{}ns/B\"\nO = \"{}ns/B\"\neager = {}\nR = {}\nself = {}\nselfG = \"{}ns/B\"\n",
            self.latency,
            self.send_overhead,
            self.recv_overhead,
            self.gap,
            self.gap_per_byte,
            self.copy_per_byte,
            self.eager_limit,
            self.rendezvous,
            self.self_overhead,
            self.self_per_byte
        )
    }
}

/// A number followed by a suffix from `units` (the empty suffix included), scaled.
fn with_unit(text: &str, units: &[(&str, f64)]) -> Option<f64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let x: f64 = number.parse().ok()?;
    let scale = units.iter().find(|(u, _)| *u == unit.trim())?.1;
    Some(x * scale).filter(|v| v.is_finite() && *v >= 0.0)
}

const TIME_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
];

/// A time in nanoseconds.
pub fn time(text: &str) -> Option<f64> {
    with_unit(text, TIME_UNITS)
}

/// A time per byte in nanoseconds per byte (`0.1ns/B`, `1us/B`, bare ns).
pub fn per_byte(text: &str) -> Option<f64> {
    time(text.trim().strip_suffix("/B").unwrap_or(text))
}

/// A size in bytes.
pub fn size(text: &str) -> Option<u64> {
    let v = with_unit(
        text,
        &[
            ("", 1.0),
            ("B", 1.0),
            ("KiB", 1024.0),
            ("MiB", 1048576.0),
            ("GiB", 1073741824.0),
            ("KB", 1e3),
            ("MB", 1e6),
            ("GB", 1e9),
        ],
    )?;
    Some(v.round() as u64)
}
