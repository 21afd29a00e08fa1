//! Repeated polls. A program waiting for a message often calls `MPI_Test`, `MPI_Testany`,
//! `MPI_Testall` or `MPI_Iprobe` in a tight loop, with the same arguments, and nothing
//! completes: HPCC's RandomAccess makes a million such calls a rank. When a poll repeats the
//! thread's previous call — same function, same raw inputs (the handles in its request array
//! included), no other call begun and no recorder table changed in between — and again finds
//! nothing, its signature is byte for byte the previous one: the recorder appends that
//! call's terminal without encoding a value or looking the signature up. Any other outcome
//! (a flag set, another return code) falls back to the full encoding, with the inputs copied
//! from the remembered signature. Off with `CONIFER_INPUT_MEMO=0`, like the input memo, and
//! in `MPI_THREAD_MULTIPLE` programs (another thread may change a request between the check
//! and the call).

use super::poll_memo::PollKey;
use super::*;

/// True when `handles` holds the `len` handles at `ptr`.
///
/// # Safety
/// `ptr` points to `len` readable handles.
#[inline(always)]
unsafe fn same_handles<H: HandleBits>(handles: &[u64], ptr: *const H, len: usize) -> bool {
    if handles.len() != len {
        return false;
    }
    for (i, &handle) in handles.iter().enumerate() {
        if (*ptr.add(i)).bits() != handle {
            return false;
        }
    }
    true
}

impl Call<'_> {
    /// Before a poll's inputs: true when it repeats the thread's previous call, a poll of
    /// `function` with integer and handle arguments `scalars` and in-out handles `len` at
    /// `handles` that found nothing. Its inputs are then not encoded: the poll ends in
    /// [`Call::finish_repeated_poll`], which copies them should the outcome differ.
    ///
    /// # Safety
    /// `handles` is null or points to `len` readable handles.
    #[inline(always)]
    pub unsafe fn repeats_poll<H: HandleBits>(
        &mut self,
        function: u16,
        scalars: &[u64],
        handles: *const H,
        len: usize,
    ) -> bool {
        let thread = self.thread;
        let prefix_len = self.sig.len() as u32;
        let st = locked_state(&mut self.state);
        let stamp = st.tables_stamp();
        let last_terminal = st.last_terminal(thread);
        let memo = &st.poll_memo;
        // A match rather than `is_some_and`: its closure is not inlined, and this runs on
        // every poll.
        self.repeated = match memo.last.as_ref() {
            Some(last) => {
                last.key.function == function
                    && last.key.thread == thread
                    && last.key.scalars[..usize::from(last.key.scalar_len)] == *scalars
                    && last.key.null_handles == handles.is_null()
                    && last.key.prefix_len == prefix_len
                    && (handles.is_null() || same_handles(&last.handles, handles, len))
                    && last.started + 1 == memo.started
                    && last_terminal == Some(last.terminal)
                    && last.stamp == stamp
                    && self.keep
                    && !MULTITHREADED.load(Ordering::Relaxed)
                    // With `--callsites` the prefix names the caller, which the frame does
                    // not decide.
                    && (st.callers.is_none()
                        || st.signatures[last.terminal as usize][..prefix_len as usize]
                            == **self.sig)
            }
            None => false,
        };
        if !self.repeated {
            // The key is remembered only if the poll finds nothing ([`Call::finish_poll`]).
            let mut key = PollKey {
                function,
                thread,
                scalar_len: scalars.len() as u8,
                null_handles: handles.is_null(),
                prefix_len,
                ..PollKey::default()
            };
            key.scalars[..scalars.len()].copy_from_slice(scalars);
            st.poll_memo.pending = key;
        }
        self.repeated
    }

    /// After a poll's inputs were encoded (it repeats nothing): where they end in the
    /// signature, for a repeat to copy them from.
    #[inline(always)]
    pub fn end_poll_inputs(&mut self) {
        self.inputs_end = self.sig.len() as u32;
    }

    /// After a poll's PMPI call: when it repeats the previous poll ([`Call::repeats_poll`])
    /// and found nothing again (`quiet`: its flag is clear) with the same return code, appends
    /// the previous poll's terminal and returns true — the call is done. Otherwise copies the
    /// remembered inputs into the signature when they were skipped and returns false: the
    /// caller encodes the outputs and ends with [`Call::finish_poll`].
    pub fn finish_repeated_poll<R: ReturnValue>(&mut self, quiet: bool, ret: &R) -> bool {
        if !std::mem::take(&mut self.repeated) {
            return false;
        }
        let st = locked_state(&mut self.state);
        let memo = &mut st.poll_memo;
        let last = memo
            .last
            .as_mut()
            .expect("a repeated poll's memo stays until the poll ends");
        let terminal = last.terminal;
        if quiet && ret.recorded() == last.returned {
            last.started = memo.started;
            memo.repeats += 1;
            self.append_finished(Some(terminal));
            self.state = None;
            return true;
        }
        let (from, to) = (last.key.prefix_len as usize, last.inputs_end as usize);
        self.saved.clear();
        self.saved.extend_from_slice(&last.handles);
        self.request_comm = last.request_comm;
        // The full signature: a completion call's skeleton lacks its request array.
        self.sig
            .extend_from_slice(&st.last_signature(self.thread, terminal)[from..to]);
        self.inputs_end = self.sig.len() as u32;
        false
    }

    /// Ends a poll that was not a quiet repeat, like [`Call::finish`]; a poll that found
    /// nothing (`quiet`) is remembered for the next one to repeat.
    pub fn finish_poll<R: ReturnValue>(&mut self, ret: &R, quiet: bool) {
        encode_int(self.sig, ret.recorded());
        self.append_finished(None);
        let thread = self.thread;
        let (keep, inputs_end, request_comm) = (self.keep, self.inputs_end, self.request_comm);
        let st = locked_state(&mut self.state);
        let terminal = st.last_terminal(thread);
        let stamp = st.tables_stamp();
        let memo = &mut st.poll_memo;
        let remember = quiet && keep && memo.enabled && !MULTITHREADED.load(Ordering::Relaxed);
        match (remember, terminal) {
            (true, Some(terminal)) => {
                let mut last = memo.last.take().unwrap_or_default();
                last.key = memo.pending;
                last.handles.clear();
                if !last.key.null_handles {
                    last.handles.extend_from_slice(self.saved);
                }
                last.stamp = stamp;
                last.started = memo.started;
                last.terminal = terminal;
                last.inputs_end = inputs_end;
                last.request_comm = request_comm;
                last.returned = ret.recorded();
                memo.last = Some(last);
            }
            _ => memo.last = None,
        }
        self.state = None;
    }
}
