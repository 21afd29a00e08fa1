//! Which requests a completion call finished, from its outputs: the slots of its request
//! array, each with the status MPI gave it (null when the call ignores statuses).

use crate::mpi::*;
use crate::record::StatusSlot;
use conifer_spec::message_log::Completion;
use std::ffi::c_int;

/// The arguments of a completion call that say what it completed (null where it has none),
/// its statuses of either binding (`S`).
pub struct Outcome<S> {
    /// How the call reports completions.
    pub completion: Completion,
    /// Requests in its array (1 for `MPI_Wait`/`MPI_Test`).
    pub count: usize,
    /// `flag` of the tests.
    pub flag: *const c_int,
    /// `index` of `Waitany`/`Testany`.
    pub index: *const c_int,
    /// `outcount` of `Waitsome`/`Testsome`.
    pub outcount: *const c_int,
    /// `array_of_indices` of `Waitsome`/`Testsome`.
    pub indices: *const c_int,
    /// `status`, or `array_of_statuses`.
    pub statuses: *const S,
}

impl<S: StatusSlot> Outcome<S> {
    /// The slots completed, each with its status (`None` when ignored).
    ///
    /// # Safety
    /// The pointers are the call's own arguments, after the call returned successfully.
    pub unsafe fn completed(&self) -> Vec<(usize, Option<MPI_Status>)> {
        let ignored = S::is_ignore(self.statuses) || S::is_ignore_array(self.statuses);
        let status = |i: usize| {
            if ignored {
                None
            } else {
                S::read(self.statuses.add(i))
            }
        };
        let flag = || !self.flag.is_null() && *self.flag != 0;
        let undefined = conifer_undefined();
        match self.completion {
            Completion::One => vec![(0, status(0))],
            Completion::OneIfFlag if flag() => vec![(0, status(0))],
            Completion::All => (0..self.count).map(|i| (i, status(i))).collect(),
            Completion::AllIfFlag if flag() => (0..self.count).map(|i| (i, status(i))).collect(),
            Completion::Any
                if !self.index.is_null() && *self.index != undefined && *self.index >= 0 =>
            {
                vec![(*self.index as usize, status(0))]
            }
            Completion::Some if !self.outcount.is_null() && *self.outcount != undefined => (0
                ..*self.outcount.max(&0) as usize)
                .map(|k| (*self.indices.add(k) as usize, status(k)))
                .collect(),
            _ => Vec::new(),
        }
    }
}
