//! The codes a record gets once all its ranks are merged, in their order: rank codes first
//! ([`rank_codes`]: integer families are read with the peers they code), then rank-affine
//! integers ([`int_codes`]).

use crate::{int_codes, rank_codes};
use conifer_format::stored::TraceRecord;

/// Chooses the rank codes and then the integer codes of `m`, a record of all ranks, before
/// it is written.
pub fn choose_codes(m: &mut TraceRecord) {
    rank_codes::choose_rank_codes(m);
    int_codes::choose_int_codes(m);
}
