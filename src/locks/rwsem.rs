//! `rwsem`: today's rw_semaphore (kernel/locking/rwsem.c, v5.3 rework by
//! Waiman Long and Peter Zijlstra, reader lock stealing since v5.11).
//!
//! Behaviour modelled, each from rwsem.c:
//! - Writer-fair fast paths: a reader enters by the fast path only when nobody
//!   waits (`rwsem_read_trylock` fails on RWSEM_READ_FAILED_MASK = writer |
//!   waiters | handoff); a writer only from an idle word
//!   (`rwsem_write_trylock`). `down_write_trylock` is the same idle-word CAS,
//!   so it fails while anyone waits; stealing happens in the slow path.
//! - Writer lock stealing and bounded optimistic spinning
//!   (`rwsem_optimistic_spin`, `rwsem_try_write_lock_unqueued`): a writer spins
//!   while a writer holds (at most [`stealing::WRITER_SPIN_NS`]) or while
//!   readers hold (at most (10 + readers/2) us, capped at 25 us), and takes the
//!   lock the moment it is free and not reserved, ahead of the queue.
//! - Reader lock stealing (`rwsem_down_read_slowpath`, v5.11): a reader that
//!   finds the lock free and not reserved takes it even though others queue,
//!   then wakes the queued readers if one is first (RWSEM_WAKE_READ_OWNED).
//!   No reader optimistic spinning (removed in v5.11).
//! - A release wakes the first waiter: a writer is woken to compete (stealers
//!   may beat it); readers are granted by the waker, up to MAX_READERS_WAKEUP
//!   (256) of them from anywhere in the queue, writers skipped (phase-fair).
//! - Handoff: a first waiter that has waited RWSEM_WAIT_TIMEOUT (4 ms) is
//!   starved: the lock is reserved for it (RWSEM_FLAG_HANDOFF) and no one
//!   steals. Simplification, stated: the kernel's woken writer sets HANDOFF
//!   after it loses one more race; here a release that finds the first waiter
//!   starved grants it the lock directly, one steal earlier. The first waiter's
//!   age rides in its ParkToken (park's own timeout would drop its place).
//! - `downgrade_write`: the writer becomes a reader and wakes queued readers
//!   only, and only if a reader is first (RWSEM_WAKE_READ_OWNED).
//! - down_read_critical (Lespinasse 2010, seed 002; never merged): enters past
//!   queued writers, and past HANDOFF, while readers hold the lock.
//!
//! State word, bit map and invariants: see `stealing.rs` (shared with the
//! mutex). Readers add to bits 8-63; READ_FAILED_MASK below adds FIRST_OUT to
//! the kernel's mask, because an out-of-queue first writer is still a waiter.
//!
//! Instrumentation: Handoff counts a writer granted the lock by a waker;
//! WakeBatch/ReaderWoken count reader batches; Steal counts writers and
//! readers that took the lock while others waited.

use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::raw::KindInfo;
use super::stats::{self, Event};
use super::stealing::{
    self, Core, FIRST_OUT, FIRST_PARKED, HANDOFF, LOCK_MASK, Policy, READER_BIAS, WAITERS,
    WRITER_LOCKED,
};
use super::waitq::{Mode, Req, Slot, WakeType, Woken};
use super::{LockKind, RawRwLock};

/// rwsem.c RWSEM_WAIT_TIMEOUT = DIV_ROUND_UP(HZ, 250) jiffies: "at least 4ms
/// or 1 jiffy (if it is higher than 4ms)".
pub const RWSEM_WAIT_TIMEOUT_NS: u64 = 4_000_000;

/// The reader fast path fails on any of these (rwsem.c RWSEM_READ_FAILED_MASK
/// plus FIRST_OUT).
pub const READ_FAILED_MASK: usize = WRITER_LOCKED | WAITERS | HANDOFF | FIRST_OUT;

/// Whether a first waiter that has waited `waited_ns` is starved.
pub fn should_set_handoff(waited_ns: u64) -> bool {
    waited_ns >= RWSEM_WAIT_TIMEOUT_NS
}

/// The rwsem's starvation policy: age only.
pub struct RwsemPolicy;

impl Policy for RwsemPolicy {
    fn starved(waited_ns: u64, _lost: u32) -> bool {
        should_set_handoff(waited_ns)
    }
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

/// What a reader does on `state`: `Some(entry)` to enter, `None` to queue.
/// `critical` for down_read_critical.
pub fn reader_entry(state: usize, critical: bool) -> Option<Entry> {
    if state & READ_FAILED_MASK == 0 {
        Some(Entry::Fast)
    } else if critical && state & WRITER_LOCKED == 0 && stealing::readers(state) > 0 {
        Some(Entry::Critical)
    } else if state & (LOCK_MASK | HANDOFF) == 0 {
        Some(Entry::Steal)
    } else {
        None
    }
}

/// What a reader refused entry does in [`Rwsem::enter_or`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refused {
    GiveUp,
    /// Set WAITERS: only ever from a park's validate, which then parks.
    MarkWaiting,
}

/// Today's rw_semaphore. See the module doc.
pub struct Rwsem<P: Platform = Native> {
    core: Core<P, RwsemPolicy>,
}

impl<P: Platform> Rwsem<P> {
    /// Threads parked on this lock now.
    pub fn queued(&self) -> usize {
        self.core.queue().len()
    }

