//! `percpu-rwsem`: percpu_rw_semaphore (kernel/locking/percpu-rwsem.c since
//! 5.8: percpu_down_read, __percpu_down_read_trylock, percpu_down_write,
//! percpu_up_write), with BRAVO-like hashed reader slots.
//!
//! A reader touches only its own cache-padded slot: it counts itself in there
//! and then checks `block`; no cache line is shared between readers of
//! different slots: the read rate of an ordinary rwlock is capped near one
//! reader-count transfer per acquisition, whatever the number of readers, and
//! this one is not. The kernel has one slot per CPU; here a reader's slot is
//! its CPU modulo [`SLOTS`] where the platform knows the CPU (the simulator),
//! else its thread number modulo [`SLOTS`] (BRAVO's visible-reader table, Dice
//! and Kogan 2019, hashes by thread likewise); each read token is its slot.
//!
//! A writer pays instead: it serialises with other writers and sets `block`,
//! then waits until every slot has drained. The kernel's writer also waits
//! for an RCU grace period (rcu_sync_enter) because its readers skip the
//! memory barrier while no writer is around; here every reader's count-in is
//! a sequentially consistent RMW followed by a sequentially consistent load of
//! `block`, and the writer's RMW that sets `block` precedes its loads of the
//! slots, so one of the two always sees the other (Dekker) and no grace period
//! is needed. Readers that see `block` take their count back (waking nobody:
//! the writer polls) and queue.
//!
//! The kernel's waiters sleep on `sem->waiters`, one FIFO queue for readers
//! and writers; here they spin in one FIFO queue, `queue` (a [`McsSpinlock`]).
//! A writer holds `queue` for its whole hold, so writers are serialised and a
//! reader that saw `block` is admitted, in arrival order, right after the
//! writer it queued behind releases. New readers still enter directly
//! whenever `block` is clear, like the kernel's trylock before queueing.
//! `block` is the queue word's `FLAGGED` bit, set by the writer's grant
//! ([`Hold::Flagged`]) and cleared by its release, so an uncontended write
//! hold costs two atomic RMWs and one read of every slot.
//!
//! percpu_rw_semaphore has no downgrade: `downgrade` keeps the hold exclusive.
//! Nor a critical-reader path: `lock_shared_critical` is `lock_shared`.
//!
//! # State
//! - `queue` (the [`McsSpinlock`] word: tail, `FLAGGED`, `LOCKED`): held
//!   [`Hold::Flagged`] by the writer for its whole hold, drain included, and
//!   [`Hold::Plain`] briefly by each queued reader while it counts itself in.
//!   `FLAGGED` is `block` (the kernel's `sem->block`): a writer holds the lock
//!   or is draining readers.
//! - `slots[i]` (usize, each on its own cache line): readers counted in
//!   through slot `i`, holders plus attempts about to be taken back.
//!
//! Invariants: `block` is set only while a writer holds `queue`; a reader
//! holds only if it counted itself in and then saw no `block` (or counted
//! itself in while holding `queue` plain, when no writer can hold); a writer
//! is granted only after its grant set `block` and it then saw every slot at 0.

use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::qspinlock::{Hold, McsSpinlock};
use super::raw::KindInfo;
use super::read_hold::ReadHold;
use super::spin_wait::SpinWait;
use super::{LockKind, RawRwLock};
use crate::mode::Mode;
use crossbeam_utils::CachePadded;

/// Reader slots per lock: the stand-in for nr_cpu_ids.
// 16 covers this project's benches (2 reader threads) and torture defaults (10
// readers; writers and downgraders take no slot) without two threads sharing
// a slot, at 16 x 128 B = 2 KiB per lock. More threads share slots: still
// correct, just a shared line again. Under shuttle, 4: one slot per model
// thread (at most 4); a longer scan makes the writer's drain so long that the
// checker rarely sees a reader race it.
pub const SLOTS: usize = if cfg!(shuttle) { 4 } else { 16 };

