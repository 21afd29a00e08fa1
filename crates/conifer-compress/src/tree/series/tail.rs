//! The growing end of a series: segments not yet handed to the grammar, the trailing cycle's
//! progress and the open run. While values repeat the trailing cycle exactly, the tail only
//! compares each value with the one the cycle predicts ([`Tail::follow`]); the runs those
//! values make are worked out again only when a value departs from the cycle.

use super::segment::{Run, Segment};

/// Longest cycle body, in values, followed value by value; longer bodies are matched run by
/// run.
const FOLLOW_MAX: usize = 256;

#[cfg(test)]
thread_local! {
    /// Tests set this to build the series a tail that never follows cycles builds.
    pub(super) static NEVER_FOLLOW: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The segments of a builder not yet handed to its grammar, the trailing cycle's progress and
/// the open run: what pushing values changes (a snapshot finishes a copy of it).
#[derive(Clone, Debug)]
pub(super) struct Tail {
    /// Runs may have a non-zero stride.
    numeric: bool,
    /// Closed segments.
    pub(super) done: Vec<Segment>,
    /// When `done` ends in a cycle: how many runs of its next repetition have been matched
    /// (stale while following).
    pub(super) cycle_pos: usize,
    /// The run still growing (stale while following).
    open: Option<Run>,
    /// The trailing cycle's body spelled out as values, while following it.
    body: Vec<u64>,
    /// While following: how many values of the cycle's next repetition were pushed (1 ..=
    /// `body.len()`); 0 when not following.
    at: usize,
}

impl Tail {
    /// An empty tail of counts (`numeric`, strided runs allowed) or of symbols.
    pub(super) fn new(numeric: bool) -> Tail {
        Tail {
            numeric,
            done: Vec::new(),
            cycle_pos: 0,
            open: None,
            body: Vec::new(),
            at: 0,
        }
    }

    /// Appends `value` when that is cheap (true): the tail follows a cycle and `value` is the
    /// one it predicts, or `value` continues a run of two or more values. Else the tail stops
    /// following (the runs are worked out) and nothing is appended (false).
    #[inline]
    pub(super) fn absorb(&mut self, value: u64) -> bool {
        if self.at == 0 {
            return match &mut self.open {
                Some(r) if r.len >= 2 && value == r.value(r.len) => {
                    r.len += 1;
                    true
                }
                _ => false,
            };
        }
        self.follow(value)
    }

    /// Appends `value` if the tail follows a cycle and `value` is the one it predicts (true);
    /// else stops following (the runs are worked out) and returns false.
    #[inline]
    pub(super) fn follow(&mut self, value: u64) -> bool {
        let at = self.at;
        if at == 0 {
            return false;
        }
        let next = if at == self.body.len() { 0 } else { at };
        if self.body[next] != value {
            self.stop_following();
            return false;
        }
        if next == 0 {
            if let Some(Segment::Cycle { repeat, .. }) = self.done.last_mut() {
                *repeat += 1;
            }
        }
        self.at = next + 1;
        true
    }

    /// Starts following the trailing cycle when a repetition of it has just begun (its first
    /// run open with one value) and its runs close where the cycle says they do.
    pub(super) fn start_following(&mut self) {
        #[cfg(test)]
        if NEVER_FOLLOW.get() {
            return;
        }
        if self.at != 0 || self.cycle_pos != 0 {
            return;
        }
        let (Some(Segment::Cycle { runs, .. }), Some(open)) = (self.done.last(), self.open) else {
            return;
        };
        if open.len != 1 || open.start != runs[0].start || !closes_in_place(runs, self.numeric) {
            return;
        }
        let values: u64 = runs.iter().map(|r| r.len).sum();
        if values > FOLLOW_MAX as u64 {
            return;
        }
        self.body.clear();
        for r in runs {
            self.body.extend((0..r.len).map(|i| r.value(i)));
        }
        self.at = 1;
    }

    /// Stops following: the cycle's progress and the open run as pushing the values one by
    /// one would have left them.
    fn stop_following(&mut self) {
        let mut left = self.at as u64;
        self.at = 0;
        let Some(Segment::Cycle { runs, .. }) = self.done.last() else {
            return;
        };
        for (j, r) in runs.iter().enumerate() {
            if left <= r.len {
                self.cycle_pos = j;
                self.open = Some(match left {
                    1 => Run::single(r.start),
                    _ => Run { len: left, ..*r },
                });
                return;
            }
            left -= r.len;
        }
    }

    /// Adds `n` copies of `value` to the open run if it is a repeat of `value`; false when it
    /// is not (nothing added).
    pub(super) fn extend(&mut self, value: u64, n: u64) -> bool {
        if self.at != 0 {
            self.stop_following();
        }
        match &mut self.open {
            Some(r) if r.len >= 2 && r.stride == 0 && r.start == value => {
                r.len += n;
                true
            }
            _ => false,
        }
    }

    /// Appends `value` `n` times, without folding cycles.
    pub(super) fn push_n(&mut self, value: u64, n: u64) {
        let mut left = n;
        while left > 0 && !self.extend(value, left) {
            self.push(value);
            left -= 1;
        }
    }

    /// Appends `value`; true when that closed a run into a new segment of `done`.
    pub(super) fn push(&mut self, value: u64) -> bool {
        if self.absorb(value) {
            return false;
        }
        match &mut self.open {
            None => self.open = Some(Run::single(value)),
            Some(r) if r.len == 1 && (self.numeric || value == r.start) => {
                r.stride = value.wrapping_sub(r.start);
                r.len = 2;
            }
            Some(r) => {
                let closed = *r;
                self.open = Some(Run::single(value));
                return self.close(closed);
            }
        }
        false
    }

    /// Appends a closed run: it continues the trailing cycle if it is the run expected next
    /// (false), else it becomes a segment (true).
    fn close(&mut self, run: Run) -> bool {
        if let Some(Segment::Cycle { runs, repeat }) = self.done.last_mut() {
            if runs[self.cycle_pos] == run {
                self.cycle_pos += 1;
                if self.cycle_pos == runs.len() {
                    *repeat += 1;
                    self.cycle_pos = 0;
                }
                return false;
            }
            let partial = runs[..self.cycle_pos].to_vec();
            self.cycle_pos = 0;
            self.done.extend(partial.into_iter().map(Segment::Run));
        }
        self.done.push(Segment::Run(run));
        true
    }

    /// The segments: the open run closed, a cycle's partial repetition spelled out.
    pub(super) fn finish(mut self) -> Vec<Segment> {
        if self.at != 0 {
            self.stop_following();
        }
        if let Some(run) = self.open.take() {
            self.close(run);
        }
        if let Some(Segment::Cycle { runs, .. }) = self.done.last() {
            let partial: Vec<Segment> = runs[..self.cycle_pos]
                .iter()
                .copied()
                .map(Segment::Run)
                .collect();
            self.done.extend(partial);
        }
        self.done
    }
}

/// True when pushing a cycle's values one by one closes each of its runs exactly where the
/// next begins (the next run's first value never extends the run before it, the last run
/// included, which the first run of the next repetition follows).
fn closes_in_place(runs: &[Run], numeric: bool) -> bool {
    let extends = |r: &Run, v: u64| match r.len {
        1 => numeric || v == r.start,
        _ => v == r.value(r.len),
    };
    runs.iter()
        .zip(runs.iter().cycle().skip(1))
        .all(|(r, next)| !extends(r, next.start))
}
