//! The immutable, canonical form of a grammar and its streaming expansion.

/// A right-hand-side symbol of a frozen grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Symbol {
    /// A terminal id, as passed to [`Grammar::push`](crate::Grammar::push).
    Terminal(u32),
    /// A reference to a rule, by its dense index (never 0, the start rule).
    Rule(u32),
}

/// One right-hand-side item: `symbol` repeated `exponent` times (at least 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Item {
    /// What is repeated.
    pub symbol: Symbol,
    /// How many times in a row; at least 1.
    pub exponent: u64,
}

/// An immutable grammar in canonical form: rules numbered densely, rule 0
/// the start rule, the others in order of first appearance in a depth-first,
/// left-to-right walk from rule 0.
///
/// Canonical numbering makes equal sequences give equal values and
/// byte-identical [`to_bytes`](Self::to_bytes), so ranks that recorded the
/// same sequence can be deduplicated by equality or hash.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FrozenGrammar {
    /// First, so comparing grammars of different lengths (different ranks' calls, as the
    /// merge does for every grammar it interns) stops before the rules.
    len: u64,
    rules: Vec<Vec<Item>>,
}

impl FrozenGrammar {
    /// Wraps rules already known to be canonical, acyclic and to expand to
    /// `len` terminals.
    pub(crate) fn from_canonical(rules: Vec<Vec<Item>>, len: u64) -> Self {
        FrozenGrammar { rules, len }
    }

    /// How often each terminal occurs in the expansion, computed from the rules (saturating):
    /// each rule's occurrences are pushed down to the rules and terminals it refers to.
    pub fn terminal_counts(&self) -> crate::fast_hash::FastMap<u32, u64> {
        let mut counts = crate::fast_hash::FastMap::default();
        if self.rules.is_empty() {
            return counts;
        }
        let mut rule_counts = vec![0u64; self.rules.len()];
        rule_counts[0] = 1;
        for r in parents_first(&self.rules) {
            let times = rule_counts[r];
            for item in &self.rules[r] {
                let n = times.saturating_mul(item.exponent);
                match item.symbol {
                    Symbol::Terminal(t) => {
                        let c: &mut u64 = counts.entry(t).or_default();
                        *c = c.saturating_add(n);
                    }
                    Symbol::Rule(q) => {
                        if let Some(c) = rule_counts.get_mut(q as usize) {
                            *c = c.saturating_add(n);
                        }
                    }
                }
            }
        }
        counts
    }

    /// The same grammar with every terminal `t` replaced by `f(t)`. With an injective `f`
    /// (renumbering a rank's local signature ids to global ones) the result is still canonical
    /// and keeps both invariants, since neither depends on terminal values.
    pub fn map_terminals(&self, f: impl Fn(u32) -> u32) -> FrozenGrammar {
        let rules = self
            .rules
            .iter()
            .map(|rule| {
                rule.iter()
                    .map(|item| Item {
                        symbol: match item.symbol {
                            Symbol::Terminal(t) => Symbol::Terminal(f(t)),
                            rule_ref => rule_ref,
                        },
                        exponent: item.exponent,
                    })
                    .collect()
            })
            .collect();
        FrozenGrammar {
            rules,
            len: self.len,
        }
    }

    /// The right-hand sides, indexed by rule number; rule 0 is the start rule.
    pub fn rules(&self) -> &[Vec<Item>] {
        &self.rules
    }

    /// Number of rules, the start rule included.
    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    /// Total number of right-hand-side items over all rules.
    pub fn item_count(&self) -> usize {
        self.rules.iter().map(Vec::len).sum()
    }

