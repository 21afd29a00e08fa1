//! The shifts that make a reconstructed timeline causal (computed by
//! [`causal::build`](crate::causal::build)), and their application to each thread's calls.

use std::collections::HashMap;

/// The latency a message takes at least, ns: the simulator's default `L` (Open MPI's
/// shared-memory transport), so a reconstructed message is never faster than the model's.
pub const LATENCY_NS: u64 = 400;

/// How much later than reconstructed each thread's calls are placed.
#[derive(Debug, Default)]
pub struct Causal {
    /// Per (rank, thread): (the thread's call number, counted from 0, the shift of every
    /// call after it and of its end, ns), in call order. The shift grows at each entry.
    shifts: HashMap<(u32, u32), Vec<(u64, u64)>>,
    /// Calls lengthened to wait for a send or a collective's last member.
    pub held: u64,
    /// Receives and collective calls placed without their wait (see
    /// [`causal`](crate::causal)).
    pub unconstrained: u64,
}

impl Causal {
    /// From call `call` of `rank`'s `thread` on (its end included), the thread is `shift` ns
    /// later than reconstructed (more than before).
    pub fn grow(&mut self, rank: u32, thread: u32, call: u64, shift: u64) {
        self.shifts
            .entry((rank, thread))
            .or_default()
            .push((call, shift));
    }

    /// The cursor applying the shifts of `rank`'s `thread`.
    pub fn cursor(&self, rank: u32, thread: u32) -> Cursor<'_> {
        Cursor {
            shifts: self
                .shifts
                .get(&(rank, thread))
                .map_or(&[][..], |v| v.as_slice()),
            next: 0,
            calls: 0,
            shift: 0,
        }
    }

    /// The sentence the exports add to their description of the timestamps.
    pub fn describe(&self) -> String {
        format!(
            "; then made causal: each receive ends no earlier than its send started plus \
             {LATENCY_NS} ns (the simulator's default latency L), each blocking collective no \
             earlier than its last member entered plus {LATENCY_NS} ns, a call held so \
             lengthened and the rest of its thread moved later ({} calls held, {} placed \
             without their wait)",
            self.held, self.unconstrained
        )
    }
}

/// Applies one thread's shifts to its calls in order.
#[derive(Debug)]
pub struct Cursor<'c> {
    shifts: &'c [(u64, u64)],
    next: usize,
    calls: u64,
    shift: u64,
}

impl Cursor<'_> {
    /// The (start, end) shifts of the thread's next call.
    pub fn next_call(&mut self) -> (u64, u64) {
        let start = self.shift;
        if let Some(&(call, shift)) = self.shifts.get(self.next) {
            if call == self.calls {
                self.shift = shift;
                self.next += 1;
            }
        }
        self.calls += 1;
        (start, self.shift)
    }
}