/// The slot of the thread numbered `thread` (threads are numbered in the
/// order they first read-lock any percpu-rwsem).
pub fn slot_of(thread: usize) -> usize {
    thread % SLOTS
}

/// A reader that has counted itself in keeps its count iff no writer blocks.
pub fn reader_may_enter(blocked: bool) -> bool {
    !blocked
}

/// A writer that has set `block` may enter once every slot has drained.
pub fn writer_may_enter(slot_counts: impl IntoIterator<Item = usize>) -> bool {
    slot_counts.into_iter().all(|n| n == 0)
}

/// The lock's state, summed (racy snapshot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PercpuState {
    /// A writer holds the lock or is draining readers.
    pub blocked: bool,
    /// Reader counts over all slots (holders plus attempts).
    pub readers: usize,
    /// Slots with a non-zero count.
    pub busy_slots: usize,
}

/// The per-slot percpu_rw_semaphore.
#[derive(Debug)]
pub struct PercpuRwsem<P: Platform = Native> {
    /// The FIFO of writers and blocked readers, and `block` (its FLAGGED bit):
    /// read by every reader on every acquisition. Padded off the slots.
    queue: CachePadded<McsSpinlock<P>>,
    slots: Box<[CachePadded<P::AtomicUsize>; SLOTS]>,
}

/// The caller's slot: its CPU's where the platform knows the CPU.
#[inline]
fn current_slot<P: Platform>() -> usize {
    slot_of(P::cpu().unwrap_or_else(thread_number))
}

