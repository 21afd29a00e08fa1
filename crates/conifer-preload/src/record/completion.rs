//! Which calls are completion calls (see [`conifer_format::completion`]): their outputs and
//! the request arrays they are passed follow the order in which messages arrived, and go into
//! the thread's value streams instead of the signature. `CONIFER_COMPLETION_STREAMS=0` keeps
//! them in the signature, as before.

use conifer_format::completion::{Completed, Layout};
use std::sync::LazyLock;

/// A layout (see [`Layout`]'s fields).
const fn layout(
    requests: Option<usize>,
    outputs: usize,
    completed: Completed,
    quiet: Option<usize>,
) -> Layout {
    Layout {
        requests,
        outputs,
        completed,
        quiet,
    }
}

/// The completion functions and their layouts: value index of the request array, of the
/// first output, how the call names the requests it completed, and the value index of the
/// flag or count that is 0 when a poll found nothing.
const FUNCTIONS: &[(&str, Layout)] = &[
    ("MPI_Waitany", layout(Some(1), 2, Completed::Index(2), None)),
    (
        "MPI_Testany",
        layout(Some(1), 2, Completed::Index(2), Some(3)),
    ),
    (
        "MPI_Waitsome",
        layout(Some(1), 2, Completed::Indices(3), None),
    ),
    (
        "MPI_Testsome",
        layout(Some(1), 2, Completed::Indices(3), Some(2)),
    ),
    (
        "MPI_Testall",
        layout(Some(1), 2, Completed::AllIf(2), Some(2)),
    ),
    ("MPI_Test", layout(None, 1, Completed::Unknown, Some(1))),
    ("MPI_Iprobe", layout(None, 3, Completed::Unknown, Some(3))),
];

/// Per function id, its layout when it is a completion function.
static LAYOUTS: LazyLock<Vec<Option<Layout>>> = LazyLock::new(|| {
    let on = std::env::var("CONIFER_COMPLETION_STREAMS").map_or(true, |v| v != "0");
    crate::wrappers::FUNCTION_NAMES
        .iter()
        .map(|name| {
            let (_, layout) = FUNCTIONS.iter().find(|f| f.0 == *name)?;
            on.then_some(*layout)
        })
        .collect()
});

/// The layout of the call whose signature starts `sig`, when it is a completion call.
#[inline(always)]
pub fn layout_of(sig: &[u8]) -> Option<Layout> {
    // The function id's varint: one byte below 128, else two.
    let id = match *sig.first()? {
        b if b < 0x80 => usize::from(b),
        b => usize::from(b & 0x7f) | usize::from(*sig.get(1)?) << 7,
    };
    LAYOUTS.get(id).copied().flatten()
}

use super::completion_state::ThreadCompletions;
use super::state::State;
use conifer_compress::tree::TreeBuilder;
use conifer_format::completion::split;

impl State {
    /// Appends completion call `sig` of `thread` (laid out as `layout`) as its skeleton, its
    /// timing-dependent values to the thread's streams (see [`State::append`] for the rest);
    /// false, and nothing appended, when the signature is not laid out so.
    #[allow(clippy::too_many_arguments)]
    pub fn append_completion(
        &mut self,
        thread: u32,
        sig: &[u8],
        layout: Layout,
        start: u64,
        end: u64,
        site: Option<u32>,
        place: impl FnOnce(&mut Option<TreeBuilder>, Option<u32>, u32) -> bool,
    ) -> bool {
        let c = &mut self.completions;
        if split(sig, layout, &mut c.skeleton, &mut c.parts).is_none() {
            return false;
        }
        let skeleton = std::mem::take(&mut self.completions.skeleton);
        self.add_thread(thread);
        let terminal = self.terminal(thread, &skeleton);
        let c = &mut self.completions;
        let parts = std::mem::take(&mut c.parts);
        let t = c.thread(thread);
        t.sites
            .push(terminal, &skeleton, sig, &parts, layout.completed);
        let last = t.last.get_or_insert_with(|| (terminal, Vec::new()));
        last.0 = terminal;
        last.1.clear();
        last.1.extend_from_slice(sig);
        c.skeleton = skeleton;
        c.parts = parts;
        self.append_terminal(thread, terminal, start, end, site, place);
        self.raw_is(sig);
        true
    }

    /// After [`State::append_terminal`] of a poll that repeated `thread`'s previous call:
    /// feeds the streams when that was a completion call.
    pub fn repeat_completion(&mut self, thread: u32, terminal: u32) {
        let t = self.completions.thread(thread);
        if !t.sites.repeat(terminal) {
            return;
        }
        if let Some((_, full)) = self.completions.threads[thread as usize].last.take() {
            self.raw_is(&full);
            self.completions.threads[thread as usize].last = Some((terminal, full));
        }
    }

    /// The full signature of `thread`'s last call, of terminal `terminal`.
    pub fn last_signature(&self, thread: u32, terminal: u32) -> &[u8] {
        match self.completions.threads.get(thread as usize) {
            Some(ThreadCompletions {
                last: Some((t, full)),
                ..
            }) if *t == terminal => full,
            _ => &self.signatures[terminal as usize],
        }
    }

    /// The raw record's last call is `sig` (not its skeleton).
    fn raw_is(&mut self, sig: &[u8]) {
        if let Some(last) = self.raw.as_mut().and_then(|raw| raw.last_mut()) {
            last.1 = sig.into();
        }
    }
}
