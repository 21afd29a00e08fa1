//! The lock around the recorder's state, taken twice per MPI call by every wrapper: a spin
//! lock whose release is a plain store. `std::sync::Mutex` releases with an atomic swap (to
//! find sleeping waiters), a second locked instruction on every call; here waiters never
//! sleep in the kernel, they spin briefly and then yield. The recorder's critical sections
//! are short (the PMPI call itself is outside them whenever another thread may call MPI), so
//! a waiter is rarely kept long.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A value behind a spin lock.
pub struct RecorderLock<T> {
    held: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and only one guard exists at a time.
unsafe impl<T: Send> Sync for RecorderLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for RecorderLock<T> {}

/// Exclusive access to the locked value; releases the lock when dropped.
pub struct Locked<'a, T> {
    lock: &'a RecorderLock<T>,
}

/// Spins of a waiter between yields of its time slice.
const SPINS_BEFORE_YIELD: u32 = 64;

impl<T> RecorderLock<T> {
    /// An unlocked value.
    pub const fn new(value: T) -> RecorderLock<T> {
        RecorderLock {
            held: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Waits for the lock and takes it.
    #[inline(always)]
    pub fn lock(&self) -> Locked<'_, T> {
        if self
            .held
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.wait();
        }
        Locked { lock: self }
    }

    #[cold]
    fn wait(&self) {
        let mut spins = 0;
        loop {
            if !self.held.load(Ordering::Relaxed)
                && self
                    .held
                    .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            spins += 1;
            if spins % SPINS_BEFORE_YIELD == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Takes the lock if it is free.
    pub fn try_lock(&self) -> Option<Locked<'_, T>> {
        self.held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            .then_some(Locked { lock: self })
    }

    /// The value, whether or not the lock is held.
    ///
    /// # Safety
    /// Only where no other code can touch the value meanwhile (see `record::salvage`).
    pub unsafe fn get_unlocked(&self) -> &T {
        &*self.value.get()
    }
}

impl<T> Deref for Locked<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for Locked<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for Locked<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        self.lock.held.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_never_lose_an_update() {
        static COUNTER: RecorderLock<u64> = RecorderLock::new(0);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..20_000 {
                        let mut n = COUNTER.lock();
                        // A read and a write apart, so an unlocked race would lose updates.
                        let seen = *n;
                        std::hint::black_box(&seen);
                        *n = seen + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(*COUNTER.lock(), 80_000);
    }

    #[test]
    fn a_held_lock_is_not_taken_twice() {
        let lock = RecorderLock::new(1);
        let held = lock.lock();
        assert!(lock.try_lock().is_none());
        drop(held);
        assert!(lock.try_lock().is_some());
    }
}
