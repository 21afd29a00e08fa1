//! The online grammar: storage of rules as doubly linked lists of items in
//! one node arena, the public API, and freezing into the canonical form.
//! The Sequitur steps that keep the invariants live in `sequitur.rs`, the
//! loop shortcut in `repeat.rs` (its state in `follow.rs`).

mod follow;
mod repeat;
mod sequitur;

use follow::Follow;

use crate::frozen::{FrozenGrammar, Item, Symbol};
use crate::table::{Digram, DigramTable};

/// Encoded symbol tag of a rule reference: `RULE_TAG | rule`.
const RULE_TAG: u64 = 1 << 32;
/// Encoded symbol tag of a rule's guard (sentinel) node: `GUARD_TAG | rule`.
const GUARD_TAG: u64 = 2 << 32;
/// Encoded symbol of a node on the free list.
const FREE: u64 = u64::MAX;

/// True for the encoded symbol of a right-hand-side item (terminal or rule
/// reference), false for guards and free nodes.
fn is_item(sym: u64) -> bool {
    sym >> 32 <= 1
}

/// The rule an encoded symbol references, if it is a rule reference.
fn rule_of(sym: u64) -> Option<u32> {
    (sym >> 32 == 1).then_some(sym as u32)
}

/// One right-hand-side item, or the guard closing a rule's circular list.
/// Terminals are encoded as their id, rule references and guards as a tag
/// ORed with the rule id, so one `u64` compares symbols of both kinds.
#[derive(Clone, Copy, Debug)]
struct Node {
    sym: u64,
    exp: u64,
    prev: u32,
    next: u32,
}

/// A live rule: its guard node, how many items reference it (items, not
/// exponents: `A^5` counts once), and the length and first terminal of its
/// expansion, which never change once the rule is made.
#[derive(Clone, Copy, Debug)]
struct RuleSlot {
    guard: u32,
    refs: u32,
    length: u64,
    first_terminal: u32,
}

impl RuleSlot {
    const UNUSED: RuleSlot = RuleSlot {
        guard: 0,
        refs: 0,
        length: 0,
        first_terminal: 0,
    };
}

/// A Sequitur grammar with repetition exponents, built online one terminal
/// at a time.
///
/// Each right-hand side is a list of items `symbol^exponent` in which two
/// neighbours never have the same symbol (`A B B B` is kept as `A B^3`).
/// After every [`push`](Self::push) the grammar satisfies:
///
/// * **P1, digram uniqueness**: no pair of adjacent items (symbols *and*
///   exponents) occurs twice in the grammar. Occurrences cannot overlap,
///   since neighbours have distinct symbols.
/// * **P2, rule utility**: every rule except the start rule is referenced by
///   at least two items, or by exactly one item whose exponent is at least 2.
///   A rule referenced once with exponent 1 is inlined; one referenced once
///   as `A^1000` is kept, since inlining it would mean expanding the loop.
/// * every rule except the start rule has at least two items.
///
/// Rule 0 is the start rule; it is never referenced.
///
/// One shortcut makes loops cheap: when the start rule ends with `A^k` and
/// the terminals that follow spell out `A`'s expansion again, they are only
/// compared with it, and each complete copy adds one to `A`'s exponent when
/// the run of copies ends (see `repeat.rs`). Up to one such copy may be held back at a time; it is part
/// of [`len`](Self::len) and of [`freeze`](Self::freeze)'s result but not of
/// [`rule_count`](Self::rule_count) and [`item_count`](Self::item_count).
#[derive(Clone, Debug)]
pub struct Grammar {
    nodes: Vec<Node>,
    free_nodes: Vec<u32>,
    rules: Vec<RuleSlot>,
    free_rules: Vec<u32>,
    table: DigramTable,
    /// Nodes whose digram (with the next node) must be checked against P1.
    pending: Vec<u32>,
    /// Nodes that may be the only reference to a rule (P2 candidates).
    underused: Vec<u32>,
    /// The loop shortcut's held copy and spelled expansion (see `repeat.rs`).
    follow: Follow,
    /// Further copies of the start rule's last item not yet applied: a run of one repeated
    /// call, or of complete loop-body copies of a rule (see `repeat.rs`), costs an increment
    /// per copy, and one exponent update and round of digram maintenance when the run ends.
    tail_run: u64,
    len: u64,
}

