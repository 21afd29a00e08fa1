//! Plans in rank-relative form, shared by the ranks whose plans agree in it.
//!
//! A plan names its peers as (world rank, rank in the communicator); the same terminal on
//! two ranks of a stencil names different peers, one step away from each rank. Stored as
//! (world rank − caller, rank in the communicator − world rank), wrapping, the plans of
//! ranks that differ only in where they are become equal, and a [`PlanCache`] keeps one
//! copy of each: a rank then holds one byte per terminal, its plan's number (255: a plan of its own).

use super::ops::Op;
use super::plan::{Posted, Step};
use std::cell::RefCell;
use std::rc::Rc;

/// Distinct relative plans kept per terminal; the plans of a terminal's further variants
/// stay with the rank that made them.
const VARIANTS: usize = 254;

/// A peer as a plan stores it: `(world, local)` relative to world rank `me`.
fn to_relative(me: u32, (world, local): (u32, u32)) -> (u32, u32) {
    (world.wrapping_sub(me), local.wrapping_sub(world))
}

/// A stored peer back as `(world, local)` for world rank `me`.
pub(super) fn to_absolute(me: u32, (dw, dl): (u32, u32)) -> (u32, u32) {
    let world = me.wrapping_add(dw);
    (world, world.wrapping_add(dl))
}

fn map_posted(p: &Rc<Posted>, f: impl Fn((u32, u32)) -> (u32, u32)) -> Rc<Posted> {
    match p.peer {
        Some(peer) => Rc::new(Posted {
            peer: Some(f(peer)),
            ..Posted::clone(p)
        }),
        None => Rc::clone(p),
    }
}

/// `op` with its peers mapped by `f`.
fn map_op(op: &Op, f: impl Fn((u32, u32)) -> (u32, u32)) -> Op {
    let mut op = op.clone();
    match &mut op {
        Op::Send { to, to_rank, .. } | Op::Isend { to, to_rank, .. } => {
            (*to, *to_rank) = f((*to, *to_rank));
        }
        Op::Recv { from, .. } | Op::IrecvComplete { from, .. } => {
            *from = from.map(&f);
        }
        _ => {}
    }
    op
}

/// `step` with its peers mapped by `f`.
fn map_step(step: &Step, f: impl Fn((u32, u32)) -> (u32, u32) + Copy) -> Step {
    match step {
        Step::Op(op) => Step::Op(map_op(op, f)),
        Step::Post(h, p) => Step::Post(*h, map_posted(p, f)),
        Step::Persist(h, p) => Step::Persist(*h, map_posted(p, f)),
        Step::Start(h) => Step::Start(*h),
        Step::Free(h) => Step::Free(*h),
        Step::Complete(h, s) => Step::Complete(*h, s.clone()),
        Step::Cancel(h) => Step::Cancel(*h),
    }
}

/// The plan `steps` of world rank `me` in relative form.
pub(super) fn relative(me: u32, steps: Vec<Step>) -> Vec<Step> {
    steps
        .iter()
        .map(|s| map_step(s, |p| to_relative(me, p)))
        .collect()
}

/// Op `op` of a relative plan as world rank `me` makes it.
pub(super) fn absolute_op(me: u32, op: &Op) -> Op {
    map_op(op, |p| to_absolute(me, p))
}

/// Posted `p` of a relative plan as world rank `me` posts it.
pub(super) fn absolute_posted(me: u32, p: &Rc<Posted>) -> Rc<Posted> {
    map_posted(p, |q| to_absolute(me, q))
}

/// The distinct relative plans of every terminal, shared by the [`Messages`](super::Messages)
/// of all ranks that are given it.
#[derive(Default)]
pub struct PlanCache {
    /// Per terminal, its distinct plans; a rank refers to one by its place + 1.
    plans: RefCell<Vec<Vec<Rc<[Step]>>>>,
}

impl PlanCache {
    /// The number (≥ 1) of `plan` among terminal `terminal`'s plans, adding it when new;
    /// `None` when the terminal has [`VARIANTS`] plans already.
    pub(super) fn intern(&self, terminal: u32, plan: Vec<Step>) -> Result<u8, Rc<[Step]>> {
        let mut plans = self.plans.borrow_mut();
        let t = terminal as usize;
        if plans.len() <= t {
            plans.resize_with(t + 1, Vec::new);
        }
        let known = &mut plans[t];
        if let Some(i) = known.iter().position(|k| **k == plan[..]) {
            return Ok(i as u8 + 1);
        }
        if known.len() >= VARIANTS {
            return Err(plan.into());
        }
        known.push(plan.into());
        Ok(known.len() as u8)
    }

    /// Plan number `n` (from [`PlanCache::intern`]) of terminal `terminal`.
    pub(super) fn get(&self, terminal: u32, n: u8) -> Rc<[Step]> {
        Rc::clone(&self.plans.borrow()[terminal as usize][n as usize - 1])
    }

    /// Distinct plans held, over all terminals.
    pub fn len(&self) -> usize {
        self.plans.borrow().iter().map(Vec::len).sum()
    }

    /// True when no plan is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_round_trip_through_the_relative_form() {
        for (me, peer) in [(5, (6, 6)), (0, (99, 3)), (99, (0, 0)), (7, (2, 40))] {
            assert_eq!(to_absolute(me, to_relative(me, peer)), peer);
        }
        // Ranks 10 and 20 each sending one to the right on MPI_COMM_WORLD store one plan.
        assert_eq!(to_relative(10, (11, 11)), to_relative(20, (21, 21)));
        assert_ne!(to_relative(10, (11, 11)), to_relative(20, (22, 22)));
    }
}
