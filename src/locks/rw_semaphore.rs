//! The reader side the rw_semaphores since v3.10 share, over the writer-side
//! [`Core`] (`stealing.rs`): one generic lock, [`RwSemaphore`], that the
//! `rwsem-xadd` and `rwsem` kinds instantiate with their era's [`Era`].
//!
//! Reader fast path, as both eras have it: one unconditional atomic add of
//! a reader to the count, kept if the count shows no writer, no waiter and
//! no reservation (rwsem-xadd's `atomic_long_inc_return` in __down_read,
//! today's `rwsem_read_trylock`). Readers never fail it because of other
//! readers, so reader-only contention costs one RMW per acquisition and no
//! slow path. An add that fails is taken back in the slow path, exactly as
//! an up_read of a hold never used (the last one out wakes the waiters).
//!
//! Slow path: a reader first keeps its add if its era lets it in anyway
//! (down_read_critical beside other readers; today's reader lock stealing on
//! a free, unreserved lock), otherwise takes it back and queues, under the
//! queue lock entering instead if the lock is open for it by then (rwsem-xadd
//! v4.15+ and today: an empty queue and no writer). Queued readers are
//! granted by a waker, in the era's batch. A writer's slow path, the wakes
//! and downgrade are the Core's.
//!
//! State word and invariants: `stealing.rs`. READ_FAILED_MASK adds FIRST_OUT
//! to the kernel's mask, because an out-of-queue first writer is still a
//! waiter.

use super::platform::{AtomicInt, Ordering, Platform};
use super::raw::KindInfo;
use super::stats::{self, Event};
use super::stealing::{
    self, Core, FIRST_OUT, FIRST_PARKED, HANDOFF, LOCK_MASK, Policy, READER_BIAS, WAITERS,
    WRITER_LOCKED,
};
use super::waitq::{Mode, Req, Slot, WakeType, Woken};
use super::{LockKind, RawRwLock};

/// The reader fast path fails on any of these (rwsem.c RWSEM_READ_FAILED_MASK
/// plus FIRST_OUT).
pub const READ_FAILED_MASK: usize = WRITER_LOCKED | WAITERS | HANDOFF | FIRST_OUT;

/// One era of the rw_semaphore: its writer-side [`Policy`] and what its
/// readers may do.
pub trait Era: Policy {
    /// The CLI kind.
    const KIND: LockKind;
    /// Reader lock stealing (v5.11): a slow-path reader takes a free,
    /// unreserved lock even though others queue.
    const READER_STEALS: bool;
}

/// How a reader got in without queuing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// Nobody waits and no writer holds: the fast path's condition.
    Fast,
    /// down_read_critical: readers hold, so it joins them past the waiters.
    Critical,
    /// The lock is free and not reserved: reader lock stealing.
    Steal,
}

/// What a reader does on `state` (which does not count it): `Some(entry)`
/// to enter, `None` to queue. `critical` for down_read_critical; `steals`
/// for an era with reader lock stealing.
pub fn reader_entry(state: usize, critical: bool, steals: bool) -> Option<Entry> {
    if state & READ_FAILED_MASK == 0 {
        Some(Entry::Fast)
    } else if critical && stealing::reader_owned(state) {
        Some(Entry::Critical)
    } else if steals && state & (LOCK_MASK | HANDOFF) == 0 {
        Some(Entry::Steal)
    } else {
        None
    }
}

/// Whether a reader whose fast-path add failed may keep it, given the count
/// `with_us` that its add returned (its own reader included).
pub fn keeps_failed_add(with_us: usize, critical: bool, steals: bool) -> Option<Entry> {
    reader_entry(with_us - READER_BIAS, critical, steals).filter(|&e| e != Entry::Fast)
}

/// What a reader refused entry does in [`RwSemaphore::enter_or`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refused {
    GiveUp,
    /// Set WAITERS: only ever from a park's validate, which then parks.
    MarkWaiting,
}

/// A reader-writer semaphore of era `E`. See the module doc.
pub struct RwSemaphore<P: Platform, E: Era> {
    core: Core<P, E>,
}

impl<P: Platform, E: Era> RwSemaphore<P, E> {
    /// Threads parked on this lock now.
    pub fn queued(&self) -> usize {
        self.core.queue().len()
    }

    /// Readers counted now (holders, and failed adds about to be taken back).
    pub fn readers(&self) -> usize {
        stealing::readers(self.core.state().load(Ordering::Relaxed))
    }

    /// Whether a writer holds it now.
    pub fn write_locked(&self) -> bool {
        self.core.state().load(Ordering::Relaxed) & WRITER_LOCKED != 0
    }

