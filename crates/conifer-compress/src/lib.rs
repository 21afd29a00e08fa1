//! Compression for Conifer traces: an online Sequitur grammar with
//! repetition exponents, as in Pilgrim (Wang et al., TPDS 2022, §2.2).
//!
//! Each rank pushes its sequence of terminals (one id per distinct MPI call
//! signature) into a [`Grammar`], which keeps it compressed as it grows: a
//! loop of `n` identical iterations costs O(1) space (`S → A^n`). At the end
//! the grammar is frozen into a canonical [`FrozenGrammar`] that can be
//! expanded lazily, encoded compactly and compared across ranks.
//!
//! ```
//! use conifer_compress::{FrozenGrammar, Grammar};
//!
//! let mut grammar = Grammar::new();
//! for _ in 0..1000 {
//!     for call in [7, 8, 9] {
//!         grammar.push(call);
//!     }
//! }
//! let frozen = grammar.freeze();
//! assert_eq!(frozen.len(), 3000);
//! assert_eq!(frozen.rule_count(), 2); // S → A^1000, A → 7 8 9
//! let bytes = frozen.to_bytes();
//! assert_eq!(FrozenGrammar::from_bytes(&bytes), Ok(frozen.clone()));
//! assert!(frozen.expand().eq([7, 8, 9].into_iter().cycle().take(3000)));
//! ```

mod codec;
pub mod fast_hash;
mod frozen;
mod grammar;
mod invariants;
mod set;
mod table;
pub mod tree;

pub use codec::DecodeError;
pub use frozen::{Expand, FrozenGrammar, Item, Symbol};
pub use grammar::Grammar;
pub use set::{decode_set, encode_list, encode_set, MAX_LETTERS};