/// The calling thread's number, in the order threads first read-lock any
/// percpu-rwsem (process-wide, as CPU numbers are).
#[cfg(not(shuttle))]
#[inline]
fn thread_number() -> usize {
    use std::cell::Cell;
    use std::sync::atomic::AtomicUsize;
    thread_local! {
        static NUMBER: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    static THREADS: AtomicUsize = AtomicUsize::new(0);
    NUMBER.with(|n| {
        if n.get() == usize::MAX {
            n.set(THREADS.fetch_add(1, Ordering::Relaxed));
        }
        n.get()
    })
}

/// The calling model thread's number: shuttle runs every model thread on one
/// OS thread, so its task number stands in for the thread number.
#[cfg(shuttle)]
fn thread_number() -> usize {
    usize::from(shuttle::current::me())
}

impl<P: Platform> PercpuRwsem<P> {
    /// A snapshot of the state, for tests and reports (racy by nature).
    pub fn state(&self) -> PercpuState {
        let counts: [usize; SLOTS] = std::array::from_fn(|i| self.slots[i].load(Ordering::Relaxed));
        PercpuState {
            blocked: self.queue.state().flagged,
            readers: counts.iter().sum(),
            busy_slots: counts.iter().filter(|&&n| n != 0).count(),
        }
    }

    /// The internal FIFO, for tests and reports (who is queued).
    pub fn wait_queue(&self) -> &McsSpinlock<P> {
        &self.queue
    }

    /// Readers counted in through `slot` (racy snapshot).
    pub fn readers_in_slot(&self, slot: usize) -> usize {
        self.slots[slot].load(Ordering::Relaxed)
    }

    /// __percpu_down_read_trylock: count in, keep it iff no writer blocks.
    #[inline]
    fn read_attempt(&self, slot: usize) -> bool {
        self.slots[slot].fetch_add(1, Ordering::SeqCst);
        if reader_may_enter(self.queue.is_flagged()) {
            return true;
        }
        self.take_back(slot);
        false
    }

    /// A blocked reader takes its count back so the writer's drain can end.
    #[cold]
    fn take_back(&self, slot: usize) {
        self.slots[slot].fetch_sub(1, Ordering::Release);
    }

    /// __percpu_down_read's blocked case.
    #[cold]
    fn lock_shared_slow(&self, slot: usize) {
        let mut wait = SpinWait::<P>::begin(Mode::Read);
        // Step 1: queue FIFO behind the writer (which holds `queue` until it
        // releases) and everyone who queued before us; hold it plain.
        self.queue.acquire(&mut wait, Hold::Plain);
        // Step 2: no writer can hold or drain while we hold `queue`, and the
        // last one's release cleared `block`: count ourselves in.
        self.slots[slot].fetch_add(1, Ordering::SeqCst);
        // Step 3: let the next queued reader or writer go.
        self.queue.release(Hold::Plain);
        wait.granted();
    }

    /// readers_active_check, once over every slot.
    #[inline]
    fn drained(&self) -> bool {
        writer_may_enter(self.slots.iter().map(|s| s.load(Ordering::SeqCst)))
    }

    /// percpu_down_write once `queue` is held flagged (`block` set): poll each slot
    /// until it is empty. A slot seen empty stays free of granted readers,
    /// since any later reader sees `block` (the Dekker pairing above).
    #[cold]
    fn drain_slow(&self, mut wait: SpinWait<P>) {
        for slot in self.slots.iter() {
            while slot.load(Ordering::SeqCst) != 0 {
                wait.poll();
            }
        }
        wait.granted();
    }

    /// percpu_down_write with `queue` contended.
    #[cold]
    fn lock_exclusive_slow(&self) {
        let mut wait = SpinWait::<P>::begin(Mode::Write);
        // Step 1: queue FIFO behind earlier writers and blocked readers; our
        // grant sets `block`, so from then on new readers queue behind us.
        self.queue.acquire(&mut wait, Hold::Flagged);
        // Step 2: wait for the readers inside to leave.
        self.drain_slow(wait);
    }

    /// percpu_up_write: unblock readers and let the queue move on, in one RMW.
    #[inline]
    fn release_exclusive(&self) {
        self.queue.release(Hold::Flagged);
    }
}

impl<P: Platform> KindInfo for PercpuRwsem<P> {
    const KIND: LockKind = LockKind::PercpuRwsem;
    const SHARED_READERS: bool = true;
    const HAS_DOWNGRADE: bool = false;
}

// SAFETY: writers are serialised by `queue`, held for the whole write hold.
// A writer is granted only after its grant set `block` and it then saw every
// slot at 0; a reader holds only after counting in and then seeing no `block`
// (or counting in under `queue`, when no writer holds). All four accesses are
// SeqCst, so a reader and a writer cannot both miss each other.
unsafe impl<P: Platform> RawRwLock for PercpuRwsem<P> {
    /// The slot the reader counted itself in through (or the downgraded
    /// writer's exclusive hold).
    type ReadToken = ReadHold<usize>;
    type WriteToken = ();
    type Platform = P;

    fn new() -> Self {
        PercpuRwsem {
            queue: CachePadded::new(McsSpinlock::new()),
            slots: Box::new(std::array::from_fn(|_| {
                CachePadded::new(P::AtomicUsize::new(0))
            })),
        }
    }

    /// percpu_down_read.
    #[inline]
    fn lock_shared(&self) -> ReadHold<usize> {
        P::might_sleep();
        let slot = current_slot::<P>();
        if !self.read_attempt(slot) {
            self.lock_shared_slow(slot);
        }
        ReadHold::Shared(slot)
    }

    /// percpu_down_read_trylock.
    #[inline]
    fn try_lock_shared(&self) -> Option<ReadHold<usize>> {
        let slot = current_slot::<P>();
        self.read_attempt(slot).then_some(ReadHold::Shared(slot))
    }

    /// No critical-reader path: `lock_shared`.
    #[inline]
    fn lock_shared_critical(&self) -> ReadHold<usize> {
        self.lock_shared()
    }

    /// percpu_up_read: leave through the slot we came in by.
    #[inline]
    unsafe fn unlock_shared(&self, token: ReadHold<usize>) {
        match token {
            ReadHold::Shared(slot) => {
                self.slots[slot].fetch_sub(1, Ordering::Release);
            }
            ReadHold::Exclusive => self.release_exclusive(),
        }
    }

    /// percpu_down_write. Uncontended it is one CAS (taking `queue` and setting
    /// `block`) and one read of every slot: the revocation cost grows with SLOTS.
    #[inline]
    fn lock_exclusive(&self) {
        P::might_sleep();
        if !self.queue.try_take(Hold::Flagged) {
            return self.lock_exclusive_slow();
        }
        if !self.drained() {
            self.drain_slow(SpinWait::begin(Mode::Write));
        }
    }

    /// A write trylock (the kernel has none): only if no writer queues and
    /// no reader is inside; otherwise readers blocked meanwhile are released.
    #[inline]
    fn try_lock_exclusive(&self) -> Option<()> {
        let taken = self.queue.try_take(Hold::Flagged)
            && (self.drained() || {
                self.release_exclusive();
                false
            });
        taken.then_some(())
    }

    #[inline]
    unsafe fn unlock_exclusive(&self, _: ()) {
        self.release_exclusive()
    }

    /// percpu_rw_semaphore has no downgrade: the hold stays exclusive.
    #[inline]
    unsafe fn downgrade(&self, _: ()) -> ReadHold<usize> {
        ReadHold::Exclusive
    }
}

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;

    #[test]
    fn consecutive_threads_get_distinct_slots_until_they_wrap() {
        let slots: Vec<usize> = (0..SLOTS).map(slot_of).collect();
        let mut dedup = slots.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(dedup.len(), SLOTS);
        assert_eq!(slot_of(SLOTS + 3), slot_of(3));
    }

    #[test]
    fn readers_enter_unless_blocked_and_writers_wait_for_every_slot() {
        assert!(reader_may_enter(false));
        assert!(!reader_may_enter(true));
        assert!(writer_may_enter([0, 0, 0]));
        assert!(!writer_may_enter([0, 1, 0]));
    }

    #[test]
    fn slots_are_cache_padded_apart() {
        assert!(std::mem::size_of::<CachePadded<std::sync::atomic::AtomicUsize>>() >= 64);
    }

    #[test]
    fn a_thread_reads_through_one_slot_and_leaves_it_clean() {
        let lock = <PercpuRwsem>::new();
        let first = lock.lock_shared();
        let second = lock.lock_shared();
        assert_eq!(first, second, "one thread, one slot");
        let ReadHold::Shared(slot) = first else {
            panic!("a plain read is shared")
        };
        assert_eq!(lock.readers_in_slot(slot), 2);
        assert_eq!(lock.state().busy_slots, 1);
        // SAFETY: both tokens came from this lock.
        unsafe {
            lock.unlock_shared(first);
            lock.unlock_shared(second);
        }
        assert_eq!(lock.state().readers, 0);
    }

    #[test]
    fn failed_write_try_unblocks_readers() {
        let lock = <PercpuRwsem>::new();
        let read = lock.lock_shared();
        assert!(lock.try_lock_exclusive().is_none());
        assert!(!lock.state().blocked);
        assert!(!lock.wait_queue().state().locked);
        // SAFETY: the token came from this lock.
        unsafe { lock.unlock_shared(read) };
        assert!(lock.try_lock_exclusive().is_some());
        assert!(lock.try_lock_shared().is_none());
    }
}

#[cfg(all(test, shuttle))]
mod shuttle_tests {
    use super::PercpuRwsem;
    use crate::locks::model_check::{Op::*, check, roles};

    // Bound, for each check here: 2000 random + 2000 PCT (depth 3)
    // schedules, each at most model_check::MAX_STEPS steps. Readers sit in different slots (one per
    // model thread), so the writer's drain crosses slots and the Dekker
    // pairing of block and slot is exercised.
    #[test]
    fn writer_and_readers_exclude_and_all_finish() {
        check::<PercpuRwsem>(2000, roles(&[Write, Read, Read]));
    }

    // Two writers serialise on the queue; blocked readers queue with them.
    #[test]
    fn two_writers_with_try_and_downgrade() {
        check::<PercpuRwsem>(2000, roles(&[Write, Downgrade, TryRead, Read]));
    }
}
