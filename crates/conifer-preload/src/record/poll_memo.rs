//! What the recorder remembers of the last poll that found nothing, and of the poll in
//! progress (see [`super::poll_repeat`], which records a repeat from it). Part of the
//! recorder's state.

use super::input_memo::TablesStamp;

/// Most raw integer and handle arguments a poll's key holds (`MPI_Iprobe` has 3).
pub const SCALAR_WORDS: usize = 4;

/// The raw inputs of a poll: its function, integer and handle arguments, and its in-out
/// handle array (its values are taken from [`super::Call::saved`] when the poll is remembered).
#[derive(Default, Clone, Copy)]
pub struct PollKey {
    /// The poll's function id.
    pub(super) function: u16,
    /// The polling thread.
    pub(super) thread: u32,
    /// Its raw integer and handle arguments.
    pub(super) scalars: [u64; SCALAR_WORDS],
    /// How many of `scalars` it uses.
    pub(super) scalar_len: u8,
    /// True when the handle array's pointer is null (recorded as ignored, not as an array).
    pub(super) null_handles: bool,
    /// Bytes of the signature before the inputs (function, thread, call site).
    pub(super) prefix_len: u32,
}

/// A poll that found nothing, as the next identical one would record it.
#[derive(Default)]
pub struct RememberedPoll {
    /// Its raw inputs.
    pub(super) key: PollKey,
    /// The in-out handles' values before the call.
    pub(super) handles: Vec<u64>,
    /// The recorder's tables when it was recorded ([`super::state::State::tables_stamp`]).
    pub(super) stamp: TablesStamp,
    /// [`PollMemo::started`] when it was recorded: a repeat must be the very next call.
    pub(super) started: u64,
    /// Its terminal.
    pub(super) terminal: u32,
    /// End of its inputs in its signature.
    pub(super) inputs_end: u32,
    /// The communicator of the requests it named (for statuses, should a repeat complete one).
    pub(super) request_comm: Option<u64>,
    /// What it returned.
    pub(super) returned: i64,
}

/// The last poll that found nothing, and the key of the poll in progress.
#[derive(Default)]
pub struct PollMemo {
    /// On when the input memo is.
    pub(super) enabled: bool,
    /// Calls begun on the rank so far ([`PollMemo::call_started`]).
    pub(super) started: u64,
    /// The key of the poll in progress.
    pub(super) pending: PollKey,
    /// The last poll that found nothing, if it may still repeat.
    pub(super) last: Option<RememberedPoll>,
    /// Polls appended by repeating the previous one (`CONIFER_MERGE_REPORT`'s
    /// `repeated_polls`).
    pub repeats: u64,
}

impl PollMemo {
    /// A memo, on when the input memo is ([`super::input_memo::InputMemo::enabled`]).
    pub fn new(enabled: bool) -> PollMemo {
        PollMemo {
            enabled,
            ..PollMemo::default()
        }
    }

    /// Counts a call beginning (every recorded call's [`super::Call::begin`]).
    #[inline(always)]
    pub fn call_started(&mut self) {
        self.started += 1;
    }
}
