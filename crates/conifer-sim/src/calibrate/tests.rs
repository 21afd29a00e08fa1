//! The closed forms against the engine, and the fit on synthetic measurements.

use super::*;
use crate::engine::{Action, Engine};
use crate::tests::Script;

fn send(req: u64, to: u32, bytes: u64) -> Vec<Action> {
    vec![
        Action::Send {
            req,
            to,
            ctx: 0,
            tag: 0,
            bytes,
            sync: false,
        },
        Action::Wait(vec![req]),
    ]
}

fn recv(req: u64, from: u32) -> Vec<Action> {
    vec![
        Action::Recv {
            req,
            from: Some(from),
            ctx: 0,
            tag: Some(0),
        },
        Action::Wait(vec![req]),
    ]
}

/// One call: `compute` ns of computation, then `actions`.
fn call(compute: f64, actions: Vec<Action>) -> Vec<Action> {
    let mut v = vec![Action::Call { key: 1, compute }];
    v.extend(actions);
    v
}

/// Each rank's end.
fn ends(p: Params, ranks: Vec<Vec<Vec<Action>>>) -> Vec<f64> {
    let programs = ranks.into_iter().map(|r| Script(r.into())).collect();
    let outcome = Engine::new(p, programs).run().expect("runs");
    outcome.ranks.iter().map(|r| r.end).collect()
}

/// PRTT(n, d, s) by the engine: rank 0's end.
fn prtt(p: Params, n: u64, d: f64, s: u64) -> f64 {
    let mut r0: Vec<_> = (0..n)
        .map(|i| call(if i > 0 { d } else { 0.0 }, send(i, 1, s)))
        .collect();
    r0.push(call(0.0, recv(n, 1)));
    let mut r1: Vec<_> = (0..n).map(|i| call(0.0, recv(i, 0))).collect();
    r1.push(call(0.0, send(n, 0, s)));
    ends(p, vec![r0, r1])[0]
}

/// A receive posted `d` after the send: its duration by the engine.
fn late_recv(p: Params, d: f64, s: u64) -> f64 {
    ends(
        p,
        vec![vec![call(0.0, send(0, 1, s))], vec![call(d, recv(0, 0))]],
    )[1] - d
}

fn params() -> Params {
    Params {
        latency: 700.0,
        send_overhead: 150.0,
        recv_overhead: 250.0,
        gap: 400.0,
        gap_per_byte: 0.2,
        copy_per_byte: 0.05,
        eager_limit: 4096,
        rendezvous: 1500.0,
        self_overhead: 80.0,
        self_per_byte: 0.03,
        compute_scale: 1.0,
    }
}

/// The benchmark the model itself would measure with `p`, sizes 1 B to 4 MiB by ×4, each
/// observable off by ± `noise` (relative, alternating).
fn synthetic(p: &Params, noise: f64) -> Benchmark {
    let n = 8u32;
    let samples = (0..12u64)
        .map(|i| {
            let bytes = 1u64 << (2 * i);
            let jitter = |k: u64| 1.0 + noise * if (i + k).is_multiple_of(2) { 1.0 } else { -1.0 };
            // As the benchmark does: d is the round trip plus 2 µs.
            let delay = 2.0 * predict(p, bytes, 0.0).one_way + 2000.0;
            let o = predict(p, bytes, delay);
            let (one_way, gap, send) =
                (o.one_way * jitter(0), o.gap * jitter(1), o.send * jitter(2));
            Sample {
                bytes,
                rtt: 2.0 * one_way,
                train: 2.0 * one_way + f64::from(n - 1) * gap,
                train_delayed: 2.0 * one_way + f64::from(n - 1) * (send + delay),
                delay,
                recv: o.recv * jitter(3),
                self_exchange: Some(predict_self(p, bytes) * jitter(4)),
            }
        })
        .collect();
    Benchmark {
        train_length: n,
        library: "synthetic".into(),
        samples,
    }
}

