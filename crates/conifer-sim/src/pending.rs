//! A rank's pending requests: a short list while it has few (a stencil's eight, a
//! collective round's two), a hash map past [`SPILL`] (a root posting to every member).
//! The list costs a rank its entries and nothing more; a hash map keeps twice its entries'
//! room.

use conifer_trace::fast_hash::FastMap;

/// Entries kept in the list before moving to a hash map.
const SPILL: usize = 32;

/// Values by request number.
pub(crate) enum Pending<V> {
    /// Few entries, searched in order.
    Few(Vec<(u64, V)>),
    /// Many entries.
    Many(FastMap<u64, V>),
}

impl<V> Default for Pending<V> {
    fn default() -> Self {
        Pending::Few(Vec::new())
    }
}

impl<V> Pending<V> {
    /// Adds (or replaces) request `k`.
    pub(crate) fn insert(&mut self, k: u64, v: V) {
        match self {
            Pending::Few(list) => match list.iter().position(|(x, _)| *x == k) {
                Some(i) => list[i].1 = v,
                None if list.len() < SPILL => list.push((k, v)),
                None => {
                    let mut map: FastMap<u64, V> = std::mem::take(list).into_iter().collect();
                    map.insert(k, v);
                    *self = Pending::Many(map);
                }
            },
            Pending::Many(map) => {
                map.insert(k, v);
            }
        }
    }

    /// Request `k`.
    pub(crate) fn get(&self, k: &u64) -> Option<&V> {
        match self {
            Pending::Few(list) => list.iter().find(|(x, _)| x == k).map(|(_, v)| v),
            Pending::Many(map) => map.get(k),
        }
    }

    /// Request `k`, to change.
    pub(crate) fn get_mut(&mut self, k: &u64) -> Option<&mut V> {
        match self {
            Pending::Few(list) => list.iter_mut().find(|(x, _)| x == k).map(|(_, v)| v),
            Pending::Many(map) => map.get_mut(k),
        }
    }

    /// Takes request `k` out; back to an empty list once the last one went.
    pub(crate) fn remove(&mut self, k: &u64) -> Option<V> {
        match self {
            Pending::Few(list) => {
                let i = list.iter().position(|(x, _)| x == k)?;
                Some(list.swap_remove(i).1)
            }
            Pending::Many(map) => {
                let v = map.remove(k);
                if map.is_empty() {
                    *self = Pending::default();
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
        let mut p = Pending::default();
        for k in 0..100u64 {
            p.insert(k, k * 10);
        }
        assert!(matches!(p, Pending::Many(_)));
        assert_eq!(p.get(&42), Some(&420));
        *p.get_mut(&42).expect("present") += 1;
        assert_eq!(p.remove(&42), Some(421));
        assert_eq!(p.remove(&42), None);
        for k in (0..100u64).filter(|&k| k != 42) {
            assert_eq!(p.remove(&k), Some(k * 10));
        }
        assert!(matches!(&p, Pending::Few(l) if l.is_empty()));
        p.insert(7, 1);
        p.insert(7, 2);
        assert_eq!(p.get(&7), Some(&2));
    }
}
