//! Small sequences whose grammars were derived by hand, step by step.
//! Letters stand for terminals: a = 0, b = 1, c = 2, d = 3.

use conifer_compress::{FrozenGrammar, Grammar, Item, Symbol};

fn t(terminal: u32, exponent: u64) -> Item {
    Item {
        symbol: Symbol::Terminal(terminal),
        exponent,
    }
}

fn r(rule: u32, exponent: u64) -> Item {
    Item {
        symbol: Symbol::Rule(rule),
        exponent,
    }
}

fn frozen(text: &str) -> FrozenGrammar {
    let mut grammar = Grammar::new();
    for letter in text.bytes() {
        grammar.push(u32::from(letter - b'a'));
    }
    assert_eq!(grammar.len(), text.len() as u64);
    // The live counts leave out a trailing run not yet applied, so only the frozen form is
    // compared with the hand-derived grammar.
    grammar.freeze()
}

fn assert_grammar(text: &str, expected: &[&[Item]]) {
    let frozen = frozen(text);
    let expected: Vec<Vec<Item>> = expected.iter().map(|body| body.to_vec()).collect();
    assert_eq!(frozen.rules(), expected, "grammar of {text:?}");
    frozen.check_invariants().unwrap();
    let expanded: String = frozen
        .expand()
        .map(|x| char::from(b'a' + x as u8))
        .collect();
    assert_eq!(expanded, text);
}

#[test]
fn empty() {
    assert_grammar("", &[&[]]);
    assert!(frozen("").is_empty());
}

#[test]
fn no_repetition() {
    assert_grammar("abcd", &[&[t(0, 1), t(1, 1), t(2, 1), t(3, 1)]]);
}

#[test]
fn run_of_one_terminal_is_one_item() {
    // a a a a: each push raises the last item's exponent.
    assert_grammar("aaaa", &[&[t(0, 4)]]);
}

#[test]
fn abcabc() {
    // abca b: (a b) repeats → A → a b, S → A c A; then c: (A c) repeats →
    // B → A c, S → B B = B^2; A is now referenced once → inlined into B.
    assert_grammar("abcabc", &[&[r(1, 2)], &[t(0, 1), t(1, 1), t(2, 1)]]);
}

#[test]
fn ababab() {
    // abab → S → A^2, A → a b; then a b: (a b) is A's whole body → S → A^2 A
    // = A^3.
    assert_grammar("ababab", &[&[r(1, 3)], &[t(0, 1), t(1, 1)]]);
}

#[test]
fn abcab() {
    assert_grammar(
        "abcab",
        &[&[r(1, 1), t(2, 1), r(1, 1)], &[t(0, 1), t(1, 1)]],
    );
}

#[test]
fn repeat_in_the_middle() {
    // (b c) repeats at positions 1 and 4.
    assert_grammar(
        "abcdbc",
        &[&[t(0, 1), r(1, 1), t(3, 1), r(1, 1)], &[t(1, 1), t(2, 1)]],
    );
}

#[test]
fn exponents_are_part_of_the_digram() {
    // a^2 b a^2 b: the digram (a^2, b) repeats → A → a^2 b, S → A^2.
    assert_grammar("aabaab", &[&[r(1, 2)], &[t(0, 2), t(1, 1)]]);
    // a^2 b a b: (a^2, b) and (a, b) differ, nothing repeats.
    assert_grammar("aabab", &[&[t(0, 2), t(1, 1), t(0, 1), t(1, 1)]]);
    // a b^3 a b^3: (a, b^3) only repeats once the second run is complete.
    assert_grammar("abbbabbb", &[&[r(1, 2)], &[t(0, 1), t(1, 3)]]);
}

#[test]
fn four_symbol_loop() {
    // abcdab → A → a b, S → A c d A; c → B → A c (A inlined: B → a b c);
    // d → C → B d, S → C^2 (B inlined: C → a b c d).
    assert_grammar(
        "abcdabcd",
        &[&[r(1, 2)], &[t(0, 1), t(1, 1), t(2, 1), t(3, 1)]],
    );
}

#[test]
fn rule_referenced_once_with_exponent_is_kept() {
    // (ab)^3 c (ab)^3 c: S → A^3 c A^3 c; (A^3, c) repeats → B → A^3 c,
    // S → B^2. A is referenced once, as A^3: P2 keeps it.
    assert_grammar(
        "abababcabababc",
        &[&[r(1, 2)], &[r(2, 3), t(2, 1)], &[t(0, 1), t(1, 1)]],
    );
}

#[test]
fn merge_after_substitution() {
    // abc abc abc: after two iterations S → A^2, A → a b c; the third
    // rebuilds A at the end of S, whose reference then merges: S → A^3.
    assert_grammar("abcabcabc", &[&[r(1, 3)], &[t(0, 1), t(1, 1), t(2, 1)]]);
}

#[test]
fn nested_loop() {
    // (a (bc)^2 d)^3: R → b c, Y → a R^2 d, S → Y^3.
    assert_grammar(
        "abcbcdabcbcdabcbcd",
        &[
            &[r(1, 3)],
            &[t(0, 1), r(2, 2), t(3, 1)],
            &[t(1, 1), t(2, 1)],
        ],
    );
}
