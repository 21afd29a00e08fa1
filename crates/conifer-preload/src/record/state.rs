//! What one rank has recorded: the signature table (signature → terminal), one grammar per
//! thread, aggregate timing per signature, and the symbolic-id registries.

use super::comms::Comms;
use super::handles::Handles;
use super::input_memo::{InputMemo, TablesStamp};
use super::poll_memo::PollMemo;
use super::requests::Requests;
use super::tick_histograms::TickHistograms;
use super::tick_timing::CallTicks;
use super::word_hash::FastMap;
use conifer_compress::tree::TreeBuilder;
use conifer_compress::Grammar;
use conifer_format::timing_mode::TimingMode;

/// Everything a rank records, behind one lock.
pub struct State {
    /// Object ids other than communicators and requests.
    pub handles: Handles,
    /// Communicators (created after `MPI_Init`).
    pub comms: Option<Comms>,
    /// Request pools.
    pub requests: Requests,
    /// Buffer address → segment id on first use, when heap tracking is off.
    pub segments: FastMap<usize, u32>,
    /// Signature → terminal.
    pub table: FastMap<Box<[u8]>, u32>,
    /// Terminal → signature.
    pub signatures: Vec<Box<[u8]>>,
    /// Terminal + 1 of a signature appended recently, per [`recent_slot`] (0: none): a call
    /// repeating it skips hashing and probing [`State::table`].
    recent: [u32; RECENT_SLOTS],
    /// Terminal → terminal + 1 of the call that last followed it on its thread (0: none):
    /// in a loop the next call is most often the one that followed last time, which skips
    /// hashing even when the loop body's calls share a [`recent_slot`].
    successor: Vec<u32>,
    /// Symbolic thread → terminal + 1 of its last call (0: none yet).
    last_terminal: Vec<u32>,
    /// Terminal → timing (durations, and intervals since the thread's previous call), in
    /// clock ticks until the record is taken.
    pub timing: Vec<CallTicks>,
    /// Symbolic thread → tick its last call ended (0 before its first call), on the
    /// thread's recorder-free clock; grows with `grammars` and `trees`.
    pub last_end: Vec<u64>,
    /// Symbolic thread → ticks the recorder itself has spent in the thread's wrappers so
    /// far (encoding, compressing, locking: everything but the PMPI call; and one clock read
    /// per interval and per duration, [`crate::clock::read_cost`]). Recorded times
    /// are taken on a clock that stops while the recorder works (`real − hidden`), so
    /// intervals are the program's own computation and durations the MPI library's time,
    /// as in a run without Conifer.
    pub hidden: Vec<u64>,
    /// Symbolic thread → grammar of its calls.
    pub grammars: Vec<Grammar>,
    /// Calls per wrapped function id, counted when they start (so calls still in progress when
    /// a run is cut short are counted): a cross-check of the grammars.
    pub calls: Vec<u64>,
    /// Raw record (`CONIFER_RAW`): every signature in call order, per thread.
    pub raw: Option<Vec<(u32, Box<[u8]>)>>,
    /// The timing recorded (`CONIFER_TIMING`).
    pub timing_mode: TimingMode,
    /// Lossless or lossy timing: per thread, every call's times.
    pub timelines: Option<Vec<Vec<TimedCall>>>,
    /// Symbolic thread → its first call's start on its recorder-free clock (which then equals
    /// the real clock less the call's own recorder time: see [`super::snapshot`]).
    pub first_start: Vec<u64>,
    /// Histogram timing: per terminal, its calls' durations and intervals in tick bins.
    pub histograms: Option<TickHistograms>,
    /// Nanoseconds per tick, measured once when first asked for (so the record and the raw
    /// record convert ticks alike).
    pub ns_per_tick: std::sync::OnceLock<f64>,
    /// Tree mode: per thread, its trace tree builder (see [`super::trees`]).
    pub trees: Vec<Option<TreeBuilder>>,
    /// With `--callsites`: the loaded modules, where return addresses are looked up.
    pub callers: Option<super::callers::Modules>,
    /// Recently recorded inputs by raw arguments (see [`super::input_memo`]).
    pub input_memo: InputMemo,
    /// The last poll that found nothing (see [`super::poll_repeat`]).
    pub poll_memo: PollMemo,
    /// Completion calls' streams (see [`super::completion`]).
    pub completions: super::completion_state::Completions,
    /// Bumped whenever the handle or communicator tables change (an object is named, made
    /// or released): inputs remembered before are encoded anew.
    tables_version: u64,
}