    /// Length of the expanded sequence, known without expanding.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the grammar expands to the empty sequence.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Streams the terminals in order. Memory is proportional to the depth
    /// of the grammar, not to the length of the sequence.
    pub fn expand(&self) -> Expand<'_> {
        Expand {
            rules: &self.rules,
            frames: vec![Frame {
                rule: 0,
                pos: 0,
                reps: 1,
            }],
            terminal: 0,
            run: 0,
            left: self.len,
        }
    }
    /// Calls `f(terminal, n)` for each run of `n` copies of a terminal that `keep` accepts, in
    /// the order of the expansion, and skips the others: a rule whose expansion holds no
    /// accepted terminal is passed over whole, and a repeated terminal is one call. The same
    /// terminals as filtering [`expand`](Self::expand), at the cost of the rules walked
    /// rather than of the sequence's length.
    pub fn for_each_run(&self, keep: impl Fn(u32) -> bool, mut f: impl FnMut(u32, u64)) {
        if self.rules.is_empty() {
            return;
        }
        // Per rule, its accepted runs in order when there are few ([`SHORT_RUNS`]; none: the
        // rule is passed over), so a rule referenced many times is walked once; `None` for a
        // rule with more, walked where referenced.
        let mut runs: Vec<(u32, u64)> = Vec::new();
        let mut spans: Vec<Option<(usize, usize)>> = vec![Some((0, 0)); self.rules.len()];
        for r in parents_first(&self.rules).into_iter().rev() {
            let start = runs.len();
            let mut short = true;
            for item in &self.rules[r] {
                match item.symbol {
                    Symbol::Terminal(t) if keep(t) => runs.push((t, item.exponent)),
                    Symbol::Terminal(_) => {}
                    Symbol::Rule(q) => match spans[q as usize] {
                        None => short = false,
                        Some((a, b)) if a < b => {
                            for _ in 0..item.exponent {
                                if runs.len() - start + (b - a) > SHORT_RUNS {
                                    short = false;
                                    break;
                                }
                                runs.extend_from_within(a..b);
                            }
                        }
                        Some(_) => {}
                    },
                }
                if !short {
                    break;
                }
            }
            if short {
                spans[r] = Some((start, runs.len()));
            } else {
                runs.truncate(start);
                spans[r] = None;
            }
        }
        let emit = |(a, b): (usize, usize), times: u64, f: &mut dyn FnMut(u32, u64)| {
            for _ in 0..times {
                runs[a..b].iter().for_each(|&(t, n)| f(t, n));
            }
        };
        if let Some(span) = spans[0] {
            emit(span, 1, &mut f);
            return;
        }
        let mut frames = vec![Frame {
            rule: 0,
            pos: 0,
            reps: 1,
        }];
        while let Some(frame) = frames.last_mut() {
            let Some(item) = self.rules[frame.rule as usize].get(frame.pos) else {
                frame.reps -= 1;
                if frame.reps == 0 {
                    frames.pop();
                } else {
                    frame.pos = 0;
                }
                continue;
            };
            frame.pos += 1;
            match item.symbol {
                Symbol::Terminal(t) if keep(t) => f(t, item.exponent),
                Symbol::Terminal(_) => {}
                Symbol::Rule(q) => match spans[q as usize] {
                    Some(span) => emit(span, item.exponent, &mut f),
                    None => frames.push(Frame {
                        rule: q,
                        pos: 0,
                        reps: item.exponent,
                    }),
                },
            }
        }
    }
}

/// Most runs [`FrozenGrammar::for_each_run`] keeps per rule: rules with more are walked.
const SHORT_RUNS: usize = 32;

/// The rules reachable from rule 0, every rule before the rules it refers to (reverse
/// post-order of a depth-first walk; the grammar is acyclic).
fn parents_first(rules: &[Vec<Item>]) -> Vec<usize> {
    let mut seen = vec![false; rules.len()];
    let mut post = Vec::with_capacity(rules.len());
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some((rule, next)) = stack.pop() {
        let child = rules[rule][next..].iter().position(|i| {
            matches!(i.symbol, Symbol::Rule(q) if !seen.get(q as usize).copied().unwrap_or(true))
        });
        match child {
            Some(offset) => {
                let at = next + offset;
                let Symbol::Rule(q) = rules[rule][at].symbol else {
                    unreachable!("found a rule reference")
                };
                seen[q as usize] = true;
                stack.push((rule, at + 1));
                stack.push((q as usize, 0));
            }
            None => post.push(rule),
        }
    }
    post.reverse();
    post
}

/// Position inside one rule: the next item, and how many more times the
/// whole right-hand side is to be walked (the referencing item's exponent).
#[derive(Clone, Copy, Debug)]
struct Frame {
    rule: u32,
    pos: usize,
    reps: u64,
}

/// Iterator over the terminals of a [`FrozenGrammar`], see
/// [`FrozenGrammar::expand`].
#[derive(Clone, Debug)]
pub struct Expand<'a> {
    rules: &'a [Vec<Item>],
    frames: Vec<Frame>,
    terminal: u32,
    /// How many more copies of `terminal` to yield before moving on.
    run: u64,
    /// How many terminals remain in total.
    left: u64,
}

impl Iterator for Expand<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        loop {
            if self.run > 0 {
                self.run -= 1;
                self.left -= 1;
                return Some(self.terminal);
            }
            let frame = self.frames.last_mut()?;
            let body = &self.rules[frame.rule as usize];
            let Some(item) = body.get(frame.pos) else {
                frame.reps -= 1;
                if frame.reps == 0 {
                    self.frames.pop();
                } else {
                    frame.pos = 0;
                }
                continue;
            };
            frame.pos += 1;
            match item.symbol {
                Symbol::Terminal(terminal) => {
                    self.terminal = terminal;
                    self.run = item.exponent;
                }
                Symbol::Rule(rule) => self.frames.push(Frame {
                    rule,
                    pos: 0,
                    reps: item.exponent,
                }),
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match usize::try_from(self.left) {
            Ok(left) => (left, Some(left)),
            Err(_) => (usize::MAX, None),
        }
    }
}
