//! The `FUNC` section: the function catalog as references into the MPI function table
//! (`conifer-spec`) this Conifer was built with, named by the table's hash. A function is its
//! id, its binding, its name as an index into the table, and its slot names as references to
//! the table function's C parameters; names the table lacks (`MPIX_` functions, the `free`
//! event, parameters the generator named after `mpi.h`) are written out.

use crate::container::FormatError;
use crate::metadata::{FunctionInfo, Language};
use crate::varint::{put_str, put_u64, Reader};
use conifer_spec::{find_function, FUNCTION_NAMES, PARAMETER_NAMES, TABLE_HASH};

/// Appended by the wrapper generator to the slot of an in/out parameter's value after the call.
const OUT_SUFFIX: &str = "_out";

/// Bit of a function's head: the Fortran binding.
const FORTRAN: u64 = 1;
/// Bit of a function's head: its slots are its table entry's C parameters, in order.
const PARAMETER_SLOTS: u64 = 2;

/// The `FUNC` payload of `catalog`, in id order, the first entry of each id (the catalogs
/// Conifer makes are sorted and have one entry per id).
pub fn encode(catalog: &[FunctionInfo]) -> Vec<u8> {
    let mut sorted: Vec<&FunctionInfo> = catalog.iter().collect();
    sorted.sort_by_key(|f| f.id);
    sorted.dedup_by_key(|f| f.id);
    let mut out = TABLE_HASH.to_le_bytes().to_vec();
    put_u64(&mut out, sorted.len() as u64);
    // Ids ascend: each is written as the gap to the one before, less one.
    let mut next = 0;
    for f in sorted {
        put_u64(&mut out, u64::from(f.id) - next);
        next = u64::from(f.id) + 1;
        let fortran = match f.language {
            Language::C => 0,
            Language::Fortran => FORTRAN,
        };
        let Some(index) = find_function(&f.name) else {
            put_u64(&mut out, fortran);
            put_str(&mut out, &f.name);
            put_slots(&mut out, &f.slots, &[]);
            continue;
        };
        let params = PARAMETER_NAMES[index];
        if f.slots
            .iter()
            .map(String::as_str)
            .eq(params.iter().copied())
        {
            put_u64(
                &mut out,
                (index as u64 + 1) << 2 | PARAMETER_SLOTS | fortran,
            );
        } else {
            put_u64(&mut out, (index as u64 + 1) << 2 | fortran);
            put_slots(&mut out, &f.slots, params);
        }
    }
    out
}

/// Slot count, then each slot: `1 + (parameter index << 1 | has OUT_SUFFIX)` when it names one
/// of `params`, else 0 and the name.
fn put_slots(out: &mut Vec<u8>, slots: &[String], params: &[&str]) {
    put_u64(out, slots.len() as u64);
    for slot in slots {
        let position = |name: &str| params.iter().position(|p| *p == name);
        let reference = position(slot).map(|i| i << 1).or_else(|| {
            let stem = slot.strip_suffix(OUT_SUFFIX)?;
            position(stem).map(|i| i << 1 | 1)
        });
        match reference {
            Some(code) => put_u64(out, code as u64 + 1),
            None => {
                put_u64(out, 0);
                put_str(out, slot);
            }
        }
    }
}

/// Parses a `FUNC` payload; a catalog written with another version of the function table is
/// refused, since its references would name the wrong functions.
pub fn decode(payload: &[u8]) -> Result<Vec<FunctionInfo>, FormatError> {
    let malformed = || FormatError::Malformed("FUNC section is inconsistent".into());
    let mut r = Reader::new(payload);
    let hash = u64::from_le_bytes(
        r.take(8)
            .ok_or_else(malformed)?
            .try_into()
            .expect("8 bytes"),
    );
    if hash != TABLE_HASH {
        return Err(FormatError::DifferentSpec(hash));
    }
    let catalog = read(&mut r).ok_or_else(malformed)?;
    if r.remaining() != 0 {
        return Err(malformed());
    }
    Ok(catalog)
}

fn read(r: &mut Reader) -> Option<Vec<FunctionInfo>> {
    let mut next = 0u64;
    (0..r.count()?)
        .map(|_| {
            let id = u16::try_from(next.checked_add(r.u64()?)?).ok()?;
            next = u64::from(id) + 1;
            let head = r.u64()?;
            let language = match head & FORTRAN {
                0 => Language::C,
                _ => Language::Fortran,
            };
            let (name, params) = match (head >> 2).checked_sub(1) {
                None if head & PARAMETER_SLOTS == 0 => (r.str()?.to_string(), &[][..]),
                None => return None,
                Some(index) => {
                    let index = usize::try_from(index).ok()?;
                    (
                        FUNCTION_NAMES.get(index)?.to_string(),
                        PARAMETER_NAMES[index],
                    )
                }
            };
            let slots = if head & PARAMETER_SLOTS != 0 {
                params.iter().map(|p| p.to_string()).collect()
            } else {
                read_slots(r, params)?
            };
            Some(FunctionInfo {
                id,
                name,
                language,
                slots,
            })
        })
        .collect()
}