/// One call's times with per-call timing, in ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimedCall {
    /// Start of its MPI part, on the thread's recorder-free clock.
    pub start: u64,
    /// End of its MPI part, on the same clock.
    pub end: u64,
    /// The recorder's time from the wrapper's entry to the MPI part (real ticks).
    pub pre: u64,
    /// The recorder's time from the MPI part's end to the wrapper's return (real ticks;
    /// known once the thread's next call begins).
    pub post: u64,
    /// The thread's hidden ticks when the call was appended: its MPI part ended at real tick
    /// `end + hidden` and started one clock read of hiding earlier on the recorder-free clock.
    pub hidden: u64,
}

/// Slots of [`State::recent`].
const RECENT_SLOTS: usize = 64;

/// The [`State::recent`] slot of a signature: by its function id's first byte and its
/// length, so the calls of one loop body rarely share a slot.
#[inline(always)]
fn recent_slot(sig: &[u8]) -> usize {
    (usize::from(sig.first().copied().unwrap_or(0)) * 7 + sig.len()) % RECENT_SLOTS
}

impl State {
    /// The terminal of `sig`, called by `thread`: a new one for a signature not seen before.
    #[inline(always)]
    pub(super) fn terminal(&mut self, thread: u32, sig: &[u8]) -> u32 {
        let previous = self.last_terminal[thread as usize];
        let predicted = match previous {
            0 => 0,
            p => self.successor[p as usize - 1],
        };
        let terminal = if predicted != 0 && *self.signatures[predicted as usize - 1] == *sig {
            predicted - 1
        } else {
            let t = self.terminal_unpredicted(sig);
            if previous != 0 {
                self.successor[previous as usize - 1] = t + 1;
            }
            t
        };
        self.last_terminal[thread as usize] = terminal + 1;
        terminal
    }

    /// The terminal of `sig` when it is not the predicted successor.
    fn terminal_unpredicted(&mut self, sig: &[u8]) -> u32 {
        let slot = recent_slot(sig);
        let recent = self.recent[slot];
        if recent != 0 && *self.signatures[recent as usize - 1] == *sig {
            return recent - 1;
        }
        let terminal = match self.table.get(sig) {
            Some(&t) => t,
            None => {
                let t = self.signatures.len() as u32;
                self.table.insert(sig.into(), t);
                self.signatures.push(sig.into());
                self.timing.push(CallTicks::default());
                self.successor.push(0);
                t
            }
        };
        self.recent[slot] = terminal + 1;
        terminal
    }

    /// Notes that the handle or communicator tables changed.
    pub fn tables_changed(&mut self) {
        self.tables_version += 1;
    }

    /// The state of every table an input's encoding reads (see [`super::input_memo`]).
    #[inline(always)]
    pub fn tables_stamp(&self) -> TablesStamp {
        (self.tables_version, crate::heap::epoch())
    }

    /// Nanoseconds per clock tick (see [`State::ns_per_tick`]).
    pub fn ns_per_tick(&self) -> f64 {
        *self.ns_per_tick.get_or_init(crate::clock::ns_per_tick)
    }

    /// An empty record.
    pub fn new() -> State {
        let timing_mode = super::timing_env::requested();
        let input_memo = InputMemo::from_environment();
        let poll_memo = PollMemo::new(input_memo.enabled());
        State {
            handles: Handles::with_predefined(),
            comms: None,
            requests: Requests::default(),
            segments: FastMap::default(),
            table: FastMap::default(),
            signatures: Vec::new(),
            recent: [0; RECENT_SLOTS],
            successor: Vec::new(),
            last_terminal: Vec::new(),
            timing: Vec::new(),
            last_end: Vec::new(),
            hidden: Vec::new(),
            grammars: Vec::new(),
            trees: Vec::new(),
            calls: vec![0; crate::wrappers::FUNCTION_NAMES.len()],
            timing_mode,
            timelines: timing_mode.keeps_calls().then(Vec::new),
            first_start: Vec::new(),
            histograms: (timing_mode == TimingMode::Histogram).then(TickHistograms::default),
            ns_per_tick: std::sync::OnceLock::new(),
            callers: super::callers::requested().then(Default::default),
            input_memo,
            poll_memo,
            completions: Default::default(),
            tables_version: 0,
            raw: std::env::var_os("CONIFER_RAW")
                .filter(|v| v != "0" && !v.is_empty())
                .map(|_| Vec::new()),
        }
    }