impl Default for Grammar {
    fn default() -> Self {
        Self::new()
    }
}

impl Grammar {
    /// An empty grammar: only the start rule, with an empty right-hand side.
    pub fn new() -> Self {
        let mut grammar = Grammar {
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            rules: Vec::new(),
            free_rules: Vec::new(),
            table: DigramTable::new(),
            pending: Vec::new(),
            underused: Vec::new(),
            follow: Follow::default(),
            tail_run: 0,
            len: 0,
        };
        grammar.new_rule();
        grammar
    }

    /// Appends one terminal to the sequence and restores the invariants.
    ///
    /// Amortised O(1), and a few nanoseconds per terminal while a loop
    /// repeats; storage is recycled, so repetitive input does not allocate
    /// in steady state.
    pub fn push(&mut self, terminal: u32) {
        self.len += 1;
        self.push_terminal(terminal);
    }

    /// The Sequitur step for one terminal: extends the start rule, merging
    /// with its last item if that is the same terminal.
    fn append(&mut self, terminal: u32) {
        let sym = u64::from(terminal);
        let last = self.last();
        if self.nodes[last as usize].sym == sym {
            self.raise_exponent(last);
        } else {
            let node = self.new_node(sym, 1);
            let guard = self.rules[0].guard;
            self.link(last, node);
            self.link(node, guard);
            self.pending.push(last);
            self.settle();
        }
    }

    /// Adds one to the exponent of `last`, the start rule's last item.
    fn raise_exponent(&mut self, last: u32) {
        self.raise_exponent_by(last, 1);
    }

    fn raise_exponent_by(&mut self, last: u32, by: u64) {
        let before = self.nodes[last as usize].prev;
        self.unindex(before);
        self.nodes[last as usize].exp += by;
        self.pending.push(before);
        self.settle();
    }

    /// Counts `terminal` into the tail run when it repeats the start rule's last item (and no
    /// loop copy is being held); true when it did.
    pub(super) fn extend_tail_run(&mut self, terminal: u32) -> bool {
        if !self.follow.holding() && self.nodes[self.last() as usize].sym == u64::from(terminal) {
            self.tail_run += 1;
            return true;
        }
        false
    }

    /// Applies the copies of the last terminal counted in `tail_run`.
    pub(super) fn flush_tail_run(&mut self) {
        if self.tail_run > 0 {
            let run = std::mem::take(&mut self.tail_run);
            let last = self.last();
            self.raise_exponent_by(last, run);
        }
    }

    /// Number of terminals pushed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when nothing has been pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of rules, the start rule included (not counting terminals
    /// held back by the loop shortcut: at most one copy of a loop body, of
    /// up to 2^16 terminals, nor a trailing run of one terminal not yet
    /// applied).
    pub fn rule_count(&self) -> usize {
        self.rules.len() - self.free_rules.len()
    }

    /// Total number of right-hand-side items over all rules: with
    /// [`rule_count`](Self::rule_count), the size of the grammar.
    pub fn item_count(&self) -> usize {
        self.nodes.len() - self.free_nodes.len() - self.rule_count()
    }

    /// The canonical immutable form: rules renumbered densely in order of
    /// first appearance in a depth-first, left-to-right walk from the start
    /// rule (rule 0), so equal sequences give equal frozen grammars.
    pub fn freeze(&self) -> FrozenGrammar {
        if !self.follow.holding() && self.tail_run == 0 {
            self.freeze_settled()
        } else {
            let mut grammar = self.clone();
            grammar.flush_tail_run();
            grammar.replay_held();
            grammar.freeze_settled()
        }
    }

    /// [`freeze`](Self::freeze), giving the grammar up: the digram index and the work lists
    /// are freed before the frozen copy is made (freezing needs only the rules), so the two
    /// forms never hold memory at once beyond the nodes.
    pub fn into_frozen(mut self) -> FrozenGrammar {
        self.flush_tail_run();
        self.replay_held();
        self.table = DigramTable::new();
        self.pending = Vec::new();
        self.underused = Vec::new();
        self.free_nodes = Vec::new();
        self.freeze_settled()
    }

