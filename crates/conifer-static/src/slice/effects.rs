//! What a call of a function without a body (not MPI) reads and writes, as sets of abstract
//! objects: the memory summaries of libc and flang's runtime that liveness uses. Fortran I/O
//! statements also read and write the state of the unit they work on, and reading anything of
//! a statement makes the whole statement (its other calls, its end) needed.

use super::class::External;
use super::fortran;
use super::ir::{self, V};
use super::pointsto::{Objs, PointsTo};

/// The memory effects of one external call.
pub struct Effects<'a> {
    pt: &'a PointsTo,
    call: V,
    args: Vec<V>,
    name: String,
    class: External,
}

impl<'a> Effects<'a> {
    /// The effects of `call`, whose callee is external and of class `class`.
    pub fn new(pt: &'a PointsTo, call: V, class: External) -> Effects<'a> {
        Effects {
            pt,
            call,
            args: ir::call_args(call),
            name: ir::direct_callee(call).map(ir::name_of).unwrap_or_default(),
            class,
        }
    }

    /// Arguments that are not read-only globals (formats, source file names).
    fn variable_args(&self) -> impl Iterator<Item = V> + '_ {
        self.args
            .iter()
            .copied()
            .filter(|&a| !ir::is_constant_global(a))
    }

    fn reach_of(&self, args: impl Iterator<Item = V>) -> Objs {
        args.flat_map(|a| self.pt.reach(&self.pt.of(a))).collect()
    }

    /// What an I/O call reaches through `args`: what they point to, and behind a transferred
    /// array descriptor the data.
    fn io_objs(&self, args: impl Iterator<Item = V>) -> Objs {
        let reaches_data = fortran::io_reaches_data(&self.name);
        args.flat_map(|a| match reaches_data {
            true => self.pt.reach(&self.pt.of(a)),
            false => self.pt.of(a),
        })
        .collect()
    }

    /// What the call reads through its pointers (must be computed when the call is kept).
    pub fn reads(&self) -> Objs {
        match self.class {
            External::Pure | External::Frees | External::Allocates => Objs::new(),
            // A copy's destination is written, not read.
            External::Writes => self
                .args
                .iter()
                .skip(1)
                .flat_map(|&a| self.pt.of(a))
                .collect(),
            External::IoStatement => {
                let mut objs = self.io_objs(self.args.iter().copied());
                objs.extend(self.pt.unit_state(self.call));
                // The statement a `Begin…` call starts: its other calls are needed too.
                objs.extend(self.pt.of(self.call));
                objs
            }
            // Descriptor calls read the descriptor they update, not what it describes (but
            // `SOURCE=`, and an assignment's right-hand side, whole).
            External::FortranAllocate
            | External::FortranDescriptor
            | External::FortranAssociate
            | External::FortranAssign => {
                let mut objs = self
                    .args
                    .first()
                    .map(|&a| self.pt.of(a))
                    .unwrap_or_default();
                let rest = self.variable_args().skip(1);
                match self.class {
                    External::FortranAssociate => objs.extend(rest.flat_map(|a| self.pt.of(a))),
                    _ => objs.extend(self.reach_of(rest)),
                }
                objs
            }
            _ if fortran::is_runtime(&self.name) => self.reach_of(self.variable_args()),
            External::StreamOutput | External::StringMember => self.reach_of(self.variable_args()),
            External::Unknown => self
                .pt
                .closure(&self.args.iter().flat_map(|&a| self.pt.of(a)).collect()),
            _ => self.args.iter().flat_map(|&a| self.pt.of(a)).collect(),
        }
    }

    /// What the call may write, for the calls that are removable unless what they write is
    /// live (`None` for the others).
    pub fn writes(&self, after_finalize: bool) -> Option<Objs> {
        let first = || self.reach_of(self.args.first().copied().into_iter());
        Some(match self.class {
            External::Writes => self.pt.of(self.args[0]),
            External::IoStatement => {
                // An output item writes only its statement, not the value it prints.
                let written: Vec<V> = match fortran::io_writes_only_statement(&self.name) {
                    true => self.args.iter().take(1).copied().collect(),
                    false => self.variable_args().collect(),
                };
                let mut objs = self.io_objs(written.into_iter());
                objs.extend(self.pt.unit_state(self.call));
                objs
            }
            External::FortranAssign
            | External::FortranAllocate
            | External::FortranDescriptor
            | External::FortranAssociate => first(),
            External::FortranWrites => self.reach_of(self.variable_args()),
            External::Updates => self.variable_args().flat_map(|a| self.pt.of(a)).collect(),
            External::StreamOutput | External::StringMember => {
                let first = self
                    .args
                    .first()
                    .map(|&a| self.pt.of(a))
                    .unwrap_or_default();
                self.pt.own(&first)
            }
            // Not a root once MPI is finalised, but kept when what it may write is read live.
            External::Unknown if after_finalize => self.reach_of(self.variable_args()),
            _ => return None,
        })
    }
}
