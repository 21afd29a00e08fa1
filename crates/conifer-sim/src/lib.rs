//! Trace-driven prediction of an MPI run in the LogGP family (CYPRESS's SIM-MPI, PHANTOM's
//! LogGPO): each rank replays its recorded computation intervals and its MPI calls against
//! a network model; messages are matched as MPI matches them; collectives run the
//! point-to-point algorithms MPI libraries use.
//!
//! - [`calibrate`]: fitting the parameters to benchmark measurements;
//! - [`params`]: the model's parameters (L, o_s, o_r, g, G, O, eager limit, compute scale);
//! - [`engine`]: the discrete-event engine (protocols, matching, waits, critical path);
//! - [`collectives`]: collective algorithms and the rule choosing them;
//! - [`adapter`]: decoded calls to engine actions, one lazy iterator per rank;
//! - [`keys`]: call keys the critical path is aggregated by.
//!
//! Memory: the compressed trace, one decoding iterator and the pending requests and
//! in-flight messages of each rank, the round of the collective it is in, and per rank a
//! position per distinct terminal; what terminals' calls share is held once for all ranks
//! (parsed signature, call key, and message plans in rank-relative form, one copy per
//! distinct plan); time: linear in the simulated events (a heap of events over ranks).

pub mod adapter;
pub mod calibrate;
pub mod collectives;
pub mod engine;
pub mod keys;
pub mod params;
pub mod replayed;
pub mod representatives;
pub mod terminals;
#[cfg(test)]
mod tests;

use collectives::Rule;
use conifer_analyze::context::CommTable;
use conifer_trace::ReadCalls;
use conifer_trace::Trace;
use engine::Engine;
use params::Params;
use serde::Serialize;

/// What to simulate with.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Network and computation parameters.
    pub params: Params,
    /// Which algorithm each collective runs.
    pub rule: Rule,
    /// Critical-path contributors to report.
    pub top: usize,
}

/// One rank's predicted time, split (ns).
#[derive(Debug, Clone, Serialize)]
pub struct RankReport {
    /// World rank.
    pub rank: u32,
    /// When it ends.
    pub end_ns: f64,
    /// Computation.
    pub compute_ns: f64,
    /// CPU time in communication (overheads, copies).
    pub comm_ns: f64,
    /// Waiting for other ranks or the network.
    pub wait_ns: f64,
}

/// A call key on the critical path and the time it contributes.
#[derive(Debug, Clone, Serialize)]
pub struct Contributor {
    /// MPI function, or `computation`.
    pub function: String,
    /// Call site, when recorded.
    pub site: Option<String>,
    /// World rank of the first call with this key.
    pub example_rank: Option<u32>,
    /// That call's index in its thread (as `conifer decode` numbers calls).
    pub example_call: Option<u64>,
    /// Time on the critical path, ns.
    pub ns: f64,
    /// Share of the predicted time.
    pub share: f64,
}

/// The prediction.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Predicted run time: the last rank's end, ns.
    pub total_ns: f64,
    /// Per rank.
    pub ranks: Vec<RankReport>,
    /// The largest contributors to the critical path, largest first.
    pub critical_path: Vec<Contributor>,
    /// Simulated events (actions and message arrivals).
    pub events: u64,
    /// Simulated messages (collectives' included).
    pub messages: u64,
    /// Distinct message plans the ranks held, in rank-relative form: ranks whose calls
    /// differ only in where they are (a stencil's interior) share one.
    pub plans: usize,
    /// The parameters used.
    pub params: Params,
}

/// Simulates `trace` with `options`.
pub fn simulate(trace: &Trace, options: &Options) -> Result<Report, String> {
    let table = CommTable::new(trace);
    let shared = adapter::Shared::new(&table, options.rule.clone());
    let reader = trace.reader();
    let programs = (0..trace.meta.ranks)
        .map(|r| adapter::program(&reader, &table, &shared, r))
        .collect::<Result<Vec<_>, String>>()?;
    let outcome = Engine::new(options.params, programs)
        .run()
        .map_err(|e| match e {
            Ok(stall) => format!(
                "the simulation stalled: rank {} waits forever in {} (unmatched messages: a \
                 partial trace, or calls the simulator does not model)",
                stall.rank,
                shared.keys.borrow().label(stall.key)
            ),
            Err(message) => message,
        })?;
    let total_ns = outcome.ranks.iter().map(|r| r.end).fold(0.0, f64::max);
    let keys = shared.keys.borrow();
    let mut critical: Vec<(u32, f64)> = outcome
        .critical
        .iter()
        .enumerate()
        .map(|(k, &ns)| (k as u32, ns))
        .filter(|(_, ns)| *ns > 0.0)
        .collect();
    critical.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let critical_path = critical
        .into_iter()
        .take(options.top)
        .map(|(k, ns)| {
            let info = keys.info(k);
            Contributor {
                function: info.map_or_else(String::new, |i| i.function.clone()),
                site: info.and_then(|i| i.site.clone()),
                example_rank: info.and_then(|i| i.example).map(|e| e.0),
                example_call: info.and_then(|i| i.example).map(|e| e.1),
                ns,
                share: if total_ns > 0.0 { ns / total_ns } else { 0.0 },
            }
        })
        .collect();
    Ok(Report {
        total_ns,
        ranks: outcome
            .ranks
            .iter()
            .enumerate()
            .map(|(r, t)| RankReport {
                rank: r as u32,
                end_ns: t.end,
                compute_ns: t.compute,
                comm_ns: t.comm,
                wait_ns: t.wait,
            })
            .collect(),
        critical_path,
        events: outcome.events,
        messages: outcome.messages,
        plans: shared.plans.len(),
        params: options.params,
    })
}
