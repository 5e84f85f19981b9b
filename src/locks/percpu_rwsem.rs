//! `percpu-rwsem`: percpu_rw_semaphore (kernel/locking/percpu-rwsem.c and
//! include/linux/percpu-rwsem.h as rewritten for v5.8: percpu_down_read,
//! __percpu_down_read_trylock, percpu_rwsem_wait, percpu_down_write,
//! percpu_up_write), sleeping on both sides.
//!
//! Readers: a reader counts itself in on its own CPU's counter and checks
//! `block`; no cache line is shared between readers on different CPUs, so
//! the read rate is not capped by one reader-count transfer per acquisition
//! as an ordinary rwsem's is. Where the platform knows the CPU (the
//! simulator) the counter is that CPU's (modulo [`SLOTS`]); natively the CPU
//! is unknown to user space, so it is the thread's own slot, threads numbered
//! in the order they first read-lock any percpu-rwsem (modulo [`SLOTS`]). A
//! reader that finds `block` set takes its count back, prods the writer and
//! sleeps in `waiters`, one FIFO with the writers. A release decrements the
//! counter of the CPU it runs on, so only the sum of the counters means
//! anything, as in the kernel (a reader may wake on another CPU, and a
//! waker counts a woken reader in on its own CPU).
//!
//! Writers pay: a writer first enters the [`RcuSync`] (the first writer after
//! a quiet spell sleeps one RCU grace period there, see `rcu_sync.rs`), then
//! takes `block` (or sleeps in `waiters` until an up_write grants it), then
//! sleeps until the readers inside have left (`writer`, the kernel's
//! rcuwait, which every reader release and every backed-out reader prods).
//! up_write clears `block`, grants the waiters at the head (readers until a
//! writer, a writer ending the batch, a failed grant ending it too) and
//! leaves the rcu_sync.
//!
//! What the model does differently, stated: the kernel's reader fast path
//! (rcu_sync idle) is a plain per-CPU increment with no barrier, safe
//! because the writer's grace period outlasts any reader that saw the idle
//! state with preemption disabled. User space cannot disable preemption, so
//! the grace period cannot give that guarantee to real threads. Every
//! reader here increments with a sequentially consistent RMW and then loads
//! `block`, and the writer's RMW on `block` precedes its loads of the
//! counters, so one of the two sees the other (Dekker), on every platform,
//! and the grace period is a cost, not a correctness argument. The reader's
//! cost is the same two accesses (its own line, and one read-mostly line)
//! the kernel's fast path makes (its own counter, the rcu_sync state).
//!
//! No downgrade (the hold stays exclusive) and no critical-reader path.
//!
//! # State
//! - `block` (usize, 0/1): a writer holds the lock or is draining readers;
//!   taken by an exchange, cleared by up_write.
//! - `slots[i]` (usize, each on its own cache line): increments minus
//!   decrements made on slot i, wrapping; their wrapping sum is the number of
//!   readers inside plus readers about to back out.
//! - `writer_waiting` (usize, 0/1): the block holder sleeps (or is about to)
//!   in `writer` until the sum is 0.
//!
//! Invariants: only the block holder drains, so `writer` has at most one
//! thread; a reader holds only if it counted itself in and then saw `block`
//! clear (or a waker did both on its behalf); a writer is granted only after
//! it (or its waker) took `block` and it then saw the sum at 0.

use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::raw::KindInfo;
use super::rcu_sync::RcuSync;
use super::read_hold::ReadHold;
use super::stats::{self, Event};
use super::waitq::{Mode, Pick, Req, Slot, WaitQueue, Woken};
use super::{LockKind, RawRwLock};
use crossbeam_utils::CachePadded;
use std::cell::Cell;

/// Reader counters per lock: the stand-in for nr_cpu_ids.
// 64: one counter per CPU for simulations of up to 64 CPUs and one per
// thread for native runs of up to 64 reader threads (torture and the
// benches use far fewer); beyond that CPUs or threads share a counter,
// which is still correct, just a shared line again. 64 x 128 B = 8 KiB per
// lock. Under shuttle, 4: one per model thread (at most 4), so a writer's
// scan stays short enough for the checker to see readers race it.
pub const SLOTS: usize = if cfg!(shuttle) { 4 } else { 64 };

/// The counter of CPU (or thread) number `n`.
pub fn slot_of(n: usize) -> usize {
    n % SLOTS
}

/// A reader that has counted itself in keeps its count iff no writer blocks.
pub fn reader_may_enter(blocked: bool) -> bool {
    !blocked
}