#[test]
fn closed_forms_match_the_engine() {
    let n = 8;
    for p in [
        params(),
        Params {
            gap: 10.0,
            recv_overhead: 50.0,
            ..params()
        },
    ] {
        for s in [1, 100, 4096, 4097, 100_000] {
            let d = 50_000.0;
            let o = predict(&p, s, d);
            let t1 = prtt(p, 1, 0.0, s);
            let near = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.max(1.0);
            assert!(near(t1 / 2.0, o.one_way), "one-way {s}: {} {o:?}", t1 / 2.0);
            let gap = (prtt(p, n, 0.0, s) - t1) / (n - 1) as f64;
            assert!(near(gap, o.gap), "gap {s}: {gap} {o:?}");
            let send = (prtt(p, n, d, s) - t1) / (n - 1) as f64 - d;
            assert!(near(send, o.send), "send {s}: {send} {o:?}");
            let r = late_recv(p, d, s);
            assert!(near(r, o.recv), "recv {s}: {r} {o:?}");
        }
    }
}

#[test]
fn fit_recovers_known_parameters() {
    let p = params();
    let exact = fit(&synthetic(&p, 0.0));
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * b;
    let q = exact.params;
    assert_eq!(q.eager_limit, 4096, "{q:?}");
    for (got, want) in [
        (q.latency, p.latency),
        (q.send_overhead, p.send_overhead),
        (q.recv_overhead, p.recv_overhead),
        (q.gap, p.gap),
        (q.gap_per_byte, p.gap_per_byte),
        (q.copy_per_byte, p.copy_per_byte),
        (q.rendezvous, p.rendezvous),
        (q.self_overhead, p.self_overhead),
        (q.self_per_byte, p.self_per_byte),
    ] {
        assert!(close(got, want, 0.02), "{got} vs {want}: {q:?}");
    }
    assert!(exact.error.overall < 0.005, "{:?}", exact.error);
    assert!(exact.error.self_exchange.is_some_and(|e| e < 0.005));

    // 3% noise: the parameters within 15%, the error about the noise.
    let noisy = fit(&synthetic(&p, 0.03));
    let q = noisy.params;
    assert_eq!(q.eager_limit, 4096, "{q:?}");
    for (got, want) in [
        (q.latency, p.latency),
        (q.send_overhead, p.send_overhead),
        (q.recv_overhead, p.recv_overhead),
        (q.gap_per_byte, p.gap_per_byte),
        (q.rendezvous, p.rendezvous),
        (q.self_overhead, p.self_overhead),
    ] {
        assert!(close(got, want, 0.15), "{got} vs {want}: {q:?}");
    }
    assert!(noisy.error.overall < 0.05, "{:?}", noisy.error);
}

#[test]
fn parses_the_benchmark_output() {
    let text = "conifer-calibrate 1 n=8\nlib Open MPI v4.1\n\
                1 2000 5000 90000 10000 300\n64 2100 5200 90500 10000 320\n\
                4096 4000 9000 99000 10000 900\n";
    let b = Benchmark::parse(text).expect("parses");
    assert_eq!((b.train_length, b.library.as_str()), (8, "Open MPI v4.1"));
    assert_eq!(b.samples.len(), 3);
    assert_eq!(b.samples[0].self_exchange, None);
    let with_self = Benchmark::parse(&text.replace(" 300\n", " 300 75\n")).expect("parses");
    assert_eq!(with_self.samples[0].self_exchange, Some(75.0));
    let o = b.observed(&b.samples[0]);
    assert_eq!((o.one_way, o.recv), (1000.0, 300.0));
    assert!((o.gap - 3000.0 / 7.0).abs() < 1e-9);
    assert!((o.send - (88000.0 / 7.0 - 10000.0)).abs() < 1e-9);
    for bad in [
        "",
        "hello\n",
        "conifer-calibrate 1 n=1\n",
        "conifer-calibrate 1 n=8\n1 2 3\n",
        "conifer-calibrate 1 n=8\n1 2000 5000 90000 10000 300\n",
    ] {
        assert!(Benchmark::parse(bad).is_err(), "{bad:?}");
    }
}
