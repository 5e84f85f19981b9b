//! `rwsem-fifo`: the 2007 rw_semaphore (lib/rwsem.c and lib/rwsem-spinlock.c
//! of v2.6.2x, before writer lock stealing arrived in v3.10).
//!
//! Behaviour modelled:
//! - Strict FIFO: a new reader queues if anyone waits, a new writer unless the
//!   lock is idle (`__down_read`/`__down_write` fast paths fail on the waiting
//!   bias). No spinning, no stealing.
//! - A release hands the lock over (`__rwsem_do_wake`): to the writer at the
//!   head, or to the contiguous readers at the head, up to the first writer.
//!   The waker grants before waking, so a woken waiter owns the lock on return
//!   and nobody can slip in between (the convoy the 2012 rmap switch to rwsem
//!   paid for until lock stealing).
//! - `downgrade_write` (`rwsem_downgrade_wake`): becomes a reader and wakes the
//!   contiguous head readers; a writer at the head stays asleep.
//! - down_read_critical (Lespinasse 2010, seed 002): enters past queued waiters
//!   while only readers hold the lock.
//!
//! # State word (one `usize`)
//!
//! | bits | name          | meaning                                          |
//! |------|---------------|--------------------------------------------------|
//! | 0    | WRITER_LOCKED | a writer holds the lock                          |
//! | 1    | WAITERS       | the wait queue is non-empty                      |
//! | 2-7  |               | reserved                                         |
//! | 8-63 | reader count  | shared holders, in units of READER_BIAS          |
//!
//! # Invariants
//! - WRITER_LOCKED implies a zero reader count.
//! - WAITERS is set exactly while the queue is non-empty: set only in a park's
//!   validate, cleared only in a wake's commit, both under the queue lock.
//! - The lock is free with WAITERS set only between a release and its wake,
//!   and no acquisition path accepts that state (fast paths need WAITERS
//!   clear; a critical reader needs readers holding), so the wake's grant
//!   cannot be overtaken.
//!
//! Instrumentation: every grant by a waker counts one Handoff (FIFO grant);
//! reader grants also count WakeBatch and ReaderWoken.

use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::raw::KindInfo;
use super::stats::{self, Event};
use super::waitq::{Mode, Pick, ReaderBatch, Req, Slot, WaitQueue, WakeType, Woken};
use super::{LockKind, RawRwLock};
use std::cell::Cell;

pub const WRITER_LOCKED: usize = 1 << 0;
pub const WAITERS: usize = 1 << 1;
pub const READER_SHIFT: u32 = 8;
pub const READER_BIAS: usize = 1 << READER_SHIFT;

/// Shared holders in `state`.
pub fn readers(state: usize) -> usize {
    state >> READER_SHIFT
}

/// Whether a reader may enter on `state` without queuing: no writer holds,
/// and nobody waits, unless it is `critical` and readers hold.
pub fn reader_may_enter(state: usize, critical: bool) -> bool {
    state & WRITER_LOCKED == 0 && (state & WAITERS == 0 || (critical && readers(state) > 0))
}

/// Whether a writer may enter on `state` without queuing: only an idle lock.
pub fn writer_may_enter(state: usize) -> bool {
    state == 0
}

/// Who one release hands the lock to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    Nobody,
    Writer,
    Readers(usize),
}

/// `__rwsem_do_wake` as a walk over the queue, head first: the head writer
/// alone (not for a [`WakeType::ReadOwned`] wake), or the contiguous head
/// readers.
#[derive(Clone, Copy, Debug)]
pub struct FifoWake {
    wake: WakeType,
    grant: Grant,
    readers: ReaderBatch,
}

impl FifoWake {
    pub fn new(wake: WakeType) -> FifoWake {
        FifoWake {
            wake,
            grant: Grant::Nobody,
            readers: ReaderBatch::contiguous(),
        }
    }

    pub fn pick(&mut self, mode: Mode) -> Pick {
        match (self.grant, mode) {
            (Grant::Nobody, Mode::Write) if self.wake == WakeType::Any => {
                self.grant = Grant::Writer;
                Pick::Take
            }
            (Grant::Nobody | Grant::Readers(_), _) => {
                let pick = self.readers.pick(mode);
                if self.readers.taken() > 0 {
                    self.grant = Grant::Readers(self.readers.taken());
                }
                pick
            }
            (Grant::Writer, _) => Pick::Stop,
        }
    }

    pub fn grant(&self) -> Grant {
        self.grant
    }
}