/// readers_active_check: the writer may enter once the modular sum of the
/// counters is 0 (a counter alone may be "negative").
pub fn readers_gone(counters: impl IntoIterator<Item = usize>) -> bool {
    counters.into_iter().fold(0usize, usize::wrapping_add) == 0
}

/// The lock's state (racy snapshot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PercpuState {
    /// A writer holds the lock or is draining readers.
    pub blocked: bool,
    /// The counters' sum: readers inside plus attempts about to back out.
    pub readers: usize,
    /// Counters that are not 0.
    pub busy_slots: usize,
}

/// The sleeping percpu_rw_semaphore. See the module doc.
pub struct PercpuRwsem<P: Platform = Native> {
    rss: RcuSync<P>,
    block: CachePadded<P::AtomicUsize>,
    writer_waiting: CachePadded<P::AtomicUsize>,
    /// sem->waiters: blocked readers and writers, FIFO.
    waiters: WaitQueue<P>,
    /// sem->writer: where the block holder sleeps until readers are gone.
    writer: WaitQueue<P>,
    slots: Box<[CachePadded<P::AtomicUsize>; SLOTS]>,
}

/// The caller's counter: its CPU's where the platform knows the CPU.
#[inline]
fn current_slot<P: Platform>() -> usize {
    slot_of(P::cpu().unwrap_or_else(thread_number))
}