    /// Whether a timed-out spin on readers made it non-spinnable.
    pub fn nonspinnable(&self) -> bool {
        self.core.state().load(Ordering::Relaxed) & stealing::NONSPINNABLE != 0
    }

    /// The fast path: add a reader, keep it unless the count says otherwise.
    /// Returns the count with us in it when it failed.
    #[inline]
    fn read_fast(&self) -> Result<(), usize> {
        let with_us = self.core.state().fetch_add(READER_BIAS, Ordering::Acquire) + READER_BIAS;
        if with_us & READ_FAILED_MASK == 0 {
            Ok(())
        } else {
            Err(with_us)
        }
    }

    /// up_read, also of a failed add: the last reader out wakes the first
    /// waiter.
    #[inline]
    fn release_read(&self) {
        let new = self.core.state().fetch_sub(READER_BIAS, Ordering::Release) - READER_BIAS;
        if new & LOCK_MASK == 0 && new & (WAITERS | FIRST_PARKED) != 0 {
            self.core.wake();
        }
    }

    /// Enter if [`reader_entry`] allows; otherwise do as `refused` says.
    /// Returns how it entered and the state it entered from.
    fn enter_or(&self, critical: bool, refused: Refused) -> Option<(Entry, usize)> {
        let state = self.core.state();
        let mut s = state.load(Ordering::Relaxed);
        loop {
            let (new, entry) = match reader_entry(s, critical, E::READER_STEALS) {
                Some(e) => (s + READER_BIAS, Some(e)),
                None if refused == Refused::MarkWaiting => (s | WAITERS, None),
                None => return None,
            };
            match state.compare_exchange_weak(s, new, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return entry.map(|e| (e, s)),
                Err(now) => s = now,
            }
        }
    }

    /// The read slow path, entered with the fast path's failed add in the
    /// count (`with_us`).
    #[cold]
    fn lock_shared_slow(&self, critical: bool, with_us: usize) {
        stats::count(Event::ContendedRead, 1);
        let t0 = P::now_ns();
        // Step 1: keep the add if the era lets this reader in anyway;
        // otherwise take it back (Step 2), then enter or queue under the
        // queue lock (Step 3).
        let entered = match keeps_failed_add(with_us, critical, E::READER_STEALS) {
            Some(e) => Some((e, with_us - READER_BIAS)),
            None => {
                self.release_read();
                self.enter_or(critical, Refused::GiveUp).or_else(|| {
                    let mut entered = None;
                    let woken = self
                        .core
                        .queue()
                        .park(Slot::Main, Req::at(Mode::Read, t0), || {
                            entered = self.enter_or(critical, Refused::MarkWaiting);
                            entered.is_none()
                        });
                    debug_assert!(woken.is_none() || woken == Some(Woken::Granted));
                    entered
                })
            }
        };
        match entered {
            Some((Entry::Critical, _)) => stats::count(Event::CriticalPass, 1),
            Some((Entry::Steal, s)) => {
                stats::count(Event::Steal, 1);
                // The first reader in wakes the readers queued at the head.
                if s & WAITERS != 0 && s & FIRST_OUT == 0 {
                    self.core.wake_queue(WakeType::ReadOwned);
                }
            }
            // Fast-path condition on a retry, or granted by a waker.
            Some((Entry::Fast, _)) | None => {}
        }
        stats::note_wait(P::now_ns().saturating_sub(t0));
    }

    #[inline]
    fn lock_read(&self, critical: bool) {
        P::might_sleep();
        if let Err(with_us) = self.read_fast() {
            self.lock_shared_slow(critical, with_us);
        }
    }
}

impl<P: Platform, E: Era> KindInfo for RwSemaphore<P, E> {
    const KIND: LockKind = E::KIND;
    const SHARED_READERS: bool = true;
    const HAS_DOWNGRADE: bool = true;
}

// SAFETY: writers exclude everyone: WRITER_LOCKED is set only by a CAS from a
// state without holders (or by a waker granting a parked writer, same CAS);
// a reader keeps its count only if WRITER_LOCKED was clear when it was added
// (the fast path's check of the add's result, or a CAS that saw it clear),
// and tokens come only from those successful acquisitions.
unsafe impl<P: Platform, E: Era> RawRwLock for RwSemaphore<P, E> {
    type ReadToken = ();
    type WriteToken = ();
    type Platform = P;

    fn new() -> Self {
        RwSemaphore { core: Core::new() }
    }

    /// down_read: might_sleep(), then the fast path.
    #[inline]
    fn lock_shared(&self) {
        self.lock_read(false);
    }

