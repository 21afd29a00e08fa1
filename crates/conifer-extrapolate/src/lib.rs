//! A trace for a large rank count extrapolated from traces of one program at a few small
//! ones, after ScalaExtrap (Wu & Mueller, PPoPP 2011): `conifer extrapolate A.cft B.cft
//! C.cft --ranks N -o big.cft`.
//!
//! Ranks are put into classes by their place in the process grid ([`classing`]: all alike, a
//! line's first/between/last, or the corners, edges and interior of the 2-D or 3-D grid
//! `MPI_Dims_create` gives). Peers are stored relative to the caller, so the ranks of a class
//! make the same calls but for some numbers. Every class must make the same calls in the
//! same order at every input P; each number that differs ([`leaves`]) is fitted as a
//! constant, or as a line in or a quotient of one of the rank, P, a grid extent, a grid
//! coordinate or log2 P ([`fit`]), seen at three values at least. The first classing under
//! which every call site fits is used ([`model`]); the trace for N is then built rank by rank
//! and merged as the tracer merges a real run ([`build`]). What does not fit is refused, one
//! line per call site. Timing is not extrapolated: each call keeps the mean interval and
//! duration of its timing family in the largest input (see `docs/guide/extrapolation.md`).

pub mod build;
pub mod classing;
pub mod fit;
pub mod leaves;
pub mod model;
pub mod samples;

use classing::{Classing, CLASSINGS};
use conifer_trace::{Metadata, Trace};
use model::{Names, Unfitted};

/// What [`extrapolate`] made.
pub struct Extrapolation {
    /// The trace for N ranks.
    pub trace: Trace,
    /// The classing used.
    pub classing: Classing,
    /// How many classes of ranks it found in the inputs.
    pub classes: usize,
    /// The fields found to vary with the run and their forms, one line each.
    pub varying: Vec<String>,
    /// The inputs' rank counts, ascending.
    pub inputs: Vec<u32>,
}

/// Why [`extrapolate`] made nothing: a headline, and one line per call site it cannot fit.
#[derive(Debug)]
pub struct Refusal {
    /// What went wrong, in one line.
    pub why: String,
    /// The call sites (or rank classes) at fault, one line each.
    pub sites: Vec<String>,
}

fn refuse(why: String) -> Refusal {
    Refusal {
        why,
        sites: Vec::new(),
    }
}

/// The run's metadata for `n` ranks extrapolated from `inputs`: the largest input's, with the
/// per-call timing and raw-record options dropped and `extrapolated=P1,P2,...` added.
fn metadata(largest: &Metadata, n: u32, inputs: &[u32]) -> Metadata {
    let mut meta = largest.clone();
    meta.ranks = n;
    meta.options
        .retain(|o| !o.starts_with("timing=") && o != "raw" && !o.starts_with("extrapolated="));
    let ps: Vec<String> = inputs.iter().map(u32::to_string).collect();
    meta.options.push(format!("extrapolated={}", ps.join(",")));
    meta
}

/// Extrapolates `inputs` (traces of one program at three or more rank counts) to `n` ranks.
pub fn extrapolate(mut inputs: Vec<Trace>, n: u32) -> Result<Extrapolation, Refusal> {
    if inputs.len() < 3 {
        return Err(refuse(format!(
            "extrapolation needs traces at three or more rank counts, got {}",
            inputs.len()
        )));
    }
    if n == 0 {
        return Err(refuse("--ranks must be at least 1".into()));
    }
    inputs.sort_by_key(|t| t.meta.ranks);
    let ps: Vec<u32> = inputs.iter().map(|t| t.meta.ranks).collect();
    if ps.windows(2).any(|w| w[0] == w[1]) {
        return Err(refuse(format!(
            "two inputs have the same rank count ({ps:?}); give runs at distinct P"
        )));
    }
    let first = &inputs[0].meta;
    if let Some(other) = inputs
        .iter()
        .find(|t| t.meta.command_line != first.command_line || t.meta.mpi != first.mpi)
    {
        return Err(refuse(format!(
            "the inputs are not one program: {:?} ({}) and {:?} ({})",
            first.command_line, first.mpi, other.meta.command_line, other.meta.mpi
        )));
    }
    if let Some(t) = inputs.iter().find(|t| t.meta.partial) {
        return Err(refuse(format!(
            "the input at P={} is a partial trace (some rank stopped early)",
            t.meta.ranks
        )));
    }
    let mut names = Names::default();
    let mut catalog = Vec::new();
    for f in inputs.iter().flat_map(|t| &t.catalog) {
        if let std::collections::hash_map::Entry::Vacant(e) = names.entry(f.id) {
            e.insert((f.name.clone(), f.slots.clone()));
            catalog.push(f.clone());
        }
    }
    catalog.sort_by_key(|f| f.id);
    let mut items = samples::Items::default();
    let last = inputs.len() - 1;
    let runs = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| samples::read_run(t, &mut items, i == last))
        .collect::<Result<Vec<_>, String>>()
        .map_err(refuse)?;
    let largest = &inputs[last];
    let host = largest.record.ranks.first().map_or("", |r| r.host.as_str());
    let mut closest: Option<(Classing, Unfitted)> = None;
    for classing in CLASSINGS {
        // A first pass establishes forms where classes see enough values; the second lets
        // every class prefer them (see `model::Hints`).
        let hints = model::fit_model(&items, &runs, &names, classing, &Default::default()).1;
        let fitted = model::fit_model(&items, &runs, &names, classing, &hints).0;
        let attempt = fitted.and_then(|m| {
            build::build(&m, &items, n, host)
                .map(|record| (m, record))
                // Every class of the inputs fit: this classing is the closest whatever
                // the others do.
                .map_err(|sites| Unfitted {
                    failed: 0,
                    classes: 1,
                    sites,
                })
        });
        match attempt {
            Ok((m, record)) => {
                let trace = Trace {
                    meta: metadata(&largest.meta, n, &ps),
                    catalog,
                    record,
                };
                return Ok(Extrapolation {
                    trace,
                    classing,
                    classes: m.classes.len(),
                    varying: m.varying.into_iter().collect(),
                    inputs: ps,
                });
            }
            Err(unfitted) => {
                if closest
                    .as_ref()
                    .is_none_or(|c| unfitted.fitting_share() > c.1.fitting_share())
                {
                    closest = Some((classing, unfitted));
                }
            }
        }
    }
    let (classing, sites) = closest.map_or((Classing::Uniform, Vec::new()), |(c, u)| (c, u.sites));
    Err(Refusal {
        why: format!(
            "cannot extrapolate: no classing of the ranks fits every call site; with the closest ({}), these do not fit:",
            classing.name()
        ),
        sites,
    })
}