fn read_slots(r: &mut Reader, params: &[&str]) -> Option<Vec<String>> {
    (0..r.count()?)
        .map(|_| match r.u64()?.checked_sub(1) {
            None => r.str().map(str::to_string),
            Some(code) => {
                let param = params.get(usize::try_from(code >> 1).ok()?)?;
                Some(match code & 1 {
                    0 => param.to_string(),
                    _ => format!("{param}{OUT_SUFFIX}"),
                })
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(id: u16, name: &str, language: Language, slots: &[&str]) -> FunctionInfo {
        FunctionInfo {
            id,
            name: name.into(),
            language,
            slots: slots.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// `MPI_Isend`'s slots as the wrapper generator records them (`FUNCTION_SLOTS` of an
    /// Open MPI build, where the C wrapper has id 227 and the Fortran one 635).
    const ISEND_SLOTS: [&str; 7] = ["buf", "count", "datatype", "dest", "tag", "comm", "request"];

    #[test]
    fn isend_decodes_to_the_spec_parameters() {
        let isend = function(227, "MPI_Isend", Language::C, &ISEND_SLOTS);
        // Id 227; spec index 355, slots as the table's parameters: head (355 + 1) << 2 | 2.
        let mut hand = TABLE_HASH.to_le_bytes().to_vec();
        hand.extend_from_slice(&[1, 0xe3, 0x01, 0x92, 0x0b]);
        assert_eq!(encode(std::slice::from_ref(&isend)), hand);
        assert_eq!(decode(&hand).unwrap(), vec![isend]);
    }

    #[test]
    fn slots_refer_to_parameters_with_out_suffix_or_are_written_out() {
        let dims = function(
            70,
            "MPI_Dims_create",
            Language::C,
            &["nnodes", "ndims", "dims", "dims_out"],
        );
        // Spec index 117 (head 118 << 2), 4 slots: nnodes, ndims, dims (1 + index << 1), then
        // dims with `_out` (1 + (2 << 1 | 1)).
        let bytes = encode(std::slice::from_ref(&dims));
        assert_eq!(&bytes[8..], &[1, 70, 0xd8, 0x03, 4, 1, 3, 5, 6]);
        let catalog = vec![
            function(12, "MPIX_Query_cuda_support", Language::C, &[]),
            function(30, "MPI_Comm_dup", Language::C, &["old_comm", "newcomm"]),
            dims,
            function(497, "MPI_F_sync_reg", Language::Fortran, &[]),
            function(635, "MPI_Isend", Language::Fortran, &ISEND_SLOTS),
            function(781, "free", Language::C, &["ptr"]),
        ];
        assert_eq!(decode(&encode(&catalog)).unwrap(), catalog);
        let mut shuffled = catalog.clone();
        shuffled.reverse();
        shuffled.push(function(30, "MPI_Comm_dup", Language::Fortran, &[]));
        assert_eq!(
            decode(&encode(&shuffled)).unwrap(),
            catalog,
            "sorted, first of each id"
        );
    }

    #[test]
    fn another_function_table_is_refused_with_one_clear_line() {
        let mut bytes = encode(&[function(227, "MPI_Isend", Language::C, &ISEND_SLOTS)]);
        bytes[0] ^= 1;
        let err = decode(&bytes).unwrap_err();
        assert_eq!(err, FormatError::DifferentSpec(TABLE_HASH ^ 1));
        let line = err.to_string();
        assert!(
            line.contains("recorded with a different MPI function table")
                && line.contains("read it with the conifer that wrote it")
                && !line.contains('\n'),
            "{line}"
        );
    }

    #[test]
    fn damaged_catalogs_are_rejected() {
        let catalog = vec![
            function(227, "MPI_Isend", Language::C, &ISEND_SLOTS),
            function(781, "free", Language::C, &["ptr"]),
        ];
        let good = encode(&catalog);
        for cut in 0..good.len() {
            assert!(decode(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        let reference = |head: u64, slots: &[u64]| {
            let mut bytes = TABLE_HASH.to_le_bytes().to_vec();
            [1, 0, head, slots.len() as u64]
                .iter()
                .chain(slots)
                .for_each(|&v| put_u64(&mut bytes, v));
            decode(&bytes)
        };
        let beyond_table = (FUNCTION_NAMES.len() as u64 + 1) << 2 | PARAMETER_SLOTS;
        assert!(reference(beyond_table, &[]).is_err());
        assert!(
            reference(PARAMETER_SLOTS, &[]).is_err(),
            "a written-out name has no parameters"
        );
        assert!(
            reference(356 << 2, &[15]).is_err(),
            "MPI_Isend has 7 parameters"
        );
        assert!(reference(356 << 2, &[14]).is_ok());
    }
}
