//! `tas`: the test-and-set spinlock of Linux 2.6.2x, the anon_vma lock that
//! seed 004's AIM7 runs livelocked on (2.6.23; x86 `__raw_spin_lock` in
//! include/asm-x86/spinlock_{32,64}.h, replaced on x86 by the ticket lock in
//! 2.6.25, Nick Piggin's "x86: FIFO ticket spinlocks"; seed 004's ia64 machine
//! had a test-and-set lock too).
//!
//! The kernel's word is 1 when free. `lock; decl` takes it: the lock is ours
//! if the result is not negative (the word was 1). A loser does not queue
//! anywhere: it polls the word with `rep; nop` (cpu_relax) until it reads
//! positive, then decrements again. Unlock is a plain store of 1, which
//! wipes out the losers' decrements. So nothing orders the waiters: whichever
//! RMW reaches the line first after the release wins, usually the CPU nearest
//! the releaser or the releaser itself coming back (its line is still in its
//! cache), and every release starts a storm of RMWs on one line. Unfair and
//! retry-storming: the behaviour this kind exists to show.
//!
//! # State word (u32, read as i32)
//! - `1`: free.
//! - `0`: held, nobody tried since it was taken.
//! - `< 0`: held; each failed decrement since the grant took one more off.
//!
//! Invariants: exactly one thread took the word from 1 to 0 since the last
//! store of 1 (the holder); only the holder stores 1; a waiter decrements
//! only after reading a positive word, so a held word only goes down.
//! Decrements cannot wrap in practice: a word goes down by at most one per
//! waiter per release it sees.

use super::LockKind;
use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::raw::{KindInfo, exclusive_only};
use super::spin_wait::SpinWait;
use crate::mode::Mode;

/// The word of a free lock.
const FREE: u32 = 1;

/// `lock; decl` took the lock iff the word it decremented was positive
/// (`jns`: the result is not negative).
pub fn decrement_took_it(before: u32) -> bool {
    (before as i32) > 0
}

/// A waiter retries its decrement only once it reads a positive word
/// (`cmpl $0, %0; jle 3b`).
pub fn looks_free(word: u32) -> bool {
    (word as i32) > 0
}

/// The 2.6.2x test-and-set spinlock. Tokens are `()`.
#[derive(Debug)]
pub struct TasSpinlock<P: Platform = Native> {
    word: P::AtomicU32,
}

impl<P: Platform> TasSpinlock<P> {
    /// Whether someone holds it now (racy snapshot, for tests).
    pub fn locked(&self) -> bool {
        !looks_free(self.word.load(Ordering::Relaxed))
    }

    /// Failed decrements since the grant: how many retries hit the held
    /// lock (racy snapshot, for tests).
    pub fn failed_attempts(&self) -> u32 {
        let w = self.word.load(Ordering::Relaxed) as i32;
        if w > 0 { 0 } else { w.unsigned_abs() }
    }

    /// spin_lock: preemption off, then one decrement.
    #[inline]
    fn lock(&self, mode: Mode) {
        P::preempt_disable();
        if !decrement_took_it(self.word.fetch_sub(1, Ordering::Acquire)) {
            self.lock_slow(mode);
        }
    }

    /// The `3:` loop: poll until the word reads free, decrement again.
    #[cold]
    fn lock_slow(&self, mode: Mode) {
        let mut wait = SpinWait::<P>::begin(mode);
        loop {
            // Step 1: poll, reading only, until the holder's store of 1.
            while !looks_free(self.word.load(Ordering::Relaxed)) {
                wait.poll();
            }
            // Step 2: race every other poller for it.
            if decrement_took_it(self.word.fetch_sub(1, Ordering::Acquire)) {
                break;
            }
        }
        wait.granted();
    }

    /// __raw_spin_trylock: `xchgl` with 0, taken iff the old word was positive.
    #[inline]
    fn try_lock(&self) -> Option<()> {
        P::preempt_disable();
        let taken = decrement_took_it(self.word.swap(0, Ordering::Acquire));
        if !taken {
            P::preempt_enable();
        }
        taken.then_some(())
    }

    /// __raw_spin_unlock: `movl $1`, then preemption back on.
    #[inline]
    fn unlock(&self, _: ()) {
        self.word.store(FREE, Ordering::Release);
        P::preempt_enable();
    }
}

impl<P: Platform> KindInfo for TasSpinlock<P> {
    const KIND: LockKind = LockKind::Tas;
    const SHARED_READERS: bool = false;
    const HAS_DOWNGRADE: bool = false;
}

exclusive_only!(
    TasSpinlock,
    (),
    TasSpinlock {
        word: P::AtomicU32::new(FREE)
    },
    lock,
    try_lock,
    unlock
);

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;
    use crate::locks::RawRwLock;

    #[test]
    fn only_a_decrement_of_the_free_word_takes_it() {
        assert!(decrement_took_it(FREE));
        assert!(!decrement_took_it(0));
        assert!(!decrement_took_it(-3i32 as u32));
        assert!(looks_free(FREE) && !looks_free(0) && !looks_free(u32::MAX));
    }

    #[test]
    fn failed_attempts_pile_up_and_the_unlock_wipes_them() {
        let lock = <TasSpinlock>::new();
        lock.lock_exclusive();
        assert!(lock.try_lock_exclusive().is_none());
        // Two losers' decrements, as polling waiters would do.
        for _ in 0..2 {
            assert!(!decrement_took_it(
                lock.word.fetch_sub(1, Ordering::Relaxed)
            ));
        }
        assert!(lock.locked());
        assert_eq!(lock.failed_attempts(), 2);
        // SAFETY: held just above.
        unsafe { lock.unlock_exclusive(()) };
        assert!(!lock.locked());
        assert!(lock.try_lock_shared().is_some());
    }
}

#[cfg(all(test, shuttle))]
mod shuttle_tests {
    use super::TasSpinlock;
    use crate::locks::model_check::{Op::*, check, roles};

    // Bound, for each check here: 2000 random + 2000 PCT (depth 3)
    // schedules, each at most model_check::MAX_STEPS steps; 2 acquisitions
    // per thread. Three pollers race every release; a trylock's exchange
    // lands on a held word.
    #[test]
    fn three_contenders_exclude_and_all_finish() {
        check::<TasSpinlock>(2000, roles(&[Write, Read, Downgrade]));
    }

    #[test]
    fn try_paths_exclude_and_all_finish() {
        check::<TasSpinlock>(2000, roles(&[Write, TryWrite, TryRead, Write]));
    }
}
