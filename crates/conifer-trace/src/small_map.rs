//! A map that is a short list while it has few entries (a rank's pending requests: a
//! stencil's eight, a collective round's two) and a hash map past 32 entries (a root posting
//! to every member). The list costs its entries and nothing more; a hash map keeps about
//! twice its entries' room, which a simulator holding 10⁶ ranks' requests feels.

use conifer_compress::fast_hash::FastMap;
use std::hash::Hash;

/// Entries kept in the list before moving to a hash map.
const SPILL: usize = 32;

/// Values by key.
pub enum SmallMap<K, V> {
    /// Few entries, searched in order.
    Few(Vec<(K, V)>),
    /// Many entries.
    Many(FastMap<K, V>),
}

impl<K, V> Default for SmallMap<K, V> {
    fn default() -> Self {
        SmallMap::Few(Vec::new())
    }
}

impl<K: Copy + Eq + Hash, V> SmallMap<K, V> {
    /// Adds (or replaces) `k`.
    pub fn insert(&mut self, k: K, v: V) {
        match self {
            SmallMap::Few(list) => match list.iter().position(|(x, _)| *x == k) {
                Some(i) => list[i].1 = v,
                None if list.len() < SPILL => list.push((k, v)),
                None => {
                    let mut map: FastMap<K, V> = std::mem::take(list).into_iter().collect();
                    map.insert(k, v);
                    *self = SmallMap::Many(map);
                }
            },
            SmallMap::Many(map) => {
                map.insert(k, v);
            }
        }
    }

    /// The value of `k`.
    pub fn get(&self, k: &K) -> Option<&V> {
        match self {
            SmallMap::Few(list) => list.iter().find(|(x, _)| x == k).map(|(_, v)| v),
            SmallMap::Many(map) => map.get(k),
        }
    }

    /// The value of `k`, to change.
    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        match self {
            SmallMap::Few(list) => list.iter_mut().find(|(x, _)| x == k).map(|(_, v)| v),
            SmallMap::Many(map) => map.get_mut(k),
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        match self {
            SmallMap::Few(list) => list.len(),
            SmallMap::Many(map) => map.len(),
        }
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keeps the entries `keep` says yes to; back to an empty list when none is left.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        match self {
            SmallMap::Few(list) => list.retain_mut(|(k, v)| keep(k, v)),
            SmallMap::Many(map) => {
                map.retain(|k, v| keep(k, v));
                if map.is_empty() {
                    *self = SmallMap::default();
                }
            }
        }
    }

    /// Takes `k` out; back to an empty list once the last one went.
    pub fn remove(&mut self, k: &K) -> Option<V> {
        match self {
            SmallMap::Few(list) => {
                let i = list.iter().position(|(x, _)| x == k)?;
                Some(list.swap_remove(i).1)
            }
            SmallMap::Many(map) => {
                let v = map.remove(k);
                if map.is_empty() {
                    *self = SmallMap::default();
                }
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_to_a_map_and_back() {
        let mut p = SmallMap::default();
        for k in 0..100u64 {
            p.insert(k, k * 10);
        }
        assert!(matches!(p, SmallMap::Many(_)));
        assert_eq!(p.get(&42), Some(&420));
        *p.get_mut(&42).expect("present") += 1;
        assert_eq!(p.remove(&42), Some(421));
        assert_eq!(p.remove(&42), None);
        for k in (0..100u64).filter(|&k| k != 42) {
            assert_eq!(p.remove(&k), Some(k * 10));
        }
        assert!(matches!(&p, SmallMap::Few(l) if l.is_empty()));
        for k in 0..100u64 {
            p.insert(k, k);
        }
        p.retain(|_, v| *v >= 90);
        assert_eq!(p.len(), 10);
        p.retain(|_, _| false);
        assert!(matches!(&p, SmallMap::Few(l) if l.is_empty()));
        p.insert(7, 1);
        p.insert(7, 2);
        assert_eq!(p.get(&7), Some(&2));
    }
}
