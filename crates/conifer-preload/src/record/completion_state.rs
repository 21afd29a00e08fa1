//! The recorder's completion streams (see `completion.rs`): per thread, its completion
//! call sites' streams and its last completion call.

use conifer_format::completion::Split;
use conifer_format::streams::ThreadStreams;
use conifer_write::completion_streams::CompletionSites;

/// The recorder's completion streams: per thread, its call sites and its last completion
/// call.
#[derive(Default)]
pub struct Completions {
    pub(super) threads: Vec<ThreadCompletions>,
    /// Scratch for a call's skeleton and parts.
    pub(super) skeleton: Vec<u8>,
    pub(super) parts: Split,
}

/// One thread's completion call sites.
#[derive(Default)]
pub struct ThreadCompletions {
    pub(super) sites: CompletionSites,
    /// The terminal and full signature of the thread's last completion call.
    pub(super) last: Option<(u32, Vec<u8>)>,
}

impl Completions {
    /// Thread `thread`'s call sites (made on its first completion call).
    pub(super) fn thread(&mut self, thread: u32) -> &mut ThreadCompletions {
        let i = thread as usize;
        if self.threads.len() <= i {
            self.threads.resize_with(i + 1, Default::default);
        }
        &mut self.threads[i]
    }

    /// Each thread's streams (`threads` of them), or none when no thread made any.
    pub fn snapshot(&self, threads: usize) -> Vec<ThreadStreams> {
        let streams: Vec<ThreadStreams> = (0..threads)
            .map(|t| {
                self.threads
                    .get(t)
                    .map_or_else(ThreadStreams::default, |c| c.sites.snapshot())
            })
            .collect();
        if streams.iter().all(ThreadStreams::is_empty) {
            return Vec::new();
        }
        streams
    }
}
