//! Integers that follow the caller's rank, chosen once all ranks are merged so that ranks
//! agree: a file offset or displacement of `rank × block` (`MPI_File_set_view(disp = r·128)`,
//! `MPI_File_write_at` of rank-sized blocks) makes one signature per rank; stored as
//! [`Value::RankAffine`] `{a, b}` (the value `a · r + b`, `r` the caller's world rank) it
//! makes one for all. Per *integer family* (signatures equal but for their top-level
//! integers) and per integer field, the ranks' values are fitted with one `a ≠ 0, b`; the
//! field is coded so only when every rank using the family has one value there and all fit
//! exactly, so decoding (`a · r + b`) gives back every value.

use crate::rank_codes::{reform, terminals_by_rank};
use crate::rank_families::one_value_per_rank;
use conifer_compress::fast_hash::FastMap;
use conifer_format::signature::encode_signature;
use conifer_format::signature::Signature;
use conifer_format::stored::TraceRecord;
use conifer_format::value::Value;
use std::collections::BTreeMap;

/// A signature's top-level integers (field index, value), and its family. Only these are
/// kept: parsed values of 10^5 signatures took tens of MB on the merging rank.
struct Integral {
    ints: Vec<(usize, i64)>,
    family: usize,
}

/// The signatures of `m` with top-level integer arguments, by terminal, with their families.
fn integral_signatures(m: &TraceRecord) -> FastMap<u32, Integral> {
    let mut families: FastMap<Vec<u8>, usize> = FastMap::default();
    let mut out = FastMap::default();
    for (t, bytes) in m.signatures.iter().enumerate() {
        let Some(mut signature) = Signature::parse(bytes) else {
            continue;
        };
        let mut ints = Vec::new();
        for (j, v) in signature.values.iter_mut().enumerate() {
            if let Value::Int(x) = v {
                ints.push((j, *x));
                *x = 0;
            }
        }
        if ints.is_empty() {
            continue;
        }
        let next = families.len();
        let family = *families.entry(encode_signature(&signature)).or_insert(next);
        out.insert(t as u32, Integral { ints, family });
    }
    out
}

/// `(a, b)` with `a ≠ 0` such that `value = a · rank + b` for every `(rank, value)`, when
/// the ranks differ and one such line goes through all of them.
fn affine_fit(points: &[(i64, i64)]) -> Option<(i64, i64)> {
    let &(r0, v0) = points.first()?;
    let &(r1, v1) = points.iter().find(|&&(r, _)| r != r0)?;
    let (dv, dr) = (v1.checked_sub(v0)?, r1 - r0);
    if dv == 0 || dv % dr != 0 {
        return None;
    }
    let a = dv / dr;
    let b = v0.checked_sub(a.checked_mul(r0)?)?;
    points
        .iter()
        .all(|&(r, v)| a.checked_mul(r).and_then(|x| x.checked_add(b)) == Some(v))
        .then_some((a, b))
}

/// Codes every integer field that is an exact affine function of the caller's world rank
/// (see the module documentation). Call it once, on a record of all ranks, before writing.
pub fn choose_int_codes(m: &mut TraceRecord) {
    let integral = integral_signatures(m);
    if integral.is_empty() {
        return;
    }
    let used = terminals_by_rank(m);
    // Each family's uses (world rank, signature), so one family's values are alive at a time.
    let mut by_family: BTreeMap<usize, Vec<(i64, &Integral)>> = BTreeMap::new();
    for (rank, terminals) in used.iter().enumerate() {
        let world = i64::from(m.first_rank) + rank as i64;
        for sig in terminals.iter().filter_map(|t| integral.get(t)) {
            by_family.entry(sig.family).or_default().push((world, sig));
        }
    }
    let mut chosen: FastMap<(usize, usize), (i64, i64)> = FastMap::default();
    for (family, uses) in by_family {
        let seen: Vec<(usize, i64, i64)> = uses
            .iter()
            .flat_map(|&(world, sig)| sig.ints.iter().map(move |&(j, x)| (j, world, x)))
            .collect();
        for (j, points) in one_value_per_rank(seen) {
            if let Some((a, b)) = affine_fit(&points) {
                chosen.insert((family, j), (a, b));
            }
        }
    }
    if chosen.is_empty() {
        return;
    }
    // A coded form does not depend on the rank: made once per terminal.
    let coded: FastMap<u32, Vec<u8>> = integral
        .iter()
        .filter_map(|(&t, sig)| {
            let mut coded = Signature::parse(&m.signatures[t as usize])?;
            let mut any = false;
            for (j, v) in coded.values.iter_mut().enumerate() {
                if let Some(&(a, b)) = chosen.get(&(sig.family, j)) {
                    *v = Value::RankAffine { a, b };
                    any = true;
                }
            }
            any.then(|| (t, encode_signature(&coded)))
        })
        .collect();
    let forms: Vec<Vec<(u32, Vec<u8>)>> = used
        .iter()
        .map(|terminals| {
            terminals
                .iter()
                .filter_map(|t| Some((*t, coded.get(t)?.clone())))
                .collect()
        })
        .collect();
    reform(m, forms);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_only_exact_lines_through_every_rank() {
        // MPI_File_set_view(disp = 128 · r) on 4 ranks.
        let disp: Vec<(i64, i64)> = (0..4).map(|r| (r, 128 * r)).collect();
        assert_eq!(affine_fit(&disp), Some((128, 0)));
        assert_eq!(affine_fit(&[(2, 10), (5, 1)]), Some((-3, 16)));
        // One value everywhere (nothing to gain), a non-integer slope, a point off the line,
        // and a single rank are left alone.
        assert_eq!(affine_fit(&[(0, 7), (1, 7), (2, 7)]), None);
        assert_eq!(affine_fit(&[(0, 0), (2, 3)]), None);
        assert_eq!(affine_fit(&[(0, 0), (1, 128), (2, 257)]), None);
        assert_eq!(affine_fit(&[(3, 9)]), None);
    }
}