    /// Shared holders now.
    pub fn readers(&self) -> usize {
        stealing::readers(self.core.state().load(Ordering::Relaxed))
    }

    /// Whether a writer holds it now.
    pub fn write_locked(&self) -> bool {
        self.core.state().load(Ordering::Relaxed) & WRITER_LOCKED != 0
    }

    #[inline]
    fn read_fast(&self) -> bool {
        let s = self.core.state().load(Ordering::Relaxed);
        s & READ_FAILED_MASK == 0
            && self
                .core
                .state()
                .compare_exchange_weak(s, s + READER_BIAS, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// Enter if [`reader_entry`] allows; otherwise do as `refused` says.
    /// Returns how it entered and the state it entered from.
    fn enter_or(&self, critical: bool, refused: Refused) -> Option<(Entry, usize)> {
        let state = self.core.state();
        let mut s = state.load(Ordering::Relaxed);
        loop {
            let (new, entry) = match reader_entry(s, critical) {
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

    /// The read slow path: enter if the state allows, else queue until a
    /// waker grants a batch that includes us.
    #[cold]
    fn lock_shared_slow(&self, critical: bool) {
        stats::count(Event::ContendedRead, 1);
        let t0 = P::now_ns();
        // Step 1: without the queue lock (rwsem_down_read_slowpath's lock
        // stealing), then Step 2 again under it, queuing if still refused.
        let entered = self.enter_or(critical, Refused::GiveUp).or_else(|| {
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
        });
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
}

// SAFETY: writers exclude everyone: WRITER_LOCKED is set only by a CAS from a
// state without holders (or by a waker granting a parked writer, same CAS),
// readers are added only while WRITER_LOCKED is clear, and tokens come only
// from those successful acquisitions.
impl<P: Platform> KindInfo for Rwsem<P> {
    const KIND: LockKind = LockKind::Rwsem;
    const SHARED_READERS: bool = true;
    const HAS_DOWNGRADE: bool = true;
}

unsafe impl<P: Platform> RawRwLock for Rwsem<P> {
    type ReadToken = ();
    type WriteToken = ();
    type Platform = P;

    fn new() -> Self {
        Rwsem { core: Core::new() }
    }

    /// down_read: might_sleep(), then the fast path.
    #[inline]
    fn lock_shared(&self) {
        P::might_sleep();
        if !self.read_fast() {
            self.lock_shared_slow(false);
        }
    }

    /// down_read_trylock: fails whenever anyone waits.
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
        P::might_sleep();
        if !self.read_fast() {
            self.lock_shared_slow(true);
        }
    }

    /// up_read: the last reader out wakes the first waiter.
    #[inline]
    unsafe fn unlock_shared(&self, _token: ()) {
        let new = self.core.state().fetch_sub(READER_BIAS, Ordering::Release) - READER_BIAS;
        if new & LOCK_MASK == 0 && new & (WAITERS | FIRST_PARKED) != 0 {
            self.core.wake();
        }
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
    fn handoff_starts_at_the_4ms_wait_timeout() {
        assert!(!should_set_handoff(3_999_999));
        assert!(should_set_handoff(4_000_000));
        assert!(RwsemPolicy::starved(5_000_000, 0));
        assert!(!RwsemPolicy::starved(1_000, 9));
    }

    #[test]
    fn reader_fast_path_fails_while_anyone_waits() {
        assert_eq!(reader_entry(0, false), Some(Entry::Fast));
        assert_eq!(reader_entry(3 * READER_BIAS, false), Some(Entry::Fast));
        // Readers hold and a writer waits: queue (writer-fair).
        assert_eq!(reader_entry(READER_BIAS | WAITERS, false), None);
        // The woken first writer is out of the queue but still waits.
        assert_eq!(reader_entry(READER_BIAS | FIRST_OUT, false), None);
        assert_eq!(reader_entry(WRITER_LOCKED, false), None);
    }

    #[test]
    fn critical_reader_joins_readers_past_waiters_and_handoff_but_not_a_writer() {
        assert_eq!(
            reader_entry(READER_BIAS | WAITERS, true),
            Some(Entry::Critical)
        );
        assert_eq!(
            reader_entry(READER_BIAS | WAITERS | HANDOFF, true),
            Some(Entry::Critical)
        );
        assert_eq!(reader_entry(WRITER_LOCKED | WAITERS, true), None);
    }

    #[test]
    fn reader_steals_a_free_unreserved_lock_only() {
        assert_eq!(reader_entry(WAITERS, false), Some(Entry::Steal));
        assert_eq!(reader_entry(FIRST_OUT, false), Some(Entry::Steal));
        assert_eq!(reader_entry(WAITERS | HANDOFF, false), None);
        assert_eq!(reader_entry(WAITERS | HANDOFF, true), None);
    }
}

#[cfg(all(test, shuttle))]
mod model {
    use super::Rwsem;
    use crate::locks::model_check::{check, op_mix};

    // Bounds: PCT depth 3, schedules as below; each thread runs `iters` of
    // the harness's op mix (write, read, try, critical read, downgrade).
    #[test]
    fn two_threads() {
        check::<Rwsem>(2_000, op_mix(2, 4));
    }

    #[test]
    fn three_threads() {
        check::<Rwsem>(2_000, op_mix(3, 3));
    }

    #[test]
    fn four_threads() {
        check::<Rwsem>(1_000, op_mix(4, 2));
    }
}
