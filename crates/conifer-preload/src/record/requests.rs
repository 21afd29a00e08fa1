//! Symbolic ids of requests. The order in which requests complete is not deterministic, but the
//! order in which the calls of one signature create them usually is: each creating signature
//! (arguments before the request) has its own pool, so the same code gets the same request ids
//! every iteration whatever the completion order. Request handles are not assumed unique:
//! Open MPI returns one shared request for every `MPI_PROC_NULL` operation and MPICH reuses
//! handles of requests that completed at once, so a handle maps to a queue of live ids.

use super::handles::IdPool;
use super::live_table::LiveTable;
use super::word_hash::FastMap;

use conifer_format::value::REQUEST_LOCAL_BITS as LOCAL_BITS;

/// A live request: its symbolic id and its communicator (for the sources of its statuses).
#[derive(Clone, Copy)]
pub struct LiveRequest {
    /// Symbolic id: pool number in the high bits, index within the pool in the low ones.
    pub id: u32,
    /// Handle bits of the request's communicator, when known.
    pub comm: Option<u64>,
    /// A receive posted with a wildcard source or tag (see [`super::wildcards`]).
    pub wildcard: bool,
}

/// All request pools and live requests of a process.
#[derive(Default)]
pub struct Requests {
    pool_of_creator: FastMap<u64, u32>,
    /// (creator, pool) of recently created requests, direct-mapped by creator: a loop's
    /// creating calls find their pools without probing [`Requests::pool_of_creator`].
    recent_pools: [(u64, u32); RECENT_POOLS],
    pools: Vec<IdPool>,
    live: LiveTable<Live>,
}

/// Slots of [`Requests::recent_pools`].
const RECENT_POOLS: usize = 16;

/// The live requests behind one handle, oldest first. Almost always one, kept inline, so
/// creating and completing a request allocates nothing.
struct Live {
    first: LiveRequest,
    rest: Vec<LiveRequest>,
}

impl Live {
    /// The `n`-th oldest, else the newest.
    fn nth_or_newest(&self, n: usize) -> LiveRequest {
        match n {
            0 => self.first,
            _ => *self
                .rest
                .get(n - 1)
                .or(self.rest.last())
                .unwrap_or(&self.first),
        }
    }
}

impl Requests {
    /// A new request `bits` created by a call whose signature prefix hashes to `creator`
    /// (`wildcard`: a receive posted with a wildcard source or tag).
    pub fn create(&mut self, creator: u64, bits: u64, comm: Option<u64>, wildcard: bool) -> u32 {
        let pool_number = self.pool_of(creator);
        let local = self.pools[pool_number as usize].take();
        let id = (pool_number << LOCAL_BITS) | (local & ((1 << LOCAL_BITS) - 1));
        if wildcard {
            super::wildcards::wildcard_request_created();
        }
        let request = LiveRequest { id, comm, wildcard };
        let (queue, new) = self.live.get_or_insert_with(bits, || Live {
            first: request,
            rest: Vec::new(),
        });
        if !new {
            queue.rest.push(request);
        }
        id
    }

    /// The pool of requests made by `creator`, a new one for a new creator.
    #[inline]
    fn pool_of(&mut self, creator: u64) -> u32 {
        let slot = &mut self.recent_pools[(creator as usize) % RECENT_POOLS];
        // Pool numbers are stored plus one, so the zeroed slots match no creator.
        if slot.1 != 0 && slot.0 == creator {
            return slot.1 - 1;
        }
        let next_pool = self.pools.len() as u32;
        let pool = *self.pool_of_creator.entry(creator).or_insert(next_pool);
        if pool == next_pool {
            self.pools.push(IdPool::default());
        }
        *slot = (creator, pool + 1);
        pool
    }

    /// The oldest live request behind a handle.
    pub fn lookup(&self, bits: u64) -> Option<LiveRequest> {
        self.live.get(bits).map(|q| q.first)
    }

    /// The live request a handle stands for at its place in an array of requests: the
    /// `n`-th occurrence of a shared handle stands for the `n`-th request created with it,
    /// where `n = occurrence()` (asked only of a handle shared by several live requests).
    pub fn nth(&self, bits: u64, occurrence: impl FnOnce() -> usize) -> Option<LiveRequest> {
        let queue = self.live.get(bits)?;
        Some(if queue.rest.is_empty() {
            queue.first
        } else {
            queue.nth_or_newest(occurrence())
        })
    }

    /// The oldest live request behind a handle completed or was freed.
    pub fn complete(&mut self, bits: u64) {
        let Some(mut queue) = self.live.remove(bits) else {
            return;
        };
        let done = queue.first;
        if done.wildcard {
            super::wildcards::wildcard_request_done();
        }
        if !queue.rest.is_empty() {
            queue.first = queue.rest.remove(0);
            self.live.get_or_insert_with(bits, || queue);
        }
        if let Some(pool) = self.pools.get_mut((done.id >> LOCAL_BITS) as usize) {
            pool.give_back(done.id & ((1 << LOCAL_BITS) - 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_creator_gets_same_ids_whatever_the_completion_order() {
        let mut r = Requests::default();
        let first: Vec<u32> = (0..3).map(|i| r.create(7, 100 + i, None, false)).collect();
        for bits in [102, 100, 101] {
            r.complete(bits);
        }
        let second: Vec<u32> = (0..3).map(|i| r.create(7, 200 + i, None, false)).collect();
        assert_eq!(first, second);
    }

    #[test]
    fn a_shared_handle_holds_several_live_requests() {
        let mut r = Requests::default();
        let a = r.create(1, 42, Some(0), false);
        let b = r.create(2, 42, Some(0), false);
        assert_ne!(a, b);
        assert_eq!(r.lookup(42).map(|l| l.id), Some(a));
        r.complete(42);
        assert_eq!(r.lookup(42).map(|l| l.id), Some(b));
        r.complete(42);
        assert!(r.lookup(42).is_none());
    }
}