/// Who a release ([`WakeType::Any`]) or a downgrade ([`WakeType::ReadOwned`])
/// hands the lock to, given the queue.
pub fn grant_on_release(queue: &[Mode], wake_type: WakeType) -> Grant {
    let mut wake = FifoWake::new(wake_type);
    for &mode in queue {
        if wake.pick(mode) == Pick::Stop {
            break;
        }
    }
    wake.grant()
}

/// The 2007 rw_semaphore. See the module doc.
pub struct RwsemFifo<P: Platform = Native> {
    state: P::AtomicUsize,
    queue: WaitQueue<P>,
}

impl<P: Platform> RwsemFifo<P> {
    /// Threads parked on this lock now.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Shared holders now.
    pub fn readers(&self) -> usize {
        readers(self.state.load(Ordering::Relaxed))
    }

    /// Whether a writer holds it now.
    pub fn write_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & WRITER_LOCKED != 0
    }

    #[inline]
    fn read_fast(&self) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        reader_may_enter(s, false)
            && self
                .state
                .compare_exchange_weak(s, s + READER_BIAS, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// Under the queue lock: take the lock as `may_enter` allows (adding
    /// `bias`), else set WAITERS and park. Returns the state it entered from,
    /// or None when it parked (and was then granted the lock).
    fn enter_or_park(
        &self,
        mode: Mode,
        t0: u64,
        may_enter: impl Fn(usize) -> bool,
        bias: usize,
    ) -> Option<usize> {
        let mut entered = None;
        let woken = self.queue.park(Slot::Main, Req::at(mode, t0), || {
            let mut s = self.state.load(Ordering::Relaxed);
            loop {
                let (new, park) = if may_enter(s) {
                    (s + bias, false)
                } else {
                    (s | WAITERS, true)
                };
                match self
                    .state
                    .compare_exchange_weak(s, new, Ordering::Acquire, Ordering::Relaxed)
                {
                    Ok(_) => {
                        if !park {
                            entered = Some(s);
                        }
                        return park;
                    }
                    Err(now) => s = now,
                }
            }
        });
        // Every wake of this kind grants.
        debug_assert!(woken.is_none() || woken == Some(Woken::Granted));
        entered
    }

    #[cold]
    fn lock_shared_slow(&self, critical: bool) {
        stats::count(Event::ContendedRead, 1);
        let t0 = P::now_ns();
        let entered = self.enter_or_park(
            Mode::Read,
            t0,
            |s| reader_may_enter(s, critical),
            READER_BIAS,
        );
        if entered.is_some_and(|s| s & WAITERS != 0) {
            stats::count(Event::CriticalPass, 1);
        }
        stats::note_wait(P::now_ns().saturating_sub(t0));
    }

    #[cold]
    fn lock_exclusive_slow(&self) {
        stats::count(Event::ContendedWrite, 1);
        let t0 = P::now_ns();
        self.enter_or_park(Mode::Write, t0, writer_may_enter, WRITER_LOCKED);
        stats::note_wait(P::now_ns().saturating_sub(t0));
    }

    /// Hand the lock to the head of the queue: called with the lock free and
    /// WAITERS set (Any), or with the caller holding it shared (ReadOwned).
    #[cold]
    fn wake(&self, wake_type: WakeType) {
        // Advanced by the pick, read by the commit.
        let plan = Cell::new(FifoWake::new(wake_type));
        self.queue.wake(
            Slot::Main,
            |req| {
                let mut p = plan.get();
                let pick = p.pick(req.mode);
                plan.set(p);
                pick
            },
            |wake| {
                let add = match plan.get().grant() {
                    Grant::Nobody => 0,
                    Grant::Writer => WRITER_LOCKED,
                    Grant::Readers(n) => n * READER_BIAS,
                };
                let clear = if wake.more { 0 } else { WAITERS };
                // WAITERS is set, so `add - clear` cannot underflow the word.
                self.state
                    .fetch_add(add.wrapping_sub(clear), Ordering::AcqRel);
                Woken::Granted
            },
        );
        let grant = plan.get().grant();
        match grant {
            Grant::Nobody => {}
            Grant::Writer => stats::count(Event::Handoff, 1),
            Grant::Readers(n) => {
                stats::count(Event::Handoff, 1);
                stats::count(Event::WakeBatch, 1);
                stats::count(Event::ReaderWoken, n as u64);
            }
        }
    }
}

// SAFETY: WRITER_LOCKED is set only from an idle word (a CAS) or by a waker
// while the lock is free with waiters, a state no acquisition path accepts;
// readers are added only while WRITER_LOCKED is clear.
impl<P: Platform> KindInfo for RwsemFifo<P> {
    const KIND: LockKind = LockKind::RwsemFifo;
    const SHARED_READERS: bool = true;
    const HAS_DOWNGRADE: bool = true;
}

