//! `rwlock`: the 2.6-era rwlock_t (x86 __raw_read_lock / __raw_write_lock with
//! __read_lock_failed / __write_lock_failed, before qrwlock replaced it in 3.16).
//!
//! Spinning and reader-preferring: a reader gets in whenever no writer HOLDS
//! the lock. A waiting writer leaves no trace in the lock word (the x86 code
//! undid its `subl RW_LOCK_BIAS` and polled), so readers keep entering past it
//! and a steady stream of overlapping readers starves writers indefinitely.
//! That is the behaviour this kind exists to show.
//!
//! The x86 code counted down from RW_LOCK_BIAS; this word counts up, which
//! grants exactly the same: a read attempt adds a reader and succeeds iff no
//! writer holds, otherwise takes it back and polls; a write attempt succeeds
//! only from an empty word.
//!
//! rwlock_t has no down_read_critical and no downgrade in any kernel:
//! `lock_shared_critical` is `lock_shared` (already as unfair as it gets) and
//! `downgrade` keeps the hold exclusive.
//!
//! # State word (u32)
//! ```text
//!   31      30                          0
//! +--------+-----------------------------+
//! | WRITER |  readers (incl. attempts)   |
//! +--------+-----------------------------+
//! ```
//! - `WRITER`: a writer holds the lock (set only from an all-zero word).
//! - readers: holders plus readers whose attempt is about to be taken back.
//!
//! Invariants: `WRITER` set implies no reader holds (readers counted alongside
//! it are failed attempts and will subtract themselves); a writer is granted
//! only from 0. Waiting writers are not in the word at all; for tests and
//! reports only, [`RwlockT::writers_spinning`] counts them beside it.

use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::raw::KindInfo;
use super::read_hold::ReadHold;
use super::spin_wait::SpinWait;
use super::{LockKind, RawRwLock};
use crate::mode::Mode;

/// A writer holds the lock.
const WRITER: u32 = 1 << 31;
/// One reader (holder or attempt).
const READER: u32 = 1;

/// A reader may enter whenever no writer holds, whoever waits.
pub fn reader_may_enter(state: u32) -> bool {
    state & WRITER == 0
}

/// A writer may enter only when nobody holds (and no reader is mid-attempt).
pub fn writer_may_enter(state: u32) -> bool {
    state == 0
}

/// The lock word, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RwlockState {
    pub writer: bool,
    /// Reader holders plus readers mid-attempt.
    pub readers: u32,
}

impl RwlockState {
    pub fn from_word(word: u32) -> RwlockState {
        RwlockState {
            writer: word & WRITER != 0,
            readers: word & !WRITER,
        }
    }
}

/// The 2.6-era reader-preferring spinning rwlock_t.
#[derive(Debug)]
pub struct RwlockT<P: Platform = Native> {
    word: P::AtomicU32,
    /// Writers in their slow path. Not part of rwlock_t (whose waiting writers
    /// are invisible, the reason they starve); kept beside the word so tests
    /// and reports can see a starved writer. Touched only by contended writers.
    writers_spinning: P::AtomicU32,
}

impl<P: Platform> RwlockT<P> {
    /// A snapshot of the state, for tests and reports (racy by nature).
    pub fn state(&self) -> RwlockState {
        RwlockState::from_word(self.word.load(Ordering::Relaxed))
    }

    /// Writers currently polling in their slow path (racy snapshot).
    pub fn writers_spinning(&self) -> u32 {
        self.writers_spinning.load(Ordering::Relaxed)
    }

    /// One read attempt: add a reader; keep it iff no writer holds.
    #[inline]
    fn read_attempt(&self) -> bool {
        reader_may_enter(self.word.fetch_add(READER, Ordering::Acquire))
    }

    #[inline]
    fn write_attempt(&self) -> bool {
        self.word
            .compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// __read_lock_failed.
    #[cold]
    fn lock_shared_slow(&self) {
        let mut wait = SpinWait::<P>::begin(Mode::Read);
        loop {
            // Step 1: take back the failed attempt's reader, so the writer's
            // release leaves a clean word.
            self.word.fetch_sub(READER, Ordering::Relaxed);
            // Step 2: poll, reading only, until no writer holds.
            while !reader_may_enter(self.word.load(Ordering::Relaxed)) {
                wait.poll();
            }
            // Step 3: try again; a writer may have got in since Step 2.
            if self.read_attempt() {
                break;
            }
        }
        wait.granted();
    }

    /// __write_lock_failed: poll until nobody holds, then grab; readers that
    /// arrive meanwhile get in first.
    #[cold]
    fn lock_exclusive_slow(&self) {
        let mut wait = SpinWait::<P>::begin(Mode::Write);
        // Step 1: count ourselves as spinning (tests and reports only).
        self.writers_spinning.fetch_add(1, Ordering::Relaxed);
        loop {
            // Step 2: poll, reading only, until the word is empty.
            while !writer_may_enter(self.word.load(Ordering::Relaxed)) {
                wait.poll();
            }
            // Step 3: grab it unless a reader or writer got there first.
            if self.write_attempt() {
                break;
            }
        }
        self.writers_spinning.fetch_sub(1, Ordering::Relaxed);
        wait.granted();
    }
}

impl<P: Platform> KindInfo for RwlockT<P> {
    const KIND: LockKind = LockKind::Rwlock;
    const SHARED_READERS: bool = true;
    const HAS_DOWNGRADE: bool = false;
}

// SAFETY: WRITER is set only by a CAS from 0 (no holder of either kind) and
// cleared only by its holder; a reader keeps its increment only if WRITER was
// clear when it added it, and a writer cannot set WRITER while any reader
// increment is in the word.
unsafe impl<P: Platform> RawRwLock for RwlockT<P> {
    type ReadToken = ReadHold;
    type WriteToken = ();
    type Platform = P;

