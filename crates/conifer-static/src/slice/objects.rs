//! Abstract memory objects, the points-to analysis's vocabulary ([`super::pointsto`]).

use std::collections::BTreeSet;

/// An abstract memory object's number.
pub type Obj = u32;

/// Memory the analysis cannot name (some exposed object).
pub const UNKNOWN: Obj = 0;

/// A set of objects.
pub type Objs = BTreeSet<Obj>;
