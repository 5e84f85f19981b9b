//! `qrwlock`: the queued rwlock of Linux since 3.16 (kernel/locking/qrwlock.c,
//! queued_read_lock_slowpath / queued_write_lock_slowpath).
//!
//! Spinning and fair. The fast paths are one atomic on the count word. Every
//! slow path first queues FIFO on an internal spinlock, `wait_lock` (the
//! kernel's `arch_spinlock_t`, a qspinlock on x86, so here a [`McsSpinlock`]).
//! A writer at the head of that queue sets `WAITING` and keeps `wait_lock`
//! until it holds the lock, so a reader arriving after it sees `WAITING`,
//! leaves the fast path and queues behind it: readers do not pass a waiting
//! writer. A reader at the head waits only for a holding writer, then releases
//! `wait_lock` at once, so queued readers behind it join it one after another.
//!
//! Modelled for process context only: the kernel lets readers in interrupt
//! context skip the queue (they spin only while a writer holds). qrwlock has
//! no down_read_critical and no downgrade: `lock_shared_critical` is
//! `lock_shared` and `downgrade` keeps the hold exclusive.
//!
//! # State word `cnts` (u32), the kernel's layout
//! ```text
//!  31                 9     8     7        0
//! +--------------------+---------+----------+
//! | readers (x 0x200)  | WAITING |  LOCKED  |
//! +--------------------+---------+----------+
//! ```
//! - `LOCKED` (0xff, the kernel's `wlocked` byte): a writer holds the lock.
//! - `WAITING` (0x100): the writer at the head of `wait_lock`'s queue waits
//!   for readers to drain.
//! - readers: holders plus fast-path attempts about to be taken back.
//!
//! Invariants: `WAITING` is set and cleared only by a writer that holds
//! `wait_lock`, so at most one writer waits and while a reader holds
//! `wait_lock` nobody can be `WAITING`; `LOCKED` is set only from 0 or from
//! exactly `WAITING`, so a writer never holds alongside a reader.

use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::qspinlock::McsSpinlock;
use super::raw::KindInfo;
use super::read_hold::ReadHold;
use super::spin_wait::SpinWait;
use super::{LockKind, RawRwLock};
use crate::mode::Mode;

/// _QW_LOCKED: a writer holds the lock.
const LOCKED: u32 = 0xff;
/// _QW_WAITING: a queued writer waits for the readers to drain.
const WAITING: u32 = 0x100;
/// _QW_WMASK: any writer presence.
const WRITER_MASK: u32 = LOCKED | WAITING;
/// _QR_BIAS: one reader.
const READER: u32 = 0x200;

/// Fast path (queued_read_lock): a reader enters at once only if no writer
/// holds AND none waits, so it never passes a queued writer.
pub fn reader_may_enter_fast(cnts: u32) -> bool {
    cnts & WRITER_MASK == 0
}

/// A reader at the head of `wait_lock` waits only for a holding writer
/// (nobody can be WAITING while it holds `wait_lock`).
pub fn queued_reader_may_enter(cnts: u32) -> bool {
    cnts & LOCKED == 0
}

/// A writer takes the lock directly only from an empty word.
pub fn writer_may_enter(cnts: u32) -> bool {
    cnts == 0
}

/// The waiting writer converts WAITING into LOCKED once it is alone.
pub fn waiting_writer_may_enter(cnts: u32) -> bool {
    cnts == WAITING
}

/// The count word, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QrwlockState {
    pub writer_locked: bool,
    pub writer_waiting: bool,
    /// Reader holders plus readers mid-attempt.
    pub readers: u32,
}

impl QrwlockState {
    pub fn from_cnts(cnts: u32) -> QrwlockState {
        QrwlockState {
            writer_locked: cnts & LOCKED != 0,
            writer_waiting: cnts & WAITING != 0,
            readers: cnts / READER,
        }
    }
}

/// The fair queued rwlock.
#[derive(Debug)]
pub struct Qrwlock<P: Platform = Native> {
    cnts: P::AtomicU32,
    /// FIFO of slow-path readers and writers (the kernel's wait_lock).
    wait_lock: McsSpinlock<P>,
}

impl<P: Platform> Qrwlock<P> {
    /// A snapshot of the count word, for tests and reports (racy by nature).
    pub fn state(&self) -> QrwlockState {
        QrwlockState::from_cnts(self.cnts.load(Ordering::Relaxed))
    }

