//! Interning: appending items to a table unless an equal one is there, as the merge does for
//! signatures, grammars, trace-tree vertices and value streams.

use conifer_compress::fast_hash::{FastHasher, FastMap};
use std::hash::{Hash, Hasher};

/// At most this many known and incoming items together are compared directly in [`intern`].
const SCAN_BELOW: usize = 8;

/// Appends each of `incoming` to `known` unless an equal item is there already, and returns
/// the index each incoming item has in `known`. The existing items are indexed by hash, not
/// copied: signature tables and grammars are most of a record.
pub(crate) fn intern<T: Hash + Eq>(
    known: &mut Vec<T>,
    incoming: impl IntoIterator<Item = T>,
) -> Vec<u32> {
    let incoming = incoming.into_iter();
    if known.len() + incoming.size_hint().1.unwrap_or(usize::MAX) <= SCAN_BELOW {
        // A few items (most trace-tree vertices): comparing beats building an index.
        return incoming
            .map(|item| match known.iter().position(|k| *k == item) {
                Some(i) => i as u32,
                None => {
                    known.push(item);
                    known.len() as u32 - 1
                }
            })
            .collect();
    }
    let hash = |item: &T| {
        let mut h = FastHasher::default();
        item.hash(&mut h);
        h.finish()
    };
    let mut by_hash: FastMap<u64, Vec<u32>> = FastMap::default();
    for (i, item) in known.iter().enumerate() {
        by_hash.entry(hash(item)).or_default().push(i as u32);
    }
    incoming
        .into_iter()
        .map(|item| {
            let bucket = by_hash.entry(hash(&item)).or_default();
            match bucket.iter().find(|&&i| known[i as usize] == item) {
                Some(&i) => i,
                None => {
                    let i = known.len() as u32;
                    known.push(item);
                    bucket.push(i);
                    i
                }
            }
        })
        .collect()
}