    fn new() -> Self {
        RwlockT {
            word: P::AtomicU32::new(0),
            writers_spinning: P::AtomicU32::new(0),
        }
    }

    /// read_lock: preemption off, then one attempt, polling if a writer holds.
    #[inline]
    fn lock_shared(&self) -> ReadHold {
        P::preempt_disable();
        if !self.read_attempt() {
            self.lock_shared_slow();
        }
        ReadHold::Shared(())
    }

    /// read_trylock: one attempt, taken back on failure.
    #[inline]
    fn try_lock_shared(&self) -> Option<ReadHold> {
        P::preempt_disable();
        if self.read_attempt() {
            return Some(ReadHold::Shared(()));
        }
        self.word.fetch_sub(READER, Ordering::Relaxed);
        P::preempt_enable();
        None
    }

    /// rwlock_t has no critical-reader path; its readers already pass waiting
    /// writers, so this is `lock_shared`.
    #[inline]
    fn lock_shared_critical(&self) -> ReadHold {
        self.lock_shared()
    }

    #[inline]
    unsafe fn unlock_shared(&self, token: ReadHold) {
        match token {
            ReadHold::Shared(()) => {
                self.word.fetch_sub(READER, Ordering::Release);
                P::preempt_enable();
            }
            // SAFETY: a downgraded token is the caller's exclusive hold.
            ReadHold::Exclusive => unsafe { self.unlock_exclusive(()) },
        }
    }

    /// write_lock: preemption off, then one attempt, polling if anyone holds.
    #[inline]
    fn lock_exclusive(&self) {
        P::preempt_disable();
        if !self.write_attempt() {
            self.lock_exclusive_slow();
        }
    }

    #[inline]
    fn try_lock_exclusive(&self) -> Option<()> {
        P::preempt_disable();
        let taken = self.write_attempt();
        if !taken {
            P::preempt_enable();
        }
        taken.then_some(())
    }

    /// write_unlock: clear WRITER with an RMW (readers' failed attempts may be
    /// in the word, so a plain store of 0 would lose them).
    #[inline]
    unsafe fn unlock_exclusive(&self, _: ()) {
        self.word.fetch_sub(WRITER, Ordering::Release);
        P::preempt_enable();
    }

    /// rwlock_t has no write-to-read downgrade: the hold stays exclusive.
    #[inline]
    unsafe fn downgrade(&self, _: ()) -> ReadHold {
        ReadHold::Exclusive
    }
}

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;

    #[test]
    fn readers_enter_unless_a_writer_holds() {
        assert!(reader_may_enter(0));
        assert!(reader_may_enter(5 * READER));
        assert!(!reader_may_enter(WRITER));
        // Readers mid-attempt beside a holding writer do not let others in.
        assert!(!reader_may_enter(WRITER | (2 * READER)));
    }

    #[test]
    fn writers_enter_only_an_empty_word() {
        assert!(writer_may_enter(0));
        assert!(!writer_may_enter(READER));
        assert!(!writer_may_enter(WRITER));
    }

    #[test]
    fn state_decodes_the_documented_bits() {
        assert_eq!(
            RwlockState::from_word(WRITER | 3),
            RwlockState {
                writer: true,
                readers: 3
            }
        );
    }

    #[test]
    fn failed_try_leaves_no_trace() {
        let lock = <RwlockT>::new();
        lock.lock_exclusive();
        assert!(lock.try_lock_shared().is_none());
        assert_eq!(lock.state().readers, 0);
        // SAFETY: held just above.
        unsafe { lock.unlock_exclusive(()) };
        assert_eq!(lock.word.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn downgrade_keeps_it_exclusive_until_unlock_shared() {
        let lock = <RwlockT>::new();
        lock.lock_exclusive();
        // SAFETY: held just above.
        let token = unsafe { lock.downgrade(()) };
        assert_eq!(token, ReadHold::Exclusive);
        assert!(lock.try_lock_shared().is_none());
        // SAFETY: the token came from this lock.
        unsafe { lock.unlock_shared(token) };
        assert_eq!(lock.word.load(Ordering::Relaxed), 0);
    }
}

#[cfg(all(test, shuttle))]
mod shuttle_tests {
    use super::RwlockT;
    use crate::locks::model_check::{Op::*, check, roles};

    // Bound, for each check here: 2000 random + 2000 PCT (depth 3)
    // schedules, each at most model_check::MAX_STEPS steps; 2 acquisitions per thread.
    #[test]
    fn writer_and_readers_exclude_and_all_finish() {
        check::<RwlockT>(2000, roles(&[Write, Read, Read]));
    }

    // Failed read attempts add and remove a reader beside a holding writer:
    // a race there would corrupt the word or let a writer in with a reader.
    #[test]
    fn try_and_downgrade_paths() {
        check::<RwlockT>(2000, roles(&[Downgrade, TryRead, CriticalRead, TryWrite]));
    }
}
