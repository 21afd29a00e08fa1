//! The Sequitur steps, adapted to repetition exponents.
//!
//! Every change to the grammar first removes from the index the digrams it
//! is about to alter, then records the nodes starting new or altered digrams
//! in `pending`. [`Grammar::settle`] then checks those digrams (P1) and
//! inlines rules left with a single exponent-1 reference (P2) until nothing
//! is left to do. Working from two explicit stacks instead of recursing keeps
//! the native stack flat however long a cascade gets; checking a digram is
//! idempotent, so a node that was freed or reused meanwhile is harmless.
//!
//! With exponents, neighbours never share a symbol: wherever two items with
//! the same symbol become adjacent they are merged and their exponents
//! summed. Hence two occurrences of one digram can never overlap.

use super::{digram_at, is_item, rule_of, Grammar, RULE_TAG};

impl Grammar {
    /// Runs pending digram checks and rule-utility repairs to a fixpoint.
    pub(super) fn settle(&mut self) {
        loop {
            if let Some(node) = self.pending.pop() {
                self.check(node);
            } else if let Some(node) = self.underused.pop() {
                self.repair_utility(node);
            } else {
                return;
            }
        }
    }

    /// P1: indexes the digram starting at `node`, or, if another occurrence
    /// is already indexed, replaces both by a rule.
    fn check(&mut self, node: u32) {
        let Some(key) = self.digram(node) else {
            return;
        };
        debug_assert_ne!(key.first, key.second, "unmerged neighbours");
        let nodes = &self.nodes;
        let found = self.table.get_or_insert(key.hash(), node, |other| {
            digram_at(nodes, other) == Some(key)
        });
        if let Some(other) = found {
            if other != node {
                self.replace_pair(node, other);
            }
        }
    }

    /// The rule (not the start rule) whose whole right-hand side is the
    /// digram starting at `node`.
    fn whole_rule(&self, node: u32) -> Option<u32> {
        let prev = self.nodes[node as usize].prev;
        let second = self.nodes[node as usize].next;
        let after = self.nodes[second as usize].next;
        let guard = self.nodes[prev as usize].sym;
        let rule = guard as u32;
        let is_whole = !is_item(guard) && !is_item(self.nodes[after as usize].sym);
        (is_whole && rule != 0).then_some(rule)
    }

    /// Two occurrences of one digram, `new` not indexed and `old` indexed:
    /// reuse the rule whose whole body one of them is, else make a new rule.
    fn replace_pair(&mut self, new: u32, old: u32) {
        let rule = if let Some(rule) = self.whole_rule(old) {
            self.substitute(new, rule);
            rule
        } else if let Some(rule) = self.whole_rule(new) {
            self.substitute(old, rule);
            // `old` was the indexed occurrence; index the rule's body now.
            self.pending.push(new);
            rule
        } else {
            let rule = self.new_rule();
            let guard = self.rules[rule as usize].guard;
            let a = self.nodes[old as usize];
            let b = self.nodes[a.next as usize];
            let first = self.new_node(a.sym, a.exp);
            let second = self.new_node(b.sym, b.exp);
            let (length, first_terminal) = self.expansion_of(a.sym);
            let second_length = self.expansion_of(b.sym).0;
            let slot = &mut self.rules[rule as usize];
            slot.first_terminal = first_terminal;
            slot.length = length
                .saturating_mul(a.exp)
                .saturating_add(second_length.saturating_mul(b.exp));
            self.link(guard, first);
            self.link(first, second);
            self.link(second, guard);
            self.substitute(old, rule);
            self.substitute(new, rule);
            self.pending.push(first);
            rule
        };
        // The digram's symbols lost a reference each; if one is now
        // referenced once, that reference is in `rule`'s body.
        let first = self.first(rule);
        self.underused.push(first);
        self.underused.push(self.nodes[first as usize].next);
    }

    /// Length and first terminal of the expansion of one copy of `sym`.
    fn expansion_of(&self, sym: u64) -> (u64, u32) {
        match rule_of(sym) {
            Some(rule) => {
                let slot = &self.rules[rule as usize];
                (slot.length, slot.first_terminal)
            }
            None => (1, sym as u32),
        }
    }

    /// Replaces the digram starting at `node` by one reference to `rule`,
    /// merged with a neighbouring reference to `rule` if there is one.
    fn substitute(&mut self, node: u32, rule: u32) {
        let second = self.nodes[node as usize].next;
        let prev = self.nodes[node as usize].prev;
        let after = self.nodes[second as usize].next;
        self.unindex(prev);
        self.unindex(node);
        self.unindex(second);
        self.release(node);
        self.release(second);
        let reference = self.new_node(RULE_TAG | u64::from(rule), 1);
        self.link(prev, reference);
        self.link(reference, after);
        self.pending.push(prev);
        self.pending.push(reference);
        let reference = self.merge_with_left(reference);
        self.merge_with_right(reference);
    }

    /// P2: inlines the rule referenced by `node` if `node` is its only
    /// reference and has exponent 1.
    fn repair_utility(&mut self, node: u32) {
        let reference = self.nodes[node as usize];
        let Some(rule) = rule_of(reference.sym) else {
            return;
        };
        if reference.exp != 1 || self.rules[rule as usize].refs != 1 {
            return;
        }
        let guard = self.rules[rule as usize].guard;
        let first = self.nodes[guard as usize].next;
        let last = self.nodes[guard as usize].prev;
        self.unindex(reference.prev);
        self.unindex(node);
        self.link(reference.prev, first);
        self.link(last, reference.next);
        self.release(node);
        self.free_rule(rule);
        self.pending.push(reference.prev);
        self.pending.push(last);
        let survivor = self.merge_with_left(first);
        self.merge_with_right(if first == last { survivor } else { last });
    }

    /// If `node`'s left neighbour has the same symbol, folds `node` into it
    /// and returns the survivor; otherwise returns `node`.
    fn merge_with_left(&mut self, node: u32) -> u32 {
        let left = self.nodes[node as usize].prev;
        if self.nodes[left as usize].sym != self.nodes[node as usize].sym {
            return node;
        }
        self.merge_pair(left, node);
        left
    }

    /// If `node`'s right neighbour has the same symbol, folds it into `node`.
    fn merge_with_right(&mut self, node: u32) {
        let right = self.nodes[node as usize].next;
        if self.nodes[right as usize].sym == self.nodes[node as usize].sym {
            self.merge_pair(node, right);
        }
    }

    /// Folds `right` into its left neighbour `left` (same symbol), summing
    /// exponents. The pair itself is never indexed (neighbours with equal
    /// symbols only exist until merged), but the digrams on either side are.
    fn merge_pair(&mut self, left: u32, right: u32) {
        let before = self.nodes[left as usize].prev;
        let after = self.nodes[right as usize].next;
        self.unindex(before);
        self.unindex(right);
        self.nodes[left as usize].exp += self.nodes[right as usize].exp;
        self.link(left, after);
        self.release(right);
        self.pending.push(before);
        self.pending.push(left);
    }
}
