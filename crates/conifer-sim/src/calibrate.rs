//! Fitting the model's parameters to measurements of this machine (`conifer calibrate`).
//!
//! The benchmark (Netgauge's PRTT method, Hoefler et al. 2007) measures, for each message
//! size s between two ranks, medians over repetitions of:
//! - `PRTT(1, 0, s)`: a ping-pong round trip of s bytes each way;
//! - `PRTT(n, 0, s)`: n back-to-back sends of s bytes, then the reply of s bytes;
//! - `PRTT(n, d, s)`: the same with a delay d (busy waiting) between the sends;
//! - the time of a receive of s bytes posted after the message had time to arrive;
//! - the time of an `MPI_Sendrecv` of s bytes from a rank to itself.
//!
//! These give four *observables* per size: the one-way time `PRTT(1,0,s)/2`; the gap per
//! message `(PRTT(n,0,s) − PRTT(1,0,s))/(n−1)`; the sender's time per message
//! `(PRTT(n,d,s) − PRTT(1,0,s))/(n−1) − d`; the late receive. [`predict`] gives what the
//! engine's model (see [`crate::engine`]) predicts for each, worked out from its rules
//! (and checked against the engine by the tests). [`fit`] finds the parameters that
//! minimise the relative RMS difference over all sizes and observables: for every
//! candidate eager limit (each measured size, or none), a start from linear regressions,
//! refined by Nelder–Mead on the logarithms of L, o_s, o_r, g, G, O and R; the best
//! candidate wins. The messages to self are fitted apart, by a line through their times
//! (`self + m·selfG`): nothing else in the model touches them.

use crate::params::Params;
use serde::Serialize;

/// First word of the benchmark's output, and the format's version.
pub const HEADER: &str = "conifer-calibrate 1";

/// The benchmark's medians at one message size (ns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    /// Message size s, bytes.
    pub bytes: u64,
    /// `PRTT(1, 0, s)`.
    pub rtt: f64,
    /// `PRTT(n, 0, s)`.
    pub train: f64,
    /// `PRTT(n, d, s)`.
    pub train_delayed: f64,
    /// d.
    pub delay: f64,
    /// A receive of s bytes that had arrived before it was posted.
    pub recv: f64,
    /// An `MPI_Sendrecv` of s bytes to the rank itself (older benchmark outputs lack it).
    pub self_exchange: Option<f64>,
}

/// The four observables at one size (ns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Observed {
    /// One-way time of a ping-pong.
    pub one_way: f64,
    /// Time between two back-to-back messages.
    pub gap: f64,
    /// The sender's time per message when it is not limited by the network.
    pub send: f64,
    /// A receive of a message already there.
    pub recv: f64,
}

impl Observed {
    fn values(&self) -> [f64; 4] {
        [self.one_way, self.gap, self.send, self.recv]
    }
}

/// Names of the observables, in [`Observed`]'s order.
pub const OBSERVABLES: [&str; 4] = ["one-way", "gap", "send", "recv"];

/// A whole benchmark run: train length and samples by increasing size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Benchmark {
    /// Messages per train, n ≥ 2.
    pub train_length: u32,
    /// The MPI library as it names itself.
    pub library: String,
    /// One per size, increasing.
    pub samples: Vec<Sample>,
}

impl Benchmark {
    /// Reads the benchmark's output: a line `conifer-calibrate 1 n=N`, optionally `lib TEXT`,
    /// then `s rtt train train_delayed delay recv [self]` lines (numbers, times in ns).
    pub fn parse(text: &str) -> Result<Benchmark, String> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let head = lines
            .next()
            .ok_or("the benchmark printed nothing")?
            .strip_prefix(HEADER)
            .ok_or("the benchmark's output does not start with its header")?;
        let train_length = head
            .trim()
            .strip_prefix("n=")
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| *n >= 2)
            .ok_or("bad train length in the benchmark's header")?;
        let mut b = Benchmark {
            train_length,
            library: String::new(),
            samples: Vec::new(),
        };
        for line in lines {
            if let Some(lib) = line.strip_prefix("lib ") {
                b.library = lib.trim().to_string();
                continue;
            }
            let v: Vec<f64> = line
                .split_whitespace()
                .map(|x| x.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0))
                .collect::<Option<_>>()
                .filter(|v: &Vec<f64>| v.len() == 6 || v.len() == 7)
                .ok_or_else(|| format!("bad benchmark line {line:?}"))?;
            b.samples.push(Sample {
                bytes: v[0] as u64,
                rtt: v[1],
                train: v[2],
                train_delayed: v[3],
                delay: v[4],
                recv: v[5],
                self_exchange: v.get(6).copied(),
            });
        }
        if b.samples.len() < 3 {
            return Err(format!(
                "the benchmark measured {} sizes; at least 3 are needed",
                b.samples.len()
            ));
        }
        b.samples.sort_by_key(|s| s.bytes);
        Ok(b)
    }

    /// The observables of sample `s`.
    pub fn observed(&self, s: &Sample) -> Observed {
        let n1 = f64::from(self.train_length - 1);
        Observed {
            one_way: s.rtt / 2.0,
            gap: (s.train - s.rtt) / n1,
            send: (s.train_delayed - s.rtt) / n1 - s.delay,
            recv: s.recv,
        }
    }
}

