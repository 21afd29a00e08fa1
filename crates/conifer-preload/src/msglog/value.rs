//! Values as the program holds them and as the log keeps them.

use std::ffi::c_int;

/// A value as the program holds it — a return value, or a handle (a C handle's bits, a
/// Fortran handle's `INTEGER`) — and as the log keeps it.
pub trait ProgramValue: Copy {
    /// The value as logged.
    fn to_bits(self) -> u64;
    /// The value from its logged bits.
    fn from_bits(bits: u64) -> Self;
}
impl ProgramValue for isize {
    fn to_bits(self) -> u64 {
        self as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits as isize
    }
}
impl ProgramValue for c_int {
    fn to_bits(self) -> u64 {
        self as i64 as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits as i64 as c_int
    }
}
impl ProgramValue for i64 {
    fn to_bits(self) -> u64 {
        self as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits as i64
    }
}
impl ProgramValue for f64 {
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}
impl<T> ProgramValue for *mut T {
    fn to_bits(self) -> u64 {
        self as usize as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits as usize as *mut T
    }
}