    /// [`freeze`](Self::freeze) when no terminal is held back.
    fn freeze_settled(&self) -> FrozenGrammar {
        let mut ids = vec![u32::MAX; self.rules.len()];
        ids[0] = 0;
        let mut bodies: Vec<Vec<Item>> = vec![Vec::new()];
        let mut stack = vec![(0usize, self.first(0))];
        while let Some(top) = stack.last_mut() {
            let (id, cursor) = *top;
            let node = self.nodes[cursor as usize];
            if !is_item(node.sym) {
                stack.pop();
                continue;
            }
            top.1 = node.next;
            let symbol = match rule_of(node.sym) {
                None => Symbol::Terminal(node.sym as u32),
                Some(rule) => {
                    let slot = &mut ids[rule as usize];
                    if *slot == u32::MAX {
                        *slot = u32::try_from(bodies.len()).expect("rule count fits u32");
                        stack.push((bodies.len(), self.first(rule)));
                        bodies.push(Vec::new());
                    }
                    Symbol::Rule(*slot)
                }
            };
            bodies[id].push(Item {
                symbol,
                exponent: node.exp,
            });
        }
        FrozenGrammar::from_canonical(bodies, self.len)
    }

    fn first(&self, rule: u32) -> u32 {
        self.nodes[self.rules[rule as usize].guard as usize].next
    }

    /// The start rule's last item, or its guard if it is empty.
    fn last(&self) -> u32 {
        self.nodes[self.rules[0].guard as usize].prev
    }

    fn new_node(&mut self, sym: u64, exp: u64) -> u32 {
        if let Some(rule) = rule_of(sym) {
            self.rules[rule as usize].refs += 1;
        }
        let node = Node {
            sym,
            exp,
            prev: 0,
            next: 0,
        };
        match self.free_nodes.pop() {
            Some(index) => {
                self.nodes[index as usize] = node;
                index
            }
            None => {
                let index = u32::try_from(self.nodes.len())
                    .ok()
                    .filter(|&index| index != u32::MAX)
                    .expect("grammar exceeds 2^32 - 1 nodes");
                self.nodes.push(node);
                index
            }
        }
    }

    /// Frees a node, dropping the reference it held.
    fn release(&mut self, node: u32) {
        if let Some(rule) = rule_of(self.nodes[node as usize].sym) {
            self.rules[rule as usize].refs -= 1;
        }
        self.nodes[node as usize].sym = FREE;
        self.free_nodes.push(node);
    }

    /// A new rule with an empty right-hand side.
    fn new_rule(&mut self) -> u32 {
        let rule = match self.free_rules.pop() {
            Some(rule) => rule,
            None => {
                self.rules.push(RuleSlot::UNUSED);
                u32::try_from(self.rules.len() - 1).expect("rule count fits u32")
            }
        };
        let guard = self.new_node(GUARD_TAG | u64::from(rule), 0);
        self.link(guard, guard);
        self.rules[rule as usize] = RuleSlot {
            guard,
            ..RuleSlot::UNUSED
        };
        rule
    }

    /// Frees a rule whose right-hand side has been moved elsewhere.
    fn free_rule(&mut self, rule: u32) {
        self.release(self.rules[rule as usize].guard);
        self.free_rules.push(rule);
    }

    fn link(&mut self, left: u32, right: u32) {
        self.nodes[left as usize].next = right;
        self.nodes[right as usize].prev = left;
    }

    /// The digram starting at `node`, if `node` and its successor are items.
    fn digram(&self, node: u32) -> Option<Digram> {
        digram_at(&self.nodes, node)
    }

    /// Removes the digram starting at `node` from the index, if indexed
    /// there. Called before anything changes that digram.
    fn unindex(&mut self, node: u32) {
        if let Some(key) = self.digram(node) {
            self.table.remove(key.hash(), node);
        }
    }
}

/// The digram starting at `node`, if `node` and its successor are items.
fn digram_at(nodes: &[Node], node: u32) -> Option<Digram> {
    let a = nodes[node as usize];
    if !is_item(a.sym) {
        return None;
    }
    let b = nodes[a.next as usize];
    is_item(b.sym).then_some(Digram {
        first: a.sym,
        first_exp: a.exp,
        second: b.sym,
        second_exp: b.exp,
    })
}

#[cfg(test)]
mod tests;
