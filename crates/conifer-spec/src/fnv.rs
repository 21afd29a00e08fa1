//! FNV-1a, 64-bit: the hash that names a version of the function table (shared by the build
//! script, which computes it, and the tests, which check it).

/// The FNV-1a 64-bit hash of `bytes`.
pub const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}
