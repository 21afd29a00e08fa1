//! `from_bytes` on hand-made and corrupted input: it must return `Err` or a
//! valid grammar, never panic, hang or allocate without bound.

use conifer_compress::{DecodeError, FrozenGrammar, Grammar};
use proptest::prelude::*;

fn encoded(sequence: &[u32]) -> Vec<u8> {
    let mut grammar = Grammar::new();
    for &terminal in sequence {
        grammar.push(terminal);
    }
    grammar.freeze().to_bytes()
}

/// Whatever `from_bytes` accepts must be usable: consistent length,
/// expandable, and re-encoded to the same bytes.
fn assert_decodes_safely(bytes: &[u8]) {
    if let Ok(grammar) = FrozenGrammar::from_bytes(bytes) {
        assert_eq!(grammar.to_bytes(), bytes);
        if grammar.len() <= 100_000 {
            assert_eq!(grammar.expand().count() as u64, grammar.len());
        }
    }
}

fn valid_encoding() -> impl Strategy<Value = Vec<u8>> {
    (1u32..5)
        .prop_flat_map(|alphabet| prop::collection::vec(0..alphabet, 0..300))
        .prop_map(|sequence| encoded(&sequence))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn bit_flips(bytes in valid_encoding(), flips in prop::collection::vec(any::<prop::sample::Index>(), 1..4), bits in prop::collection::vec(0u8..8, 3)) {
        let mut bytes = bytes;
        for (flip, bit) in flips.iter().zip(bits) {
            let i = flip.index(bytes.len());
            bytes[i] ^= 1 << bit;
        }
        assert_decodes_safely(&bytes);
    }

    #[test]
    fn truncations(bytes in valid_encoding(), cut in any::<prop::sample::Index>()) {
        let cut = cut.index(bytes.len());
        prop_assert!(FrozenGrammar::from_bytes(&bytes[..cut]).is_err());
    }

    #[test]
    fn overwritten_bytes(bytes in valid_encoding(), at in any::<prop::sample::Index>(), junk in prop::collection::vec(any::<u8>(), 1..8)) {
        let mut bytes = bytes;
        let start = at.index(bytes.len());
        for (i, b) in junk.into_iter().enumerate() {
            if let Some(slot) = bytes.get_mut(start + i) {
                *slot = b;
            }
        }
        assert_decodes_safely(&bytes);
    }

    #[test]
    fn random_bytes(mut bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Some(first) = bytes.first_mut() {
            *first = 1;
        }
        assert_decodes_safely(&bytes);
    }
}

#[test]
fn rejects_malformed_input_with_a_reason() {
    let cases: &[(&[u8], DecodeError)] = &[
        (&[], DecodeError::Truncated),
        (&[2, 1, 0], DecodeError::UnsupportedVersion(2)),
        (&[1, 0], DecodeError::NoStartRule),
        (&[1, 5, 0], DecodeError::CountTooLarge(5)),
        (&[1, 0x81, 0x00], DecodeError::BadVarint),
        (&[1, 1, 0, 0], DecodeError::TrailingBytes(1)),
        // S → R1, R1 → R1: a self-reference.
        (&[1, 2, 1, 6, 1, 6], DecodeError::Cycle(1)),
        // S → R1, R1 → R2, R2 → R1: an indirect cycle.
        (&[1, 3, 1, 6, 1, 10, 1, 6], DecodeError::Cycle(1)),
        // S → R2 where R1 exists: not numbered in order of appearance.
        (&[1, 3, 1, 10, 2, 0, 4, 2, 0, 4], DecodeError::NotCanonical),
        // S → a, R1 → a b: R1 unreachable.
        (&[1, 2, 1, 0, 2, 0, 4], DecodeError::NotCanonical),
        (&[1, 1, 1, 2], DecodeError::BadRuleReference(0)),
        (&[1, 2, 1, 10, 1, 0], DecodeError::BadRuleReference(2)),
        (&[1, 2, 1, 6, 0], DecodeError::EmptyRule(1)),
        (
            &[1, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
            DecodeError::IdTooLarge(1 << 33),
        ),
        // S → a^(2^64 - 1) a' ... : lengths that overflow u64.
        (
            &[
                1, 1, 2, 1, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 4,
            ],
            DecodeError::LengthOverflow,
        ),
    ];
    for (bytes, expected) in cases {
        let got = FrozenGrammar::from_bytes(bytes);
        assert_eq!(got.as_ref().err(), Some(expected), "{bytes:?}");
        let message = expected.to_string();
        assert!(!message.is_empty() && !message.contains('\n'));
    }
}

#[test]
fn accepts_a_hand_encoded_grammar() {
    // S → R1^1000, R1 → a b c, with terminals a = 0, b = 1, c = 2.
    let bytes = [1, 2, 1, 7, 0xe6, 0x07, 3, 0, 4, 8];
    let grammar = FrozenGrammar::from_bytes(&bytes).unwrap();
    assert_eq!(grammar.len(), 3000);
    grammar.check_invariants().unwrap();
    let mut expected = Grammar::new();
    for _ in 0..1000 {
        for terminal in 0..3 {
            expected.push(terminal);
        }
    }
    assert_eq!(grammar, expected.freeze());
    assert_eq!(grammar.to_bytes(), bytes);
}
