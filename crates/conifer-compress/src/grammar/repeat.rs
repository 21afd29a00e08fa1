//! The repeat fast path: one more iteration of a loop costs a comparison
//! per terminal instead of a round of digram replacements.
//!
//! When the start rule ends with `A^k` and the next terminal is the first of
//! `A`'s expansion, terminals are held back (not yet given to Sequitur) as
//! long as they follow `A`'s expansion, walked by a cursor over the live
//! grammar, which does not change meanwhile. The walk is spelled out as it
//! goes, so further copies compare each terminal with one array entry. A
//! complete copy of the expansion counts one more copy of `A` (applied as one
//! exponent update when the copies end, like a run of one terminal); a
//! mismatch applies the counted copies and replays the held terminals through
//! the ordinary path, exactly as if they had not been held. Every rule's
//! expansion is fixed when the rule is made (substitution, merging and
//! inlining all preserve it), so its length and first terminal are recorded
//! then and the check to start costs O(1).

use super::{is_item, rule_of, Grammar};

/// Longest expansion the fast path follows, bounding the held terminals.
const MAX_HELD: u64 = 1 << 16;

impl Grammar {
    /// Appends a terminal, through the fast path when it applies.
    pub(super) fn push_terminal(&mut self, terminal: u32) {
        if self.extend_tail_run(terminal) {
            return;
        }
        if self.follow.holding() || self.follow.again {
            if self.next_of_copy() == Some(terminal) {
                self.follow.held += 1;
                if self.follow.held == self.follow.length {
                    // One more copy of the rule: counted, applied when the copies end.
                    self.follow.held = 0;
                    self.follow.again = true;
                    self.tail_run += 1;
                }
                return;
            }
            if !self.follow.holding() {
                // Not the first terminal of another copy: the rule cannot be followed.
                self.follow.again = false;
                self.flush_tail_run();
                self.append(terminal);
                return;
            }
            self.flush_tail_run();
            self.replay_held();
            if self.start_holding(terminal) {
                return;
            }
        } else {
            if self.start_holding(terminal) {
                return;
            }
            self.flush_tail_run();
        }
        self.append(terminal);
    }

    /// The terminal the held copy expects next: spelled already, or walked now (and
    /// spelled).
    fn next_of_copy(&mut self) -> Option<u32> {
        if let Some(&next) = self.follow.spelled.get(self.follow.held) {
            return Some(next);
        }
        let next = self.cursor_next()?;
        self.follow.spelled.push(next);
        Some(next)
    }

    /// Gives the held terminals to Sequitur, as if they had never been held.
    pub(super) fn replay_held(&mut self) {
        let spelled = std::mem::take(&mut self.follow.spelled);
        for &terminal in &spelled[..self.follow.held] {
            self.append(terminal);
        }
        self.follow.spelled = spelled;
        self.follow.spelled.clear();
        self.follow.held = 0;
        self.follow.again = false;
    }

    /// Starts holding `terminal` if the start rule ends with a rule whose
    /// expansion begins with it.
    fn start_holding(&mut self, terminal: u32) -> bool {
        let Some(rule) = rule_of(self.nodes[self.last() as usize].sym) else {
            return false;
        };
        let slot = self.rules[rule as usize];
        if slot.first_terminal != terminal || slot.length > MAX_HELD {
            return false;
        }
        let first_node = self.first(rule);
        let cursor = &mut self.follow.cursor;
        cursor.frames.clear();
        cursor.frames.push((first_node, 1));
        cursor.run = 0;
        self.follow.spelled.clear();
        self.follow.length = slot.length as usize;
        let first = self.next_of_copy();
        debug_assert_eq!(first, Some(terminal), "recorded first terminal");
        self.follow.held = 1;
        self.follow.again = false;
        true
    }

    /// The next terminal of the expansion the cursor walks.
    fn cursor_next(&mut self) -> Option<u32> {
        let cursor = &mut self.follow.cursor;
        loop {
            if cursor.run > 0 {
                cursor.run -= 1;
                return Some(cursor.terminal);
            }
            let (next, reps) = cursor.frames.last_mut()?;
            let node = self.nodes[*next as usize];
            if !is_item(node.sym) {
                *reps -= 1;
                if *reps == 0 {
                    cursor.frames.pop();
                } else {
                    *next = node.next;
                }
                continue;
            }
            *next = node.next;
            match rule_of(node.sym) {
                None => {
                    cursor.terminal = node.sym as u32;
                    cursor.run = node.exp;
                }
                Some(rule) => {
                    let guard = self.rules[rule as usize].guard;
                    cursor
                        .frames
                        .push((self.nodes[guard as usize].next, node.exp));
                }
            }
        }
    }
}
