//! Symbolic ids of MPI objects other than communicators and requests: one pool per handle
//! kind, lowest free id first, ids returned when the object is freed, so ranks that create
//! objects in the same order get the same ids. Predefined objects are named, not numbered.

use super::word_hash::FastMap;
use conifer_format::predefined;
use conifer_format::value::{HandleKind, HandleRef};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

extern "C" {
    fn conifer_predefined_bits(kind: i32, code: i32, defined: *mut i32) -> u64;
}

/// Ids handed out lowest-first, reusable once released.
#[derive(Default)]
pub struct IdPool {
    /// Released ids below 64, one bit each: pools are mostly small, and a bit is cheaper to
    /// take and give back than a heap entry.
    low_free: u64,
    /// Released ids from 64 up.
    high_free: BinaryHeap<Reverse<u32>>,
    next: u32,
}

impl IdPool {
    /// The lowest id not in use.
    #[inline]
    pub fn take(&mut self) -> u32 {
        if self.low_free != 0 {
            let id = self.low_free.trailing_zeros();
            self.low_free &= self.low_free - 1;
            return id;
        }
        match self.high_free.pop() {
            Some(Reverse(id)) => id,
            None => {
                self.next += 1;
                self.next - 1
            }
        }
    }

    /// Makes `id` available again.
    #[inline]
    pub fn give_back(&mut self, id: u32) {
        if id < 64 {
            self.low_free |= 1 << id;
        } else {
            self.high_free.push(Reverse(id));
        }
    }
}

/// Handle value → symbolic id, for every kind.
#[derive(Default)]
pub struct Handles {
    predefined: FastMap<(HandleKind, u64), u16>,
    /// Each kind's null handle (name code 0), by `kind as usize`: completion calls ask for
    /// every request whether it became null, and creating calls whether they made one.
    nulls: [Option<u64>; HandleKind::ALL.len()],
    live: FastMap<(HandleKind, u64), u32>,
    pools: FastMap<HandleKind, IdPool>,
}

impl Handles {
    /// Learns the installed MPI's predefined handle values.
    pub fn with_predefined() -> Handles {
        let mut handles = Handles::default();
        for (k, kind) in HandleKind::ALL.iter().enumerate() {
            debug_assert_eq!(*kind as usize, k);
            // [`Handles::named`] knows requests have one name, their null.
            debug_assert!(*kind != HandleKind::Request || predefined::names(*kind).len() == 1);
            for code in 0..predefined::names(*kind).len() {
                let mut defined = 0;
                // SAFETY: generated C function with an out-pointer to a local.
                let bits = unsafe { conifer_predefined_bits(k as i32, code as i32, &mut defined) };
                if defined != 0 {
                    if code == 0 {
                        handles.nulls[k] = Some(bits);
                    }
                    // Synonyms (MPI_LONG_LONG_INT and MPI_LONG_LONG) keep the first name.
                    handles
                        .predefined
                        .entry((*kind, bits))
                        .or_insert(code as u16);
                }
            }
        }
        handles
    }

    /// The predefined name code of a handle value, if it is one.
    pub fn named(&self, kind: HandleKind, bits: u64) -> Option<u16> {
        // A request's only name is MPI_REQUEST_NULL: no table look-up on the hot path.
        if kind == HandleKind::Request {
            return self.is_null(kind, bits).then_some(0);
        }
        self.predefined.get(&(kind, bits)).copied()
    }

    /// Whether `bits` is the null handle of `kind`.
    #[inline]
    pub fn is_null(&self, kind: HandleKind, bits: u64) -> bool {
        self.nulls[kind as usize] == Some(bits)
    }

    /// How a handle used as an input is recorded.
    pub fn lookup(&self, kind: HandleKind, bits: u64) -> HandleRef {
        if let Some(code) = self.named(kind, bits) {
            return HandleRef::Named(code);
        }
        self.live
            .get(&(kind, bits))
            .map_or(HandleRef::Unknown, |&id| HandleRef::Id(id))
    }

    /// A handle returned by MPI: its existing id, or a new one.
    pub fn register(&mut self, kind: HandleKind, bits: u64) -> HandleRef {
        if let Some(code) = self.named(kind, bits) {
            return HandleRef::Named(code);
        }
        if let Some(&id) = self.live.get(&(kind, bits)) {
            return HandleRef::Id(id);
        }
        let id = self.pools.entry(kind).or_default().take();
        self.live.insert((kind, bits), id);
        HandleRef::Id(id)
    }

    /// The object behind `bits` was freed: its id becomes available.
    pub fn release(&mut self, kind: HandleKind, bits: u64) {
        if let Some(id) = self.live.remove(&(kind, bits)) {
            self.pools.entry(kind).or_default().give_back(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_reused_lowest_first() {
        let mut pool = IdPool::default();
        assert_eq!((pool.take(), pool.take(), pool.take()), (0, 1, 2));
        pool.give_back(2);
        pool.give_back(0);
        assert_eq!((pool.take(), pool.take(), pool.take()), (0, 2, 3));
    }

    #[test]
    fn ids_past_64_are_reused_lowest_first_too() {
        let mut pool = IdPool::default();
        let ids: Vec<u32> = (0..200).map(|_| pool.take()).collect();
        assert_eq!(ids, (0..200).collect::<Vec<u32>>());
        for id in [150, 63, 64, 199, 0, 100] {
            pool.give_back(id);
        }
        let again: Vec<u32> = (0..7).map(|_| pool.take()).collect();
        assert_eq!(again, [0, 63, 64, 100, 150, 199, 200]);
    }
}
