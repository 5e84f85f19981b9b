//! The kernel spinlocks the storm takes but does not study: the zone's
//! `lruvec->lru_lock` and each mm's `mm->page_table_lock` (both `spinlock_t`),
//! and the busy-wait the page lock and the vma locks' writers share.
//!
//! Not a lock kind of `crate::locks`: those count their events in the lock
//! classes the run reports (anon_vma, i_mmap, mmap_lock), and a spinlock
//! counted there would show up as contention on a lock it is not. This one
//! is a word of the platform's (so the simulator moves its cache line and a
//! simulated waiter waits for the holder's release to write it), taken
//! test-and-test-and-set with preemption off, as spin_lock disables it. It
//! models exclusion, the line and the waits, not a queue's handoff order
//! (today's spinlock_t is a qspinlock: FIFO). A waiter's time is handed back
//! to the caller ([`SpinGuard::waited_ns`]), which reports it where it
//! belongs (the lru_lock's in the memory line).
//!
//! Word: 0 free, 1 held. Invariant: only the holder stores 0.

use crate::locks::platform::{AtomicInt, Ordering, Platform};
use crate::locks::spin_wait::SPIN_POLLS_BEFORE_YIELD;
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

/// A `spinlock_t` around `T`.
pub struct SpinLock<P: Platform, T> {
    word: P::AtomicU32,
    data: UnsafeCell<T>,
}

// SAFETY: the word gives one holder at a time exclusive access to `T`, as a
// mutex does; `T: Send` suffices for both.
unsafe impl<P: Platform, T: Send> Send for SpinLock<P, T> {}
// SAFETY: as above.
unsafe impl<P: Platform, T: Send> Sync for SpinLock<P, T> {}

impl<P: Platform, T> SpinLock<P, T> {
    pub fn new(data: T) -> Self {
        SpinLock {
            word: P::AtomicU32::new(0),
            data: UnsafeCell::new(data),
        }
    }

    /// spin_lock: preemption off, then spin until the word is ours.
    #[inline]
    pub fn lock(&self) -> SpinGuard<'_, P, T> {
        P::preempt_disable();
        let waited_ns = if self.word.swap(1, Ordering::Acquire) == 0 {
            0
        } else {
            self.lock_slow()
        };
        SpinGuard {
            lock: self,
            waited_ns,
        }
    }

    /// The contended path: poll until free, then try again; the ns waited.
    #[cold]
    fn lock_slow(&self) -> u64 {
        let start = P::now_ns();
        loop {
            spin_until::<P>(|| self.word.load(Ordering::Relaxed) == 0);
            if self.word.swap(1, Ordering::Acquire) == 0 {
                return P::now_ns() - start;
            }
        }
    }

    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

/// A held [`SpinLock`]; spin_unlock on drop.
pub struct SpinGuard<'a, P: Platform, T> {
    lock: &'a SpinLock<P, T>,
    waited_ns: u64,
}

impl<P: Platform, T> SpinGuard<'_, P, T> {
    /// How long this acquisition spun before it got the lock (0: at once).
    pub fn waited_ns(&self) -> u64 {
        self.waited_ns
    }
}

impl<P: Platform, T> Deref for SpinGuard<'_, P, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard is the word's one holder.
        unsafe { &*self.lock.data.get() }
    }
}

impl<P: Platform, T> DerefMut for SpinGuard<'_, P, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard is the word's one holder, and `&mut self` makes
        // this the only reference derived from it.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<P: Platform, T> Drop for SpinGuard<'_, P, T> {
    fn drop(&mut self) {
        self.lock.word.store(0, Ordering::Release);
        P::preempt_enable();
    }
}

/// Busy-wait until `ready()`: one spin hint per poll at the kernel's constant
/// rate, yielding the CPU after [`SPIN_POLLS_BEFORE_YIELD`] polls on a
/// platform whose spinners must (user space, where the holder can be
/// preempted; see `locks::spin_wait`).
pub fn spin_until<P: Platform>(mut ready: impl FnMut() -> bool) {
    let mut polls = 0u64;
    while !ready() {
        polls += 1;
        if polls > SPIN_POLLS_BEFORE_YIELD && P::spinners_yield() {
            P::yield_now();
        } else {
            P::spin_hint();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::platform::Native;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn holders_exclude_each_other_and_a_waiter_reports_its_wait() {
        let lock = SpinLock::<Native, u64>::new(0);
        let inside = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..2_000 {
                        let mut g = lock.lock();
                        assert!(!inside.swap(true, Ordering::Relaxed), "two holders");
                        *g += 1;
                        inside.store(false, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(*lock.lock(), 8_000);
        let held = lock.lock();
        assert_eq!(held.waited_ns(), 0, "a free lock is taken at once");
        let waiter = std::thread::scope(|s| {
            let w = s.spawn(|| lock.lock().waited_ns());
            std::thread::sleep(std::time::Duration::from_millis(20));
            drop(held);
            w.join().unwrap()
        });
        assert!(
            waiter >= 10_000_000,
            "waited {waiter} ns behind a 20 ms hold"
        );
    }
}