/// The calling thread's number, in the order threads first read-lock any
/// percpu-rwsem (process-wide, as CPU numbers are).
#[cfg(not(shuttle))]
#[inline]
fn thread_number() -> usize {
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
    /// A snapshot of the state, for tests and reports.
    pub fn state(&self) -> PercpuState {
        let counts: [usize; SLOTS] = std::array::from_fn(|i| self.slots[i].load(Ordering::Relaxed));
        PercpuState {
            blocked: self.block.load(Ordering::Relaxed) != 0,
            readers: counts.iter().fold(0, |a, &b| a.wrapping_add(b)),
            busy_slots: counts.iter().filter(|&&n| n != 0).count(),
        }
    }

    /// Increments minus decrements on counter `slot` (racy snapshot).
    pub fn readers_in_slot(&self, slot: usize) -> usize {
        self.slots[slot].load(Ordering::Relaxed)
    }

    /// Readers and writers asleep in `waiters` now.
    pub fn queued(&self) -> usize {
        self.waiters.len()
    }

    /// Whether the block holder sleeps waiting for readers now.
    pub fn writer_draining(&self) -> bool {
        !self.writer.is_empty()
    }

    /// The rcu_sync, for tests and reports (its phase).
    pub fn rcu_sync(&self) -> &RcuSync<P> {
        &self.rss
    }

    /// __percpu_down_read_trylock on counter `slot`: count in, keep it iff
    /// no writer blocks; else take it back and prod the writer.
    #[inline]
    fn read_trylock(&self, slot: usize) -> bool {
        if self.count_in(slot) {
            return true;
        }
        self.prod_writer();
        false
    }

    /// Count in on `slot` and keep it iff `block` is clear; a failed
    /// attempt is taken back (the caller prods the writer).
    #[inline]
    fn count_in(&self, slot: usize) -> bool {
        self.slots[slot].fetch_add(1, Ordering::SeqCst);
        if reader_may_enter(self.block.load(Ordering::SeqCst) != 0) {
            return true;
        }
        self.slots[slot].fetch_sub(1, Ordering::SeqCst);
        false
    }

    /// rcuwait_wake_up(&sem->writer): wake the draining writer, if any, to
    /// look at the counters again.
    #[inline]
    fn prod_writer(&self) {
        if self.writer_waiting.load(Ordering::SeqCst) != 0 {
            self.writer
                .wake(Slot::Main, |_| Pick::Take, |_| Woken::Retry);
        }
    }

    /// __percpu_down_write_trylock: `block` if nobody has it.
    #[inline]
    fn write_trylock(&self) -> bool {
        self.block.load(Ordering::Relaxed) == 0 && self.block.swap(1, Ordering::SeqCst) == 0
    }

    /// readers_active_check.
    #[inline]
    fn drained(&self) -> bool {
        readers_gone(self.slots.iter().map(|s| s.load(Ordering::SeqCst)))
    }

    /// __percpu_down_read's blocked case: percpu_rwsem_wait as a reader.
    #[cold]
    fn lock_shared_slow(&self) {
        stats::count(Event::ContendedRead, 1);
        let t0 = P::now_ns();
        loop {
            // Step 1: sleep in the FIFO while a writer blocks; the up_write
            // that clears `block` counts us in before waking us. (The
            // kernel's queue lock covers a full trylock here; ours cannot,
            // since a failed one prods the writer through the parking
            // functions, so it sleeps on `block` alone and retries outside.)
            let woken = self.waiters.park(Slot::Main, Req::at(Mode::Read, t0), || {
                self.block.load(Ordering::SeqCst) != 0
            });
            // Step 2: granted by the waker, or `block` was clear: try again.
            if woken == Some(Woken::Granted) || self.read_trylock(current_slot::<P>()) {
                break;
            }
        }
        stats::note_wait(P::now_ns().saturating_sub(t0));
    }

    /// percpu_down_write past its trivial case: whatever is still to be
    /// waited for (`block`, readers), with the whole wait noted, the grace
    /// period `gp_ns` already waited included.
    #[cold]
    fn lock_exclusive_slow(&self, gp_ns: u64, got_block: bool) {
        let t0 = P::now_ns();
        let req = Req::at(Mode::Write, t0.saturating_sub(gp_ns));
        let mut contended = false;
        // Step 1: `block`, or sleep in the FIFO until an up_write grants it.
        if !got_block {
            let woken = self.waiters.park(Slot::Main, req, || !self.write_trylock());
            contended |= woken.is_some();
        }
        // Step 2: sleep until the readers inside have left.
        if !self.drained() {
            self.drain(req);
            contended = true;
        }
        if contended {
            stats::count(Event::ContendedWrite, 1);
        }
        stats::note_wait(gp_ns + P::now_ns().saturating_sub(t0));
    }

    /// rcuwait_wait_event(&sem->writer, readers_active_check(sem)).
    #[cold]
    fn drain(&self, req: Req) {
        // Before the counters are read: a reader that leaves after our read
        // of its counter then sees the flag and wakes us (Dekker).
        self.writer_waiting.store(1, Ordering::SeqCst);
        while !self.drained() {
            self.writer.park(Slot::Main, req, || !self.drained());
        }
        self.writer_waiting.store(0, Ordering::Relaxed);
    }

    /// percpu_up_write: clear `block`, grant the waiters at the head, leave
    /// the rcu_sync.
    #[inline]
    fn release_exclusive(&self) {
        self.block.store(0, Ordering::Release);
        self.wake_waiters();
        self.rss.exit();
    }

    /// __wake_up(&sem->waiters, .., 1, sem) with percpu_rwsem_wake_function:
    /// grant readers until one writer is granted or a grant fails (a new
    /// writer took `block` first).
    fn wake_waiters(&self) {
        let (stopped, readers, writer, prod) = (
            Cell::new(false),
            Cell::new(0u64),
            Cell::new(false),
            Cell::new(false),
        );
        let slot = current_slot::<P>();
        self.waiters.wake(
            Slot::Main,
            |req| {
                if stopped.get() {
                    return Pick::Stop;
                }
                let granted = match req.mode {
                    Mode::Read => {
                        // Counted in on the waker's CPU, as the kernel does.
                        let ok = self.count_in(slot);
                        prod.set(!ok);
                        ok
                    }
                    Mode::Write => self.write_trylock(),
                };
                stopped.set(!granted || req.mode == Mode::Write);
                match (granted, req.mode) {
                    (true, Mode::Read) => readers.set(readers.get() + 1),
                    (true, Mode::Write) => writer.set(true),
                    (false, _) => {}
                }
                if granted { Pick::Take } else { Pick::Stop }
            },
            |_| Woken::Granted,
        );
        // Outside the queue lock: a failed reader grant prods the writer.
        if prod.get() {
            self.prod_writer();
        }
        if readers.get() > 0 {
            stats::count(Event::WakeBatch, 1);
            stats::count(Event::ReaderWoken, readers.get());
        }
        if writer.get() {
            stats::count(Event::Handoff, 1);
        }
    }
}

impl<P: Platform> KindInfo for PercpuRwsem<P> {
    const KIND: LockKind = LockKind::PercpuRwsem;
    const SHARED_READERS: bool = true;
    const HAS_DOWNGRADE: bool = false;
}

// SAFETY: writers exclude each other through `block` (an exchange from 0,
// by the writer or by a waker on its behalf). A writer is granted only after
// it held `block` and then saw the counters' sum at 0; a reader holds only
// after counting in and then seeing `block` clear (or a waker doing both for
// it). All four accesses are SeqCst, so a reader and a writer cannot both
// miss each other.
unsafe impl<P: Platform> RawRwLock for PercpuRwsem<P> {
    /// A shared hold, or the downgraded writer's exclusive hold.
    type ReadToken = ReadHold;
    type WriteToken = ();
    type Platform = P;

