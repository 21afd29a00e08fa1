//! The codes a record gets once all its ranks are merged, in their order: rank codes first
//! ([`rank_codes`]: integer families are read with the peers they code), then per-rank value
//! columns for ranks whose calls differ only in integer fields ([`value_columns`]), then
//! rank-affine integers for the integer families left ([`int_codes`]).

use crate::{int_codes, rank_codes, value_columns};
use conifer_format::stored::TraceRecord;

/// Chooses the rank codes, the value columns and then the integer codes of `m`, a record of all ranks, before
/// it is written.
pub fn choose_codes(m: &mut TraceRecord) {
    rank_codes::choose_rank_codes(m);
    value_columns::choose_value_columns(m);
    int_codes::choose_int_codes(m);
}
