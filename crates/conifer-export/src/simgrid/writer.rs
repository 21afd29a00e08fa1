//! One rank's file as SMPI's replay will read it: lines in call order, with the requests
//! the replay will hold under the keys it files them by.

use std::collections::{HashMap, VecDeque};
use std::io::Write;

/// Lines that may wait behind a wildcard receive for its completion before it is written
/// with SMPI's wildcards.
pub const HOLD_LIMIT: usize = 1 << 16;

/// SMPI's `MPI_ANY_SOURCE` (`include/smpi/smpi.h`).
const ANY_SOURCE: i64 = -555;
/// SMPI's `MPI_ANY_TAG`.
const ANY_TAG: i64 = -444;

/// A sender as SMPI's replay reads it (`MPI_ANY_SOURCE` when unknown).
pub(super) fn source_of(from: Option<u32>) -> i64 {
    from.map_or(ANY_SOURCE, i64::from)
}

/// A tag as SMPI's replay reads it (`MPI_ANY_TAG` for negative ones).
pub(super) fn tag_of(tag: i64) -> i64 {
    if tag < 0 {
        ANY_TAG
    } else {
        tag
    }
}

/// What a receive's completion tells: sender, tag and bytes.
pub(super) type Resolved = (Option<u32>, i64, u64);

/// (sender, receiver, tag) under which the replay files a request (its `RequestStorage`
/// keys on actor ids minus one: world ranks, and `ANY_SOURCE - 1` for a wildcard sender).
pub(super) type Key = (i64, i64, i64);

/// A line not yet written: ready, or a wildcard receive waiting for its completion.
enum Line {
    Ready(String),
    Irecv {
        from: Option<u32>,
        tag: i64,
        bytes: u64,
    },
    /// A held receive the program cancelled: written as nothing.
    Dropped,
}

/// One rank's file: lines in call order, the requests the replay will hold.
pub(super) struct RankWriter<W: Write> {
    rank: u32,
    out: W,
    /// Lines held back behind the oldest unresolved wildcard receive; `held_base` is the
    /// number of lines written before the first of them.
    held: VecDeque<Line>,
    held_base: usize,
    /// Requests posted and not completed: the key their action filed them under, or the
    /// position of their held line.
    pending: HashMap<u64, Pending>,
    /// Nanoseconds of computation not written yet, and the flop rate converting them.
    compute_ns: u64,
    flops_per_second: f64,
    /// Lines written (and held).
    actions: u64,
}

/// A pending request as the writer knows it.
#[derive(Clone, Copy)]
enum Pending {
    Filed(Key),
    Held(usize),
}

impl<W: Write> RankWriter<W> {
    /// The file of `rank`, starting with `init`, written to `out`; time between calls
    /// becomes `compute` at `flops_per_second`.
    pub(super) fn new(rank: u32, out: W, flops_per_second: f64) -> std::io::Result<Self> {
        let mut w = RankWriter {
            rank,
            out,
            held: VecDeque::new(),
            held_base: 0,
            pending: HashMap::new(),
            compute_ns: 0,
            flops_per_second,
            actions: 0,
        };
        w.text("init".into())?;
        Ok(w)
    }

    /// `ns` nanoseconds of computation before the next action.
    pub(super) fn elapse(&mut self, ns: u64) {
        self.compute_ns += ns;
    }

    /// An action needing no request bookkeeping.
    pub(super) fn text(&mut self, text: String) -> std::io::Result<()> {
        self.push(Line::Ready(text))?;
        self.bound()
    }

    /// Adds `line`, after the computation since the previous action (kept for later while
    /// under one flop); returns the line's number.
    fn push(&mut self, line: Line) -> std::io::Result<usize> {
        let flops = (self.compute_ns as f64 * 1e-9 * self.flops_per_second).round();
        if flops >= 1.0 {
            self.compute_ns = 0;
            self.push_line(Line::Ready(format!("compute {flops:.0}")))?;
        }
        self.push_line(line)
    }

    fn push_line(&mut self, line: Line) -> std::io::Result<usize> {
        self.actions += 1;
        let at = self.held_base + self.held.len();
        match line {
            Line::Ready(text) if self.held.is_empty() => {
                self.held_base += 1;
                writeln!(self.out, "{} {text}", self.rank)?;
            }
            line => self.held.push_back(line),
        }
        Ok(at)
    }

    /// Releases the oldest held receive while more than [`HOLD_LIMIT`] lines are held.
    fn bound(&mut self) -> std::io::Result<()> {
        while self.held.len() > HOLD_LIMIT {
            self.release_front();
            self.flush_ready()?;
        }
        Ok(())
    }