    fn new() -> Self {
        PercpuRwsem {
            rss: RcuSync::new(),
            block: CachePadded::new(P::AtomicUsize::new(0)),
            writer_waiting: CachePadded::new(P::AtomicUsize::new(0)),
            waiters: WaitQueue::new(),
            writer: WaitQueue::new(),
            slots: Box::new(std::array::from_fn(|_| {
                CachePadded::new(P::AtomicUsize::new(0))
            })),
        }
    }

    /// percpu_down_read.
    #[inline]
    fn lock_shared(&self) -> ReadHold {
        P::might_sleep();
        if !self.read_trylock(current_slot::<P>()) {
            self.lock_shared_slow();
        }
        ReadHold::Shared(())
    }

    /// percpu_down_read_trylock.
    #[inline]
    fn try_lock_shared(&self) -> Option<ReadHold> {
        self.read_trylock(current_slot::<P>())
            .then_some(ReadHold::Shared(()))
    }

    /// No critical-reader path: `lock_shared`.
    #[inline]
    fn lock_shared_critical(&self) -> ReadHold {
        self.lock_shared()
    }

    /// percpu_up_read: count out on the CPU we run on, prod a draining writer.
    #[inline]
    unsafe fn unlock_shared(&self, token: ReadHold) {
        match token {
            ReadHold::Shared(()) => {
                self.slots[current_slot::<P>()].fetch_sub(1, Ordering::SeqCst);
                self.prod_writer();
            }
            ReadHold::Exclusive => self.release_exclusive(),
        }
    }

    /// percpu_down_write: rcu_sync_enter, `block`, then wait for readers.
    /// With no grace period to wait, nobody in the way and no reader inside,
    /// it is one rcu_sync update, one exchange and one read of each counter.
    #[inline]
    fn lock_exclusive(&self) {
        P::might_sleep();
        let gp_ns = self.rss.enter().waited_ns();
        let got_block = self.write_trylock();
        if !(gp_ns == 0 && got_block && self.drained()) {
            self.lock_exclusive_slow(gp_ns, got_block);
        }
    }

    /// A write trylock (the kernel has none): only if no grace period is
    /// needed, nobody holds `block` and no reader is inside; everything it
    /// took is given back otherwise.
    #[inline]
    fn try_lock_exclusive(&self) -> Option<()> {
        if !self.rss.try_enter() {
            return None;
        }
        if !self.write_trylock() {
            self.rss.exit();
            return None;
        }
        if !self.drained() {
            self.release_exclusive();
            return None;
        }
        Some(())
    }

    #[inline]
    unsafe fn unlock_exclusive(&self, _: ()) {
        self.release_exclusive()
    }

    /// percpu_rw_semaphore has no downgrade: the hold stays exclusive.
    #[inline]
    unsafe fn downgrade(&self, _: ()) -> ReadHold {
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
    fn only_the_modular_sum_of_the_counters_counts() {
        assert!(readers_gone([0, 0, 0]));
        assert!(!readers_gone([0, 1, 0]));
        // A reader counted in on one CPU and out on another.
        assert!(readers_gone([1, usize::MAX, 0]));
        assert!(!readers_gone([2, usize::MAX]));
        assert!(reader_may_enter(false) && !reader_may_enter(true));
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
        let slot = current_slot::<Native>();
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
    fn a_failed_write_try_gives_back_what_it_took() {
        let lock = <PercpuRwsem>::new();
        // No grace period waited yet: a trylock cannot wait one.
        assert!(lock.try_lock_exclusive().is_none());
        lock.lock_exclusive();
        // SAFETY: held just above.
        unsafe { lock.unlock_exclusive(()) };
        let read = lock.lock_shared();
        assert!(lock.try_lock_exclusive().is_none(), "a reader is inside");
        assert!(!lock.state().blocked);
        assert_eq!(lock.rcu_sync().writers(), 0);
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
    // schedules, each at most model_check::MAX_STEPS steps. Readers sit in
    // different slots (one per model thread), so the writer's drain crosses
    // slots and the Dekker pairing of block and counters is exercised; the
    // model clock makes rcu_sync's exit phase end quickly, so writers also
    // wait for each other's grace period.
    #[test]
    fn writer_and_readers_exclude_and_all_finish() {
        check::<PercpuRwsem>(2000, roles(&[Write, Read, Read]));
    }

    // Two writers serialise on `block`; blocked readers sleep with them.
    #[test]
    fn two_writers_with_try_and_downgrade() {
        check::<PercpuRwsem>(2000, roles(&[Write, Downgrade, TryRead, Read]));
    }

    // Two writers entering the rcu_sync together.
    #[test]
    fn writers_share_a_grace_period() {
        check::<PercpuRwsem>(2000, roles(&[Write, Write, Read]));
    }
}