/// The model's observables at message size `bytes`, the sender delaying `delay` ns between
/// the messages of a delayed train (the derivations follow the engine's rules:
/// eager messages pipeline, rendezvous ones are three hops, the sender blocked until its
/// data left).
pub fn predict(p: &Params, bytes: u64, delay: f64) -> Observed {
    let m = bytes as f64;
    let (l, os, or, g) = (p.latency, p.send_overhead, p.recv_overhead, p.gap);
    let wire = m * p.gap_per_byte;
    if bytes <= p.eager_limit {
        let (send_cpu, recv_cpu) = (os + m * p.copy_per_byte, or + m * p.copy_per_byte);
        let interval = send_cpu.max(g).max(wire).max(recv_cpu);
        Observed {
            one_way: os + wire + l + recv_cpu,
            gap: interval,
            send: (send_cpu + delay).max(interval) - delay,
            recv: recv_cpu,
        }
    } else {
        let r = p.rendezvous;
        Observed {
            one_way: 2.0 * os + 3.0 * l + r + wire + or,
            gap: 2.0 * l + r + os.max(or) + os + wire,
            send: (delay + os).max(or) + os + 2.0 * l + r + wire - delay,
            recv: 2.0 * l + r + os + wire + or,
        }
    }
}

/// The model's time of an `MPI_Sendrecv` of `bytes` from a rank to itself.
pub fn predict_self(p: &Params, bytes: u64) -> f64 {
    p.self_overhead + bytes as f64 * p.self_per_byte
}

/// How well parameters reproduce a benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct FitError {
    /// Relative RMS difference, model vs measured, over every size and observable.
    pub overall: f64,
    /// The same per observable ([`OBSERVABLES`] order).
    pub by_observable: [f64; 4],
    /// The same for the messages to self, when measured.
    pub self_exchange: Option<f64>,
}

/// Relative RMS differences of `p`'s predictions from `b`'s observables.
pub fn error(p: &Params, b: &Benchmark) -> FitError {
    let mut sums = [0.0; 4];
    for s in &b.samples {
        let (o, m) = (
            b.observed(s).values(),
            predict(p, s.bytes, s.delay).values(),
        );
        for k in 0..4 {
            sums[k] += relative(m[k], o[k]).powi(2);
        }
    }
    let n = b.samples.len() as f64;
    let selfs: Vec<f64> = b
        .samples
        .iter()
        .filter_map(|s| Some(relative(predict_self(p, s.bytes), s.self_exchange?).powi(2)))
        .collect();
    FitError {
        overall: (sums.iter().sum::<f64>() / (4.0 * n)).sqrt(),
        by_observable: sums.map(|s| (s / n).sqrt()),
        self_exchange: (!selfs.is_empty())
            .then(|| (selfs.iter().sum::<f64>() / selfs.len() as f64).sqrt()),
    }
}

/// Below this, differences are taken as absolute (ns): derived observables of small
/// messages (a train's gap, a send's cost) are differences of timings with noise of this
/// order, and can come out near zero or negative; dividing by them would let noise steer
/// the whole fit (MPICH's quick calibration fitted G = 1e-6 ns/B that way).
const NOISE_NS: f64 = 100.0;

/// (model − measured) / measured, with measured values below [`NOISE_NS`] taken as that.
fn relative(model: f64, measured: f64) -> f64 {
    (model - measured) / measured.max(NOISE_NS)
}

