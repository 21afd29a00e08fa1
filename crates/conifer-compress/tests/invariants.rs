//! `check_invariants` rejects grammars that decode fine but break P1, P2
//! or the item rules. Encodings are written by hand: version 1, rule count,
//! then per rule its item count and items, an item being the tag
//! `id << 2 | is_rule << 1 | (exponent > 1)` and, if flagged, exponent - 2.

use conifer_compress::FrozenGrammar;

fn check(bytes: &[u8]) -> Result<(), String> {
    FrozenGrammar::from_bytes(bytes)
        .expect("structurally valid")
        .check_invariants()
}

#[test]
fn accepts_sequitur_grammars() {
    // S → a b c
    assert_eq!(check(&[1, 1, 3, 0, 4, 8]), Ok(()));
    // S → R1^2, R1 → a b
    assert_eq!(check(&[1, 2, 1, 7, 0, 2, 0, 4]), Ok(()));
    // S → R1^3 c, R1 → a b: referenced once, but with exponent 3.
    assert_eq!(check(&[1, 2, 2, 7, 1, 8, 2, 0, 4]), Ok(()));
}

#[test]
fn rejects_a_repeated_digram() {
    // S → a b c a b
    let error = check(&[1, 1, 5, 0, 4, 8, 0, 4]).unwrap_err();
    assert!(error.starts_with("P1"), "{error}");
    // S → R1 c R2, R1 → a b, R2 → c a b: (a b) in two rules.
    let error = check(&[1, 3, 3, 6, 8, 10, 2, 0, 4, 3, 8, 0, 4]).unwrap_err();
    assert!(error.starts_with("P1"), "{error}");
}

#[test]
fn exponents_distinguish_digrams() {
    // S → a b^2 c a b: (a b^2) and (a b) differ.
    assert_eq!(check(&[1, 1, 5, 0, 5, 0, 8, 0, 4]), Ok(()));
}

#[test]
fn rejects_a_rule_used_once_with_exponent_one() {
    // S → R1 c, R1 → a b
    let error = check(&[1, 2, 2, 6, 8, 2, 0, 4]).unwrap_err();
    assert!(error.starts_with("P2"), "{error}");
}

#[test]
fn rejects_unmerged_neighbours_and_short_rules() {
    // S → a a
    assert!(check(&[1, 1, 2, 0, 0]).unwrap_err().contains("unmerged"));
    // S → R1^2, R1 → a^5
    assert!(check(&[1, 2, 1, 7, 0, 1, 1, 3])
        .unwrap_err()
        .contains("1 item"));
}
