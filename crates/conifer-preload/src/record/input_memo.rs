//! Recently recorded inputs by their raw arguments. A call's inputs (counts, ranks, tags,
//! handles, buffers) are encoded through the recorder's object tables: handle ids, relative
//! ranks, buffer segments. When a function is called again with the same raw arguments from
//! the same stack frame and none of those tables changed meanwhile, the encoding is the same
//! bytes, so they are copied instead of computed — in a loop, most calls. Only functions
//! whose inputs are decided by their raw arguments alone are keyed this way (the generator
//! decides: no arrays or strings read through pointers, no requests named by value).

/// Slots of the memo (a power of two), direct-mapped by function and key.
const SLOTS: usize = 64;

/// Raw words a key may hold (the generator's `MEMO_KEY_WORDS`).
const KEY_WORDS: usize = 12;

/// What the recorder's object tables looked like: the version of its handle and
/// communicator tables, and the heap tracker's epoch. Any change invalidates every entry.
pub type TablesStamp = (u64, u64);

/// One remembered encoding.
#[derive(Default)]
struct Entry {
    function: u16,
    key_len: u8,
    key: [u64; KEY_WORDS],
    frame: usize,
    stamp: TablesStamp,
    bytes: Vec<u8>,
}

/// The memo: the last encoding of each slot.
#[derive(Default)]
pub struct InputMemo {
    entries: Vec<Entry>,
    /// False with `CONIFER_INPUT_MEMO=0`: every call encodes its inputs (the reference the
    /// tests compare the memo with).
    enabled: bool,
}

/// The slot of a function's call with raw arguments `key`.
#[inline(always)]
fn slot(function: u16, key: &[u64]) -> usize {
    let mut h = u64::from(function).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for &word in key {
        h = (h ^ word)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
    (h >> 32) as usize % SLOTS
}

impl InputMemo {
    /// A memo, on unless the environment says `CONIFER_INPUT_MEMO=0`.
    pub fn from_environment() -> InputMemo {
        InputMemo {
            entries: Vec::new(),
            enabled: std::env::var_os("CONIFER_INPUT_MEMO").is_none_or(|v| v != "0"),
        }
    }

    /// False with `CONIFER_INPUT_MEMO=0` (which also turns off [`super::poll_repeat`]).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The inputs recorded for `function` called with `key` from the frame at `frame`, if
    /// they are remembered and the tables are still as stamped.
    #[inline(always)]
    pub fn find(
        &self,
        function: u16,
        key: &[u64],
        frame: usize,
        stamp: TablesStamp,
    ) -> Option<&[u8]> {
        let entry = self.entries.get(slot(function, key))?;
        (entry.function == function
            && entry.stamp == stamp
            && entry.frame == frame
            && usize::from(entry.key_len) == key.len()
            && entry.key[..key.len()] == *key)
            .then_some(&entry.bytes[..])
    }

    /// Remembers that `function` called with `key` from `frame` recorded `bytes` as inputs,
    /// with the tables as `stamp` says.
    pub fn remember(
        &mut self,
        function: u16,
        key: &[u64],
        frame: usize,
        stamp: TablesStamp,
        bytes: &[u8],
    ) {
        if !self.enabled || key.len() > KEY_WORDS {
            return;
        }
        if self.entries.is_empty() {
            self.entries.resize_with(SLOTS, Entry::default);
        }
        let entry = &mut self.entries[slot(function, key)];
        entry.function = function;
        entry.key_len = key.len() as u8;
        entry.key[..key.len()].copy_from_slice(key);
        entry.frame = frame;
        entry.stamp = stamp;
        entry.bytes.clear();
        entry.bytes.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_serves_only_its_function_key_frame_and_stamp() {
        let mut memo = InputMemo {
            enabled: true,
            ..InputMemo::default()
        };
        memo.remember(7, &[1, 2, 3], 100, (4, 5), b"abc");
        assert_eq!(memo.find(7, &[1, 2, 3], 100, (4, 5)), Some(&b"abc"[..]));
        assert_eq!(memo.find(8, &[1, 2, 3], 100, (4, 5)), None);
        assert_eq!(memo.find(7, &[1, 2, 4], 100, (4, 5)), None);
        assert_eq!(memo.find(7, &[1, 2], 100, (4, 5)), None);
        assert_eq!(memo.find(7, &[1, 2, 3], 108, (4, 5)), None);
        assert_eq!(memo.find(7, &[1, 2, 3], 100, (5, 5)), None);
        assert_eq!(memo.find(7, &[1, 2, 3], 100, (4, 6)), None);
    }

    #[test]
    fn a_disabled_memo_remembers_nothing() {
        let mut memo = InputMemo::default();
        memo.remember(7, &[1, 2, 3], 100, (4, 5), b"abc");
        assert_eq!(memo.find(7, &[1, 2, 3], 100, (4, 5)), None);
    }
}