unsafe impl<P: Platform> RawRwLock for RwsemFifo<P> {
    type ReadToken = ();
    type WriteToken = ();
    type Platform = P;

    fn new() -> Self {
        RwsemFifo {
            state: P::AtomicUsize::new(0),
            queue: WaitQueue::new(),
        }
    }

    /// down_read: might_sleep(), then the fast path.
    #[inline]
    fn lock_shared(&self) {
        P::might_sleep();
        if !self.read_fast() {
            self.lock_shared_slow(false);
        }
    }

    #[inline]
    fn try_lock_shared(&self) -> Option<()> {
        let mut s = self.state.load(Ordering::Relaxed);
        while reader_may_enter(s, false) {
            match self.state.compare_exchange_weak(
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

    /// up_read: the last reader out hands the lock to the queue head.
    #[inline]
    unsafe fn unlock_shared(&self, _token: ()) {
        let new = self.state.fetch_sub(READER_BIAS, Ordering::Release) - READER_BIAS;
        if new == WAITERS {
            self.wake(WakeType::Any);
        }
    }

    /// down_write: might_sleep(), then the fast path.
    #[inline]
    fn lock_exclusive(&self) {
        P::might_sleep();
        if self
            .state
            .compare_exchange(0, WRITER_LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_exclusive_slow();
        }
    }

    #[inline]
    fn try_lock_exclusive(&self) -> Option<()> {
        self.state
            .compare_exchange(0, WRITER_LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            .then_some(())
    }

    /// up_write: with waiters, hand the lock to the queue head.
    #[inline]
    unsafe fn unlock_exclusive(&self, _token: ()) {
        if self
            .state
            .compare_exchange(WRITER_LOCKED, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            // Only WAITERS can be set besides our bit.
            self.state.fetch_and(!WRITER_LOCKED, Ordering::Release);
            self.wake(WakeType::Any);
        }
    }

    unsafe fn downgrade(&self, _token: ()) {
        let old = self
            .state
            .fetch_add(READER_BIAS - WRITER_LOCKED, Ordering::Release);
        if old & WAITERS != 0 {
            self.wake(WakeType::ReadOwned);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Mode::{Read as R, Write as W};

    #[test]
    fn new_reader_queues_behind_any_waiter_unless_critical_and_readers_hold() {
        assert!(reader_may_enter(0, false));
        assert!(reader_may_enter(2 * READER_BIAS, false));
        assert!(!reader_may_enter((2 * READER_BIAS) | WAITERS, false));
        assert!(reader_may_enter((2 * READER_BIAS) | WAITERS, true));
        // Free with waiters (a release in progress): even a critical reader queues.
        assert!(!reader_may_enter(WAITERS, true));
        assert!(!reader_may_enter(WRITER_LOCKED, true));
        assert!(writer_may_enter(0) && !writer_may_enter(WAITERS));
    }

    #[test]
    fn release_grants_the_head_writer_or_the_contiguous_head_readers() {
        assert_eq!(
            grant_on_release(&[R, R, W, R], WakeType::Any),
            Grant::Readers(2)
        );
        assert_eq!(grant_on_release(&[W, R, R], WakeType::Any), Grant::Writer);
        assert_eq!(grant_on_release(&[W, W], WakeType::Any), Grant::Writer);
        assert_eq!(grant_on_release(&[R], WakeType::Any), Grant::Readers(1));
        assert_eq!(grant_on_release(&[], WakeType::Any), Grant::Nobody);
    }

    #[test]
    fn downgrade_wakes_head_readers_only() {
        assert_eq!(
            grant_on_release(&[W, R], WakeType::ReadOwned),
            Grant::Nobody
        );
        assert_eq!(
            grant_on_release(&[R, R, W], WakeType::ReadOwned),
            Grant::Readers(2)
        );
    }
}

#[cfg(all(test, shuttle))]
mod model {
    use super::RwsemFifo;
    use crate::locks::model_check::{check, op_mix};

    // Bounds: PCT depth 3, schedules as below.
    #[test]
    fn two_threads() {
        check::<RwsemFifo>(2_000, op_mix(2, 4));
    }

    #[test]
    fn three_threads() {
        check::<RwsemFifo>(2_000, op_mix(3, 3));
    }

    #[test]
    fn four_threads() {
        check::<RwsemFifo>(1_000, op_mix(4, 2));
    }
}
