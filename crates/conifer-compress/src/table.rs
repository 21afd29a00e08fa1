//! The digram index: an open-addressing hash table from a digram (two
//! adjacent items with their exponents) to the node where its one indexed
//! occurrence starts.
//!
//! A purpose-built table rather than `HashMap` because it is on the hot path
//! of every push: a slot is only a node and the digram's 32-bit hash (8
//! bytes, eight to a cache line), probing is linear and deletion shifts
//! entries back, so there are no tombstones and the table never rehashes in
//! steady state.

/// Marks an empty slot; never a valid node index.
const EMPTY: u32 = u32::MAX;

/// Smallest capacity; a power of two.
const MIN_CAPACITY: usize = 64;

/// Two adjacent right-hand-side items, each an encoded symbol and its exponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Digram {
    pub(crate) first: u64,
    pub(crate) first_exp: u64,
    pub(crate) second: u64,
    pub(crate) second_exp: u64,
}

/// Multiplies into 128 bits and folds the halves: a fast, well-mixing step.
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

impl Digram {
    /// 32-bit hash; the table stores it to skip most key comparisons and to
    /// move entries without recomputing it. One multiply: each item's symbol
    /// (34 bits) and exponent are folded into one word first, so items that
    /// differ collide only when exponents beyond 2^29 do, and equal digrams
    /// are still told apart by the caller's key comparison.
    pub(crate) fn hash(&self) -> u32 {
        let a = self.first ^ self.first_exp.rotate_left(35);
        let b = self.second ^ self.second_exp.rotate_left(35);
        let h = fold(a ^ 0x243f_6a88_85a3_08d3, b ^ 0x1319_8a2e_0370_7344);
        (h ^ (h >> 32)) as u32
    }
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    hash: u32,
    node: u32,
}

const VACANT: Slot = Slot {
    hash: 0,
    node: EMPTY,
};

/// Set of nodes, each standing for the digram that starts there, looked up
/// by digram. Keys are not stored: the caller compares a candidate node's
/// digram with the one sought, which keeps a slot at 8 bytes.
#[derive(Clone, Debug)]
pub(crate) struct DigramTable {
    slots: Vec<Slot>,
    mask: usize,
    len: usize,
}

impl DigramTable {
    pub(crate) fn new() -> Self {
        DigramTable {
            slots: vec![VACANT; MIN_CAPACITY],
            mask: MIN_CAPACITY - 1,
            len: 0,
        }
    }

    /// Number of indexed digrams.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The node indexed under `hash` whose digram is the one sought
    /// (`is_key` tells), if any.
    #[cfg(test)]
    pub(crate) fn get(&self, hash: u32, is_key: impl Fn(u32) -> bool) -> Option<u32> {
        let mut i = hash as usize & self.mask;
        loop {
            let slot = self.slots[i];
            if slot.node == EMPTY {
                return None;
            }
            if slot.hash == hash && is_key(slot.node) {
                return Some(slot.node);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Returns the node already indexed for the digram (`hash`, `is_key`),
    /// or indexes `node` for it and returns `None`.
    pub(crate) fn get_or_insert(
        &mut self,
        hash: u32,
        node: u32,
        is_key: impl Fn(u32) -> bool,
    ) -> Option<u32> {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mut i = hash as usize & self.mask;
        loop {
            let slot = self.slots[i];
            if slot.node == EMPTY {
                self.slots[i] = Slot { hash, node };
                self.len += 1;
                return None;
            }
            if slot.hash == hash && is_key(slot.node) {
                return Some(slot.node);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Removes `node`, indexed under `hash`, if it is indexed; another
    /// occurrence of the same digram is left alone.
    pub(crate) fn remove(&mut self, hash: u32, node: u32) {
        let mut hole = hash as usize & self.mask;
        loop {
            let slot = self.slots[hole];
            if slot.node == EMPTY {
                return;
            }
            if slot.node == node {
                break;
            }
            hole = (hole + 1) & self.mask;
        }
        let mut j = (hole + 1) & self.mask;
        loop {
            let slot = self.slots[j];
            if slot.node == EMPTY {
                break;
            }
            let ideal = slot.hash as usize & self.mask;
            if j.wrapping_sub(ideal) & self.mask >= j.wrapping_sub(hole) & self.mask {
                self.slots[hole] = slot;
                hole = j;
            }
            j = (j + 1) & self.mask;
        }
        self.slots[hole] = VACANT;
        self.len -= 1;
    }

    fn grow(&mut self) {
        let capacity = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![VACANT; capacity]);
        self.mask = capacity - 1;
        for slot in old.into_iter().filter(|slot| slot.node != EMPTY) {
            let mut i = slot.hash as usize & self.mask;
            while self.slots[i].node != EMPTY {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = slot;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node `i` stands for digram `i / 2` (two nodes per digram), and hashes
    /// collide often on purpose.
    fn hash(node: u32) -> u32 {
        (node / 2) % 37
    }

    #[test]
    fn insert_lookup_remove_and_grow() {
        let mut table = DigramTable::new();
        let same = |a: u32| move |b: u32| a / 2 == b / 2;
        for node in (0..2000u32).step_by(2) {
            assert_eq!(table.get_or_insert(hash(node), node, same(node)), None);
        }
        assert_eq!(table.len(), 1000);
        for node in (1..2000u32).step_by(2) {
            let other = table.get_or_insert(hash(node), node, same(node));
            assert_eq!(other, Some(node - 1));
        }
        for node in (0..2000u32).step_by(4) {
            table.remove(hash(node), node + 1);
            table.remove(hash(node), node);
        }
        assert_eq!(table.len(), 500);
        for node in (0..2000u32).step_by(2) {
            let expected = (node % 4 == 2).then_some(node);
            assert_eq!(table.get(hash(node), same(node)), expected);
        }
    }
}
