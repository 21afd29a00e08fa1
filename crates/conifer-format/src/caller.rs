//! Call sites recorded at run time (`conifer run --callsites`): the return address of each
//! call into the program, as the module that holds it and the offset in that module, so
//! address-space layout randomisation does not make the same call site look different on
//! every rank. The signature carries it right after its thread (see docs/format.md); the
//! trace's metadata lists the modules' paths.

use crate::varint::{put_u64, Reader};

/// The byte that introduces a caller in a signature (distinct from every value tag).
pub const TAG: u8 = 0xCA;

/// Where a call was made: the return address into the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Caller {
    /// [`module_key`] of the executable or shared library holding the address.
    pub module: u32,
    /// The return address minus the module's load bias: an address of the module's file.
    pub offset: u64,
}

impl Caller {
    /// Appends the binary form (tag, module key, offset).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(TAG);
        put_u64(out, self.module.into());
        put_u64(out, self.offset);
    }

    /// Reads a caller if one comes next.
    pub fn decode_if_present(r: &mut Reader) -> Option<Option<Caller>> {
        if r.peek() != Some(TAG) {
            return Some(None);
        }
        r.byte()?;
        Some(Some(Caller {
            module: r.u32()?,
            offset: r.u64()?,
        }))
    }

    /// The address to look up in debug information: inside the call instruction, not after it.
    pub fn lookup_address(&self) -> u64 {
        self.offset.saturating_sub(1)
    }
}

/// The key a module's path is known by in signatures: the FNV-1a hash of the path, folded to
/// 32 bits, the same on every rank that loaded the module from the same path.
pub fn module_key(path: &str) -> u32 {
    let h = conifer_spec::fnv::fnv1a(path.as_bytes());
    (h ^ (h >> 32)) as u32
}

/// The path among `modules` whose key is `key`.
pub fn module_path(modules: &[String], key: u32) -> Option<&str> {
    modules
        .iter()
        .find(|m| module_key(m) == key)
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_round_trips_and_is_absent_when_another_tag_follows() {
        let c = Caller {
            module: module_key("/usr/bin/app"),
            offset: 0x1234,
        };
        let mut bytes = Vec::new();
        c.encode(&mut bytes);
        assert_eq!(
            Caller::decode_if_present(&mut Reader::new(&bytes)),
            Some(Some(c))
        );
        assert_eq!(
            Caller::decode_if_present(&mut Reader::new(&[0, 2])),
            Some(None)
        );
        assert_eq!(c.lookup_address(), 0x1233);
    }

    #[test]
    fn module_keys_differ_by_path_and_are_found() {
        let mods = vec!["/a/app".to_string(), "/usr/lib/libm.so.6".to_string()];
        assert_ne!(module_key(&mods[0]), module_key(&mods[1]));
        assert_eq!(
            module_path(&mods, module_key("/usr/lib/libm.so.6")),
            Some("/usr/lib/libm.so.6")
        );
        assert_eq!(module_path(&mods, 7), None);
    }
}
