//! The loop shortcut's state (see `repeat.rs`): the copy of a loop body held back, the body's
//! expansion spelled out so far, and the cursor walking that expansion in the live grammar.

/// Position in the expansion of one rule of the live grammar.
#[derive(Clone, Debug, Default)]
pub(super) struct Cursor {
    /// Per rule being walked: the next node of its body, and how many more
    /// times the body is to be walked including the current one.
    pub(super) frames: Vec<(u32, u64)>,
    /// The terminal of the run being walked.
    pub(super) terminal: u32,
    /// Copies of `terminal` still to come before moving on.
    pub(super) run: u64,
}

/// The copy of a loop body being held back, and the body's expansion spelled out so far.
#[derive(Clone, Debug, Default)]
pub(super) struct Follow {
    /// The first terminals of the followed rule's expansion, as the cursor walked them;
    /// all of them once a copy was complete.
    pub(super) spelled: Vec<u32>,
    /// Terminals held back: `spelled[..held]`.
    pub(super) held: usize,
    /// Length of the followed rule's expansion: a copy is complete when `held` reaches it.
    pub(super) length: usize,
    /// A copy was complete and nothing changed the grammar since: the next terminal is
    /// compared with `spelled[0]` (the start rule still ends with the followed rule).
    pub(super) again: bool,
    /// Where the walk of the followed rule's expansion stands.
    pub(super) cursor: Cursor,
}

impl Follow {
    /// True when terminals are held back.
    pub(super) fn holding(&self) -> bool {
        self.held > 0
    }
}
