//! The grammar invariants, checked on the frozen form (used by tests).

use std::collections::HashMap;

use crate::frozen::{FrozenGrammar, Item, Symbol};

impl FrozenGrammar {
    /// Checks the invariants the online grammar maintains:
    ///
    /// * exponents are at least 1, and neighbouring items never have the
    ///   same symbol (they would have been merged into one item);
    /// * **P1**: no digram (two adjacent items, exponents included) occurs
    ///   twice; occurrences cannot overlap since neighbours differ;
    /// * **P2**: every rule but the start rule is referenced by at least two
    ///   items, or by exactly one item with exponent at least 2;
    /// * the start rule is never referenced, and every other rule has at
    ///   least two items.
    ///
    /// Returns a description of the first violation found.
    pub fn check_invariants(&self) -> Result<(), String> {
        let rules = self.rules();
        if rules.is_empty() {
            return Err("no start rule".to_string());
        }
        let mut digrams: HashMap<(Item, Item), usize> = HashMap::new();
        let mut references = vec![(0usize, 0u64); rules.len()];
        for (index, body) in rules.iter().enumerate() {
            if index != 0 && body.len() < 2 {
                return Err(format!("rule {index} has {} item(s)", body.len()));
            }
            for item in body {
                if item.exponent == 0 {
                    return Err(format!("rule {index} has an item with exponent 0"));
                }
                if let Symbol::Rule(rule) = item.symbol {
                    let Some(count) = references.get_mut(rule as usize) else {
                        return Err(format!("rule {index} references missing rule {rule}"));
                    };
                    count.0 += 1;
                    count.1 = count.1.max(item.exponent);
                }
            }
            for pair in body.windows(2) {
                if pair[0].symbol == pair[1].symbol {
                    return Err(format!(
                        "rule {index} has unmerged neighbours {:?}",
                        pair[0].symbol
                    ));
                }
                if let Some(other) = digrams.insert((pair[0], pair[1]), index) {
                    return Err(format!(
                        "P1: digram {:?} {:?} occurs in rules {other} and {index}",
                        pair[0], pair[1]
                    ));
                }
            }
        }
        if references[0].0 != 0 {
            return Err("the start rule is referenced".to_string());
        }
        for (rule, &(count, max_exponent)) in references.iter().enumerate().skip(1) {
            if count == 0 || (count == 1 && max_exponent < 2) {
                return Err(format!(
                    "P2: rule {rule} is referenced by {count} item(s), max exponent {max_exponent}"
                ));
            }
        }
        Ok(())
    }
}