    /// A non-blocking send posted (request `None`: one completed within the same call).
    pub(super) fn isend(
        &mut self,
        request: Option<u64>,
        to: u32,
        tag: i64,
        bytes: u64,
    ) -> std::io::Result<()> {
        let tag = tag_of(tag);
        if let Some(request) = request {
            let key = (i64::from(self.rank), i64::from(to), tag);
            self.pending.insert(request, Pending::Filed(key));
        }
        self.text(format!("isend {to} {tag} {bytes}"))
    }

    /// A non-blocking receive posted, held back while its sender or tag is a wildcard.
    pub(super) fn irecv(
        &mut self,
        request: u64,
        from: Option<u32>,
        tag: i64,
        bytes: u64,
    ) -> std::io::Result<()> {
        match from {
            Some(from) if tag >= 0 => {
                let key = (i64::from(from), i64::from(self.rank), tag);
                self.pending.insert(request, Pending::Filed(key));
                self.text(format!("irecv {from} {tag} {bytes}"))
            }
            _ => {
                let at = self.push(Line::Irecv { from, tag, bytes })?;
                self.pending.insert(request, Pending::Held(at));
                self.bound()
            }
        }
    }

    /// Writes the held receive at absolute line `at` with `resolved` (the posted values
    /// where it is `None` or lacks them), returning its key.
    fn resolve(&mut self, at: usize, resolved: Option<Resolved>) -> Key {
        let line = &mut self.held[at - self.held_base];
        let Line::Irecv { from, tag, bytes } = *line else {
            unreachable!("a held request's line is its receive");
        };
        let (from, tag, bytes) = match resolved {
            Some((Some(f), t, b)) if t >= 0 => (Some(f), t, b),
            _ => (from, tag, bytes),
        };
        let source = source_of(from);
        let tag = tag_of(tag);
        *line = Line::Ready(format!("irecv {source} {tag} {bytes}"));
        let filed = if from.is_some() {
            source
        } else {
            ANY_SOURCE - 1
        };
        (filed, i64::from(self.rank), tag)
    }

    /// Writes the front held receive with what it was posted with (wildcards).
    fn release_front(&mut self) {
        let at = self.held_base;
        let key = self.resolve(at, None);
        if let Some(p) = self
            .pending
            .values_mut()
            .find(|p| matches!(p, Pending::Held(h) if *h == at))
        {
            *p = Pending::Filed(key);
        }
    }

    /// Writes the held lines before the first unresolved receive.
    fn flush_ready(&mut self) -> std::io::Result<()> {
        while matches!(self.held.front(), Some(Line::Ready(_) | Line::Dropped)) {
            let line = self.held.pop_front();
            self.held_base += 1;
            if let Some(Line::Ready(text)) = line {
                writeln!(self.out, "{} {text}", self.rank)?;
            }
        }
        Ok(())
    }

    /// The receive posted as `request` was cancelled before any message matched it: a held
    /// (wildcard) receive is dropped; one already written stays, as the replay has no cancel.
    pub(super) fn cancel(&mut self, request: u64) -> std::io::Result<()> {
        if let Some(Pending::Held(at)) = self.pending.remove(&request) {
            self.held[at - self.held_base] = Line::Dropped;
            self.flush_ready()?;
        }
        Ok(())
    }

    /// Request `request` completed: its key (`None` if the replay never saw it posted).
    pub(super) fn complete(
        &mut self,
        request: u64,
        resolved: Option<Resolved>,
    ) -> std::io::Result<Option<Key>> {
        let key = match self.pending.remove(&request) {
            None => return Ok(None),
            Some(Pending::Filed(key)) => key,
            Some(Pending::Held(at)) => self.resolve(at, resolved),
        };
        self.flush_ready()?;
        Ok(Some(key))
    }

    /// `wait` for the request filed under `key`.
    pub(super) fn wait(&mut self, (src, dst, tag): Key) -> std::io::Result<()> {
        self.text(format!("wait {src} {dst} {tag}"))
    }

    /// `MPI_Waitall` completing `done`: one `waitall` when that is every pending request
    /// (the replay's `waitall` waits for all), else one `wait` each.
    pub(super) fn wait_all(&mut self, done: Vec<(u64, Option<Resolved>)>) -> std::io::Result<()> {
        let all = done.len() == self.pending.len()
            && done.iter().all(|(r, _)| self.pending.contains_key(r));
        let mut keys = Vec::new();
        for (request, resolved) in done {
            keys.extend(self.complete(request, resolved)?);
        }
        if all {
            return self.text("waitall".into());
        }
        for key in keys {
            self.wait(key)?;
        }
        Ok(())
    }