    /// Makes room for symbolic thread `thread`'s grammar, tree and clocks (a thread's first
    /// recorded call does; [`State::hide`] and [`State::recorder_free`] expect it done).
    #[inline(always)]
    pub fn add_thread(&mut self, thread: u32) {
        if self.grammars.len() > thread as usize {
            return;
        }
        self.add_threads_up_to(thread);
    }

    #[cold]
    fn add_threads_up_to(&mut self, thread: u32) {
        while self.grammars.len() <= thread as usize {
            self.grammars.push(Grammar::new());
            self.trees.push(None);
            self.last_end.push(0);
            self.first_start.push(0);
            self.hidden.push(0);
            self.last_terminal.push(0);
        }
    }

    /// Adds `ticks` of the recorder's own work on `thread` to [`State::hidden`].
    #[inline(always)]
    pub fn hide(&mut self, thread: u32, ticks: u64) {
        self.hidden[thread as usize] += ticks;
    }

    /// With per-call timing, notes the recorder's time `ticks` before the MPI part of
    /// `thread`'s last appended call.
    #[inline(always)]
    pub fn note_pre(&mut self, thread: u32, ticks: u64) {
        if let Some(timelines) = &mut self.timelines {
            if let Some(call) = timelines
                .get_mut(thread as usize)
                .and_then(|t| t.last_mut())
            {
                call.pre = ticks;
            }
        }
    }

    /// With per-call timing, notes the recorder's time `ticks` after the MPI part of
    /// `thread`'s last appended call, until its wrapper returned.
    #[inline(always)]
    pub fn note_post(&mut self, thread: u32, ticks: u64) {
        if let Some(timelines) = &mut self.timelines {
            if let Some(call) = timelines
                .get_mut(thread as usize)
                .and_then(|t| t.last_mut())
            {
                call.post = ticks;
            }
        }
    }

    /// Real tick `real` on `thread`'s recorder-free clock.
    #[inline(always)]
    pub fn recorder_free(&self, thread: u32, real: u64) -> u64 {
        real.saturating_sub(self.hidden[thread as usize])
    }

    /// Appends one finished call of `thread` with signature `sig`, from tick `start` to `end`,
    /// made at structure-tree call site `site` when known. Runs on the calling thread.
    /// `start` and `end` are ticks on the thread's recorder-free clock ([`State::hidden`]).
    /// `place` puts the call in the thread's trace tree, given its builder, and says whether it
    /// did (the call then stays out of the thread's grammar); the recorder passes the placement
    /// that also applies the thread's pending structure events.
    pub fn append(
        &mut self,
        thread: u32,
        sig: &[u8],
        start: u64,
        end: u64,
        site: Option<u32>,
        place: impl FnOnce(&mut Option<TreeBuilder>, Option<u32>, u32) -> bool,
    ) {
        self.add_thread(thread);
        let terminal = self.terminal(thread, sig);
        self.append_terminal(thread, terminal, start, end, site, place);
    }

    /// The terminal of `thread`'s last call (`None` before its first).
    #[inline(always)]
    pub fn last_terminal(&self, thread: u32) -> Option<u32> {
        self.last_terminal
            .get(thread as usize)
            .and_then(|&t| t.checked_sub(1))
    }

    /// [`State::append`] of a call whose terminal is known: `thread`'s last call's, when a
    /// poll repeats it ([`super::poll_repeat`]).
    #[inline(always)]
    pub fn append_terminal(
        &mut self,
        thread: u32,
        terminal: u32,
        start: u64,
        end: u64,
        site: Option<u32>,
        place: impl FnOnce(&mut Option<TreeBuilder>, Option<u32>, u32) -> bool,
    ) {
        let previous = std::mem::replace(&mut self.last_end[thread as usize], end);
        let interval = if previous == 0 {
            self.first_start[thread as usize] = start;
            0
        } else {
            start.saturating_sub(previous)
        };
        self.timing[terminal as usize].add(interval, end.saturating_sub(start));
        if let Some(histograms) = &mut self.histograms {
            histograms.add(terminal, interval, end.saturating_sub(start));
        }
        if let Some(timelines) = &mut self.timelines {
            while timelines.len() <= thread as usize {
                timelines.push(Vec::new());
            }
            timelines[thread as usize].push(TimedCall {
                start,
                end,
                pre: 0,
                post: 0,
                hidden: self.hidden[thread as usize],
            });
        }
        let in_tree = place(&mut self.trees[thread as usize], site, terminal);
        if !in_tree {
            self.grammars[thread as usize].push(terminal);
        }
        if let Some(raw) = &mut self.raw {
            raw.push((thread, self.signatures[terminal as usize].clone()));
        }
    }
}