/// Fitted parameters and their error.
#[derive(Debug, Clone, Serialize)]
pub struct Fit {
    /// The parameters (compute scale 1).
    pub params: Params,
    /// Their fit error.
    pub error: FitError,
}

/// Fits the parameters to `b` (see the module documentation).
pub fn fit(b: &Benchmark) -> Fit {
    let (self_overhead, self_per_byte) = fit_self(b);
    let mut candidates: Vec<u64> = vec![0];
    candidates.extend(b.samples.iter().map(|s| s.bytes));
    candidates
        .into_iter()
        .map(|eager| {
            let start = initial(b, eager);
            let objective = |x: &[f64]| error(&from_logs(x, eager), b).overall;
            // A restart from the first result gets Nelder–Mead out of a collapsed simplex.
            let first = nelder_mead(&objective, &to_logs(&start), 3000);
            let best = nelder_mead(&objective, &first, 3000);
            let params = Params {
                self_overhead,
                self_per_byte,
                ..round(&from_logs(&best, eager))
            };
            Fit {
                error: error(&params, b),
                params,
            }
        })
        .min_by(|a, b| a.error.overall.total_cmp(&b.error.overall))
        .expect("at least one candidate")
}

/// `self` and `selfG` from the messages to self: a start from the slope of the times of
/// 16 KiB and more and the median of what the smaller ones take beyond it, refined by
/// Nelder–Mead on the relative RMS difference; the defaults when not measured.
fn fit_self(b: &Benchmark) -> (f64, f64) {
    let pts: Vec<(u64, f64)> = b
        .samples
        .iter()
        .filter_map(|s| Some((s.bytes, s.self_exchange?)))
        .collect();
    let defaults = Params::default();
    if pts.len() < 2 {
        return (defaults.self_overhead, defaults.self_per_byte);
    }
    let large: Vec<(f64, f64)> = pts
        .iter()
        .filter(|p| p.0 >= 16384)
        .map(|&(m, t)| (m as f64, t))
        .collect();
    let per_byte = if large.len() >= 2 {
        least_squares(&large).1
    } else {
        defaults.self_per_byte
    };
    let mut fixed: Vec<f64> = pts
        .iter()
        .filter(|p| p.0 < 16384)
        .map(|&(m, t)| t - m as f64 * per_byte)
        .collect();
    fixed.sort_by(f64::total_cmp);
    let overhead = fixed
        .get(fixed.len() / 2)
        .copied()
        .unwrap_or(defaults.self_overhead);
    let model = |x: &[f64]| Params {
        self_overhead: x[0].exp(),
        self_per_byte: x[1].exp(),
        ..defaults
    };
    let objective = |x: &[f64]| {
        let p = model(x);
        pts.iter()
            .map(|&(m, t)| relative(predict_self(&p, m), t).powi(2))
            .sum::<f64>()
    };
    let start = [overhead.max(FLOOR[0]).ln(), per_byte.max(FLOOR[4]).ln()];
    let best = model(&nelder_mead(&objective, &start, 2000));
    let t = |x: f64| (x * 10.0).round() / 10.0;
    (t(best.self_overhead), significant(best.self_per_byte))
}

/// Starting parameters for eager limit `eager`: least-squares lines through the eager
/// sizes' send and receive times (o_s, o_r, O), the one-way times (L from the intercept,
/// G from the slope; the rendezvous sizes' slope when there are two) and g from the
/// smallest size's gap.
fn initial(b: &Benchmark, eager: u64) -> Params {
    let obs: Vec<(f64, Observed)> = b
        .samples
        .iter()
        .map(|s| (s.bytes as f64, b.observed(s)))
        .collect();
    let (small, large): (Vec<_>, Vec<_>) = obs.iter().partition(|(m, _)| *m <= eager as f64);
    let line = |pts: &[&(f64, Observed)], f: fn(&Observed) -> f64| {
        least_squares(&pts.iter().map(|(m, o)| (*m, f(o))).collect::<Vec<_>>())
    };
    let mut p = Params {
        eager_limit: eager,
        ..Params::default()
    };
    if small.len() >= 2 {
        let (os, o1) = line(&small, |o| o.send);
        let (or, o2) = line(&small, |o| o.recv);
        let (a, slope) = line(&small, |o| o.one_way);
        p.send_overhead = os;
        p.recv_overhead = or;
        p.copy_per_byte = (o1 + o2) / 2.0;
        p.latency = a - os - or;
        p.gap_per_byte = slope - p.copy_per_byte;
    }
    if large.len() >= 2 {
        p.gap_per_byte = line(&large, |o| o.one_way).1;
    }
    p.gap = obs[0].1.gap;
    if let Some((m, o)) = large.first() {
        let without = predict(
            &Params {
                rendezvous: 0.0,
                ..p
            },
            *m as u64,
            0.0,
        );
        p.rendezvous = (o.one_way - without.one_way).max(FLOOR[6]);
    }
    p
}