    /// The internal queue lock, for tests and reports (who is queued).
    pub fn wait_queue(&self) -> &McsSpinlock<P> {
        &self.wait_lock
    }

    /// queued_read_lock: add a reader; keep it iff no writer holds or waits.
    #[inline]
    fn read_attempt(&self) -> bool {
        reader_may_enter_fast(self.cnts.fetch_add(READER, Ordering::Acquire))
    }

    #[inline]
    fn write_attempt(&self) -> bool {
        self.cnts
            .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// queued_read_lock_slowpath (process context).
    #[cold]
    fn lock_shared_slow(&self) {
        let mut wait = SpinWait::<P>::begin(Mode::Read);
        // Step 1: take back the fast path's reader, so it does not hold up a
        // waiting writer while we queue.
        self.cnts.fetch_sub(READER, Ordering::Relaxed);
        // Step 2: queue FIFO behind every earlier slow-path reader and writer.
        self.wait_lock.acquire(&mut wait);
        // Step 3: count ourselves in again and wait only for a holding writer.
        let mut cnts = self.cnts.fetch_add(READER, Ordering::Acquire);
        while !queued_reader_may_enter(cnts) {
            wait.poll();
            cnts = self.cnts.load(Ordering::Acquire);
        }
        // Step 4: let the next queued waiter go; a reader joins us at once.
        self.wait_lock.release();
        wait.granted();
    }

    /// queued_write_lock_slowpath.
    #[cold]
    fn lock_exclusive_slow(&self) {
        let mut wait = SpinWait::<P>::begin(Mode::Write);
        // Step 1: queue FIFO behind every earlier slow-path reader and writer.
        self.wait_lock.acquire(&mut wait);
        // Step 2: take it directly if nobody holds it.
        if !(writer_may_enter(self.cnts.load(Ordering::Relaxed)) && self.write_attempt()) {
            // Step 3: announce ourselves: from now on arriving readers queue.
            self.cnts.fetch_or(WAITING, Ordering::Relaxed);
            // Step 4: wait for the holders to drain, then turn WAITING into
            // LOCKED in one step.
            loop {
                let cnts = self.cnts.load(Ordering::Relaxed);
                if waiting_writer_may_enter(cnts)
                    && self
                        .cnts
                        .compare_exchange(WAITING, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    break;
                }
                wait.poll();
            }
        }
        // Step 5: holding the lock, let the queue move on.
        self.wait_lock.release();
        wait.granted();
    }
}

impl<P: Platform> KindInfo for Qrwlock<P> {
    const KIND: LockKind = LockKind::Qrwlock;
    const SHARED_READERS: bool = true;
    const HAS_DOWNGRADE: bool = false;
}

// SAFETY: LOCKED is set only from 0 or from exactly WAITING (no reader
// counted) and cleared only by its holder; a reader keeps its count only if it
// added it while no writer held (fast path: none held or waited; slow path:
// LOCKED clear after adding). Queued writers are serialised by wait_lock.
unsafe impl<P: Platform> RawRwLock for Qrwlock<P> {
    type ReadToken = ReadHold;
    type WriteToken = ();
    type Platform = P;

    fn new() -> Self {
        Qrwlock {
            cnts: P::AtomicU32::new(0),
            wait_lock: McsSpinlock::new(),
        }
    }

    /// read_lock: preemption off, then queued_read_lock.
    #[inline]
    fn lock_shared(&self) -> ReadHold {
        P::preempt_disable();
        if !self.read_attempt() {
            self.lock_shared_slow();
        }
        ReadHold::Shared(())
    }

    /// queued_read_trylock: only if no writer holds or waits.
    #[inline]
    fn try_lock_shared(&self) -> Option<ReadHold> {
        P::preempt_disable();
        if reader_may_enter_fast(self.cnts.load(Ordering::Relaxed)) {
            if self.read_attempt() {
                return Some(ReadHold::Shared(()));
            }
            self.cnts.fetch_sub(READER, Ordering::Relaxed);
        }
        P::preempt_enable();
        None
    }

    /// qrwlock has no critical-reader path: `lock_shared`, which queues
    /// behind a waiting writer.
    #[inline]
    fn lock_shared_critical(&self) -> ReadHold {
        self.lock_shared()
    }