    /// Writes what is held (wildcard receives never completed keep their wildcards) and
    /// returns the number of lines.
    pub(super) fn finish(mut self) -> std::io::Result<u64> {
        while !self.held.is_empty() {
            self.release_front();
            self.flush_ready()?;
        }
        self.out.flush()?;
        Ok(self.actions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(w: RankWriter<Vec<u8>>) -> Vec<String> {
        let mut w = w;
        while !w.held.is_empty() {
            w.release_front();
            w.flush_ready().unwrap();
        }
        String::from_utf8(w.out)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn a_wildcard_receive_takes_the_sender_and_tag_of_its_completion() {
        let mut w = RankWriter::new(1, Vec::new(), 1e9).unwrap();
        w.irecv(0, None, -1, 8).unwrap();
        w.text("barrier".into()).unwrap();
        w.isend(Some(1), 2, 5, 16).unwrap();
        assert_eq!(w.out.len(), "1 init\n".len(), "held behind the receive");
        let key = w.complete(0, Some((Some(3), 7, 8))).unwrap();
        assert_eq!(key, Some((3, 1, 7)));
        assert_eq!(
            lines(w),
            ["1 init", "1 irecv 3 7 8", "1 barrier", "1 isend 2 5 16"]
        );
    }

    #[test]
    fn held_receives_keep_their_place_after_computation() {
        let mut w = RankWriter::new(0, Vec::new(), 1e9).unwrap();
        w.elapse(10);
        w.irecv(0, None, 3, 8).unwrap();
        w.elapse(20);
        w.irecv(1, None, 3, 8).unwrap();
        w.complete(1, Some((Some(2), 3, 8))).unwrap();
        w.complete(0, Some((Some(1), 3, 8))).unwrap();
        assert_eq!(
            lines(w),
            [
                "0 init",
                "0 compute 10",
                "0 irecv 1 3 8",
                "0 compute 20",
                "0 irecv 2 3 8"
            ]
        );
    }

    #[test]
    fn a_receive_completed_without_a_status_keeps_the_wildcards() {
        let mut w = RankWriter::new(0, Vec::new(), 1e9).unwrap();
        w.irecv(4, None, -1, 8).unwrap();
        let key = w.complete(4, Some((None, -1, 8))).unwrap();
        assert_eq!(key, Some((ANY_SOURCE - 1, 0, ANY_TAG)));
        assert_eq!(lines(w), ["0 init", "0 irecv -555 -444 8"]);
    }

    #[test]
    fn held_lines_are_bounded() {
        let mut w = RankWriter::new(0, Vec::new(), 1e9).unwrap();
        w.irecv(0, Some(2), -1, 8).unwrap();
        for _ in 0..=HOLD_LIMIT {
            w.text("barrier".into()).unwrap();
        }
        assert!(w.held.is_empty(), "released with its wildcard tag");
        let key = w.complete(0, Some((Some(2), 9, 8))).unwrap();
        assert_eq!(key, Some((2, 0, ANY_TAG)), "filed as written");
        assert_eq!(lines(w)[1], "0 irecv 2 -444 8");
    }

    #[test]
    fn waitall_only_when_it_completes_every_pending_request() {
        let mut w = RankWriter::new(0, Vec::new(), 1e9).unwrap();
        w.isend(Some(0), 1, 3, 8).unwrap();
        w.irecv(1, Some(1), 3, 8).unwrap();
        w.wait_all(vec![(0, None)]).unwrap();
        w.wait_all(vec![(1, Some((Some(1), 3, 8)))]).unwrap();
        w.wait_all(vec![]).unwrap();
        assert_eq!(
            lines(w),
            [
                "0 init",
                "0 isend 1 3 8",
                "0 irecv 1 3 8",
                "0 wait 0 1 3",
                "0 waitall",
                "0 waitall"
            ]
        );
    }

    #[test]
    fn computation_is_written_once_it_makes_a_flop() {
        let mut w = RankWriter::new(0, Vec::new(), 2e9).unwrap();
        w.elapse(1500);
        w.text("barrier".into()).unwrap();
        w.elapse(0);
        w.text("barrier".into()).unwrap();
        assert_eq!(
            lines(w),
            ["0 init", "0 compute 3000", "0 barrier", "0 barrier"]
        );
    }
}
