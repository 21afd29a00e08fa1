//! The live requests by handle: an open-addressing table with linear probing, keyed by a
//! handle's bits. Every nonblocking call inserts into it and every completion removes from
//! it, so it is built for exactly those operations on one key type, without the general hash
//! map's machinery (deletion shifts the following entries back instead of leaving
//! tombstones, so a table that sees millions of requests come and go stays short).

/// A table of `V` by handle bits.
pub struct LiveTable<V> {
    slots: Vec<Option<(u64, V)>>,
    len: usize,
}

/// Slots of a new table (a power of two).
const INITIAL_SLOTS: usize = 64;

impl<V> Default for LiveTable<V> {
    fn default() -> Self {
        LiveTable {
            slots: (0..INITIAL_SLOTS).map(|_| None).collect(),
            len: 0,
        }
    }
}

impl<V> LiveTable<V> {
    /// The home slot of `key`: the high bits of a multiplicative hash (handles are aligned
    /// pointers or small integers, so their low bits alone would collide).
    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot holding `key`, if any.
    #[inline(always)]
    fn find(&self, key: u64) -> Option<usize> {
        let mut i = self.home(key);
        loop {
            match &self.slots[i] {
                Some((k, _)) if *k == key => return Some(i),
                Some(_) => i = (i + 1) & self.mask(),
                None => return None,
            }
        }
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<&V> {
        self.find(key)
            .and_then(|i| self.slots[i].as_ref().map(|(_, v)| v))
    }

    /// The value of `key`, inserting `make()` first when it has none.
    #[inline]
    pub fn get_or_insert_with(&mut self, key: u64, make: impl FnOnce() -> V) -> (&mut V, bool) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mut i = self.home(key);
        loop {
            match &self.slots[i] {
                Some((k, _)) if *k == key => break,
                Some(_) => i = (i + 1) & self.mask(),
                None => {
                    self.slots[i] = Some((key, make()));
                    self.len += 1;
                    let (_, v) = self.slots[i].as_mut().expect("just inserted");
                    return (v, true);
                }
            }
        }
        let (_, v) = self.slots[i].as_mut().expect("found");
        (v, false)
    }

    /// Removes `key`'s entry and returns its value.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<V> {
        let mut hole = self.find(key)?;
        let (_, value) = self.slots[hole].take().expect("found");
        self.len -= 1;
        // Shift back the entries after the hole that would no longer be found past it.
        let mut i = (hole + 1) & self.mask();
        while let Some((k, _)) = &self.slots[i] {
            let home = self.home(*k);
            // The entry may fill the hole when the hole lies cyclically in [home, i).
            let distance_to_hole = hole.wrapping_sub(home) & self.mask();
            let distance_to_here = i.wrapping_sub(home) & self.mask();
            if distance_to_hole < distance_to_here {
                self.slots[hole] = self.slots[i].take();
                hole = i;
            }
            i = (i + 1) & self.mask();
        }
        Some(value)
    }

    #[cold]
    fn grow(&mut self) {
        let doubled = (0..self.slots.len() * 2).map(|_| None).collect();
        let old = std::mem::replace(&mut self.slots, doubled);
        self.len = 0;
        for (key, value) in old.into_iter().flatten() {
            let mut value = Some(value);
            self.get_or_insert_with(key, || value.take().expect("moved once"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn agrees_with_a_hash_map_through_many_inserts_and_removals() {
        let mut table = LiveTable::default();
        let mut reference = HashMap::new();
        // A deterministic mix of keys that share home slots (multiples of 64, as aligned
        // pointers are) and removals in another order than insertion.
        let mut x: u64 = 12345;
        for step in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = (x >> 40) % 300 * 64;
            if step % 3 == 0 {
                assert_eq!(table.remove(key), reference.remove(&key), "remove {key}");
            } else {
                let (v, new) = table.get_or_insert_with(key, || step);
                assert_eq!(new, !reference.contains_key(&key));
                *v += 1;
                *reference.entry(key).or_insert(step) += 1;
            }
            if step % 97 == 0 {
                for k in (0..300).map(|k| k * 64) {
                    assert_eq!(table.get(k), reference.get(&k), "get {k}");
                }
            }
        }
        assert_eq!(table.len, reference.len());
    }
}