    /// queued_read_unlock.
    #[inline]
    unsafe fn unlock_shared(&self, token: ReadHold) {
        match token {
            ReadHold::Shared(()) => {
                self.cnts.fetch_sub(READER, Ordering::Release);
                P::preempt_enable();
            }
            // SAFETY: a downgraded token is the caller's exclusive hold.
            ReadHold::Exclusive => unsafe { self.unlock_exclusive(()) },
        }
    }

    /// write_lock: preemption off, then queued_write_lock.
    #[inline]
    fn lock_exclusive(&self) {
        P::preempt_disable();
        if !self.write_attempt() {
            self.lock_exclusive_slow();
        }
    }

    /// queued_write_trylock.
    #[inline]
    fn try_lock_exclusive(&self) -> Option<()> {
        P::preempt_disable();
        let taken = writer_may_enter(self.cnts.load(Ordering::Relaxed)) && self.write_attempt();
        if !taken {
            P::preempt_enable();
        }
        taken.then_some(())
    }

    /// queued_write_unlock: the kernel stores 0 to the `wlocked` byte; here an
    /// RMW clears LOCKED, since readers' attempts share the word.
    #[inline]
    unsafe fn unlock_exclusive(&self, _: ()) {
        self.cnts.fetch_sub(LOCKED, Ordering::Release);
        P::preempt_enable();
    }

    /// qrwlock has no write-to-read downgrade: the hold stays exclusive.
    #[inline]
    unsafe fn downgrade(&self, _: ()) -> ReadHold {
        ReadHold::Exclusive
    }
}

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;

    #[test]
    fn fast_readers_stop_at_a_holding_or_waiting_writer() {
        assert!(reader_may_enter_fast(0));
        assert!(reader_may_enter_fast(3 * READER));
        assert!(!reader_may_enter_fast(LOCKED));
        // The fairness rule: readers hold it, a writer waits, a new reader queues.
        assert!(!reader_may_enter_fast(WAITING | (3 * READER)));
    }

    #[test]
    fn queued_readers_wait_only_for_a_holder() {
        assert!(queued_reader_may_enter(2 * READER));
        assert!(!queued_reader_may_enter(LOCKED | READER));
    }

    #[test]
    fn writers_enter_empty_or_from_waiting_alone() {
        assert!(writer_may_enter(0));
        assert!(!writer_may_enter(WAITING));
        assert!(waiting_writer_may_enter(WAITING));
        assert!(!waiting_writer_may_enter(WAITING | READER));
        assert!(!waiting_writer_may_enter(WAITING | LOCKED));
    }

    #[test]
    fn state_decodes_the_kernel_layout() {
        assert_eq!(
            QrwlockState::from_cnts(WAITING | (2 * READER)),
            QrwlockState {
                writer_locked: false,
                writer_waiting: true,
                readers: 2
            }
        );
    }

    #[test]
    fn failed_tries_and_downgrade_leave_a_clean_word() {
        let lock = <Qrwlock>::new();
        lock.lock_exclusive();
        assert!(lock.try_lock_shared().is_none());
        assert!(lock.try_lock_exclusive().is_none());
        // SAFETY: held just above.
        let token = unsafe { lock.downgrade(()) };
        assert!(lock.try_lock_shared().is_none());
        // SAFETY: the token came from this lock.
        unsafe { lock.unlock_shared(token) };
        assert_eq!(lock.cnts.load(Ordering::Relaxed), 0);
    }
}

#[cfg(all(test, shuttle))]
mod shuttle_tests {
    use super::Qrwlock;
    use crate::locks::model_check::{Op::*, check, roles};

    // Bound, for each check here: 2000 random + 2000 PCT (depth 3)
    // schedules, each at most model_check::MAX_STEPS steps; 2 acquisitions per thread, so a writer
    // queues behind readers and readers queue behind a waiting writer.
    #[test]
    fn writer_and_readers_exclude_and_all_finish() {
        check::<Qrwlock>(2000, roles(&[Write, Read, Read]));
    }

    // Two writers contend for wait_lock and WAITING; try paths race them.
    #[test]
    fn two_writers_with_try_and_downgrade() {
        check::<Qrwlock>(2000, roles(&[Write, Downgrade, TryRead, CriticalRead]));
    }
}