/// Intercept and slope of the least-squares line through `pts`.
fn least_squares(pts: &[(f64, f64)]) -> (f64, f64) {
    let n = pts.len() as f64;
    let (mx, my) = pts
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let sxx: f64 = pts.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (my - slope * mx, slope)
}

/// The smallest values the fit gives each parameter (ns, ns/B): the logarithms need
/// positive numbers, and these are below anything measurable.
const FLOOR: [f64; 7] = [0.1, 0.1, 0.1, 0.1, 1e-6, 1e-6, 0.1];

fn to_logs(p: &Params) -> Vec<f64> {
    let v = [
        p.latency,
        p.send_overhead,
        p.recv_overhead,
        p.gap,
        p.gap_per_byte,
        p.copy_per_byte,
        p.rendezvous,
    ];
    v.iter().zip(FLOOR).map(|(x, f)| x.max(f).ln()).collect()
}

fn from_logs(x: &[f64], eager: u64) -> Params {
    let v: Vec<f64> = x.iter().zip(FLOOR).map(|(y, f)| y.exp().max(f)).collect();
    Params {
        latency: v[0],
        send_overhead: v[1],
        recv_overhead: v[2],
        gap: v[3],
        gap_per_byte: v[4],
        copy_per_byte: v[5],
        eager_limit: eager,
        rendezvous: v[6],
        ..Params::default()
    }
}

/// `x` to 4 significant digits.
fn significant(x: f64) -> f64 {
    let scale = 10f64.powi(3 - x.log10().floor() as i32);
    (x * scale).round() / scale
}

/// Times to 0.1 ns, per-byte values to 4 significant digits.
fn round(p: &Params) -> Params {
    let t = |x: f64| (x * 10.0).round() / 10.0;
    let b = significant;
    Params {
        latency: t(p.latency),
        send_overhead: t(p.send_overhead),
        recv_overhead: t(p.recv_overhead),
        gap: t(p.gap),
        rendezvous: t(p.rendezvous),
        gap_per_byte: b(p.gap_per_byte),
        copy_per_byte: b(p.copy_per_byte),
        ..*p
    }
}

/// Minimises `f` from `start` by the Nelder–Mead simplex method (standard coefficients),
/// at most `iterations` steps.
fn nelder_mead(f: &dyn Fn(&[f64]) -> f64, start: &[f64], iterations: usize) -> Vec<f64> {
    let n = start.len();
    let mut simplex: Vec<(Vec<f64>, f64)> = (0..=n)
        .map(|i| {
            let mut x = start.to_vec();
            if i > 0 {
                x[i - 1] += 0.5;
            }
            let v = f(&x);
            (x, v)
        })
        .collect();
    let along = |a: &[f64], b: &[f64], t: f64| -> Vec<f64> {
        a.iter().zip(b).map(|(a, b)| a + t * (b - a)).collect()
    };
    for _ in 0..iterations {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        if simplex[n].1 - simplex[0].1 < 1e-10 * simplex[0].1.abs().max(1e-12) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|k| simplex[..n].iter().map(|(x, _)| x[k]).sum::<f64>() / n as f64)
            .collect();
        let worst = simplex[n].clone();
        let reflected = along(&centroid, &worst.0, -1.0);
        let fr = f(&reflected);
        if fr < simplex[0].1 {
            let expanded = along(&centroid, &worst.0, -2.0);
            let fe = f(&expanded);
            simplex[n] = if fe < fr {
                (expanded, fe)
            } else {
                (reflected, fr)
            };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (reflected, fr);
        } else {
            let contracted = along(&centroid, &worst.0, 0.5);
            let fc = f(&contracted);
            if fc < worst.1 {
                simplex[n] = (contracted, fc);
            } else {
                let best = simplex[0].0.clone();
                for point in simplex.iter_mut().skip(1) {
                    point.0 = along(&best, &point.0, 0.5);
                    point.1 = f(&point.0);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex.swap_remove(0).0
}

#[cfg(test)]
mod tests;