    /// down_read_trylock: fails whenever anyone waits. A CAS loop, as
    /// rwsem.c's __down_read_trylock, so a failure leaves no trace.
    #[inline]
    fn try_lock_shared(&self) -> Option<()> {
        let state = self.core.state();
        let mut s = state.load(Ordering::Relaxed);
        while s & READ_FAILED_MASK == 0 {
            match state.compare_exchange_weak(
                s,
                s + READER_BIAS,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(()),
                Err(now) => s = now,
            }
        }
        None
    }

    fn lock_shared_critical(&self) {
        self.lock_read(true);
    }

    /// up_read: the last reader out wakes the first waiter.
    #[inline]
    unsafe fn unlock_shared(&self, _token: ()) {
        self.release_read();
    }

    /// down_write: might_sleep(), then the fast path.
    #[inline]
    fn lock_exclusive(&self) {
        P::might_sleep();
        if !self.core.try_lock_idle() {
            stats::count(Event::ContendedWrite, 1);
            self.core.lock_write_slow();
        }
    }

    /// down_write_trylock: only from an idle word.
    #[inline]
    fn try_lock_exclusive(&self) -> Option<()> {
        self.core.try_lock_idle().then_some(())
    }

    #[inline]
    unsafe fn unlock_exclusive(&self, _token: ()) {
        self.core.unlock_write();
    }

    /// downgrade_write: one atomic step from writer to reader, then wake the
    /// queued readers if a reader is first.
    unsafe fn downgrade(&self, _token: ()) {
        let old = self
            .core
            .state()
            .fetch_update(Ordering::Release, Ordering::Relaxed, |s| {
                Some((s & !WRITER_LOCKED) + READER_BIAS)
            })
            .unwrap_or_else(|s| s);
        if old & WAITERS != 0 && old & FIRST_OUT == 0 {
            self.core.wake_queue(WakeType::ReadOwned);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_fast_path_fails_while_anyone_waits() {
        for steals in [false, true] {
            assert_eq!(reader_entry(0, false, steals), Some(Entry::Fast));
            assert_eq!(
                reader_entry(3 * READER_BIAS, false, steals),
                Some(Entry::Fast)
            );
            // Readers hold and a writer waits: queue (writer-fair).
            assert_eq!(reader_entry(READER_BIAS | WAITERS, false, steals), None);
            // The woken first writer is out of the queue but still waits.
            assert_eq!(reader_entry(READER_BIAS | FIRST_OUT, false, steals), None);
            assert_eq!(reader_entry(WRITER_LOCKED, false, steals), None);
        }
    }

    #[test]
    fn critical_reader_joins_readers_past_waiters_and_handoff_but_not_a_writer() {
        let pass = Some(Entry::Critical);
        assert_eq!(reader_entry(READER_BIAS | WAITERS, true, false), pass);
        assert_eq!(
            reader_entry(READER_BIAS | WAITERS | HANDOFF, true, true),
            pass
        );
        assert_eq!(reader_entry(WRITER_LOCKED | WAITERS, true, true), None);
        // A failed add beside a writer is not a reader to join.
        assert_eq!(reader_entry(WRITER_LOCKED | READER_BIAS, true, true), None);
    }

    #[test]
    fn only_a_stealing_era_takes_a_free_lock_past_the_queue() {
        assert_eq!(reader_entry(WAITERS, false, true), Some(Entry::Steal));
        assert_eq!(reader_entry(FIRST_OUT, false, true), Some(Entry::Steal));
        assert_eq!(reader_entry(WAITERS, false, false), None);
        assert_eq!(reader_entry(WAITERS | HANDOFF, false, true), None);
        assert_eq!(reader_entry(WAITERS | HANDOFF, true, true), None);
    }

    #[test]
    fn a_failed_add_is_kept_only_to_steal_or_join_readers() {
        // Alone on a free lock with waiters: steal (today), back out (xadd).
        let alone = READER_BIAS | WAITERS;
        assert_eq!(keeps_failed_add(alone, false, true), Some(Entry::Steal));
        assert_eq!(keeps_failed_add(alone, false, false), None);
        // Beside other readers, with a writer queued: only a critical reader.
        let beside = (3 * READER_BIAS) | WAITERS;
        assert_eq!(keeps_failed_add(beside, false, true), None);
        assert_eq!(keeps_failed_add(beside, true, false), Some(Entry::Critical));
        // Beside a writer: never.
        assert_eq!(
            keeps_failed_add(WRITER_LOCKED | READER_BIAS, true, true),
            None
        );
    }
}
