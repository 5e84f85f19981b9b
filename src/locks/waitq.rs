//! Parking plumbing shared by the sleeping kinds (rwsem-fifo, rwsem, mutex).
//!
//! A lock's [`WaitQueue`] is its parking key(s) in parking_lot_core's table plus
//! a count of parked threads. A queued thread carries a [`Req`] (mode and a
//! coarse enqueue time) in its ParkToken; a waker walks the queue in FIFO order
//! with a pick function returning [`Pick`], and tells the woken threads whether
//! it already made them owners ([`Woken::Granted`], the kernel's handoff) or
//! only woke them to compete ([`Woken::Retry`]).
//!
//! [`ReaderBatch`] is the one definition of "which queued readers one wake-up
//! takes", used by both rw_semaphore eras. Decisions take plain values
//! ([`Mode`], [`Req`], state words), so tests can feed them a queue of their
//! own (see [`picked`]).
//!
//! Protocol every user follows: a lock's WAITERS bit is set only inside
//! `validate` and cleared only inside a wake's commit, both under the queue
//! lock, so it is set exactly while the queue is non-empty; and `validate`
//! never parks on a state in which nobody is bound to wake it (it takes a free
//! lock instead of setting WAITERS on it). The race this rules out was seen in
//! a trial: load state == 0, another thread locks and unlocks, then a stale CAS
//! 0 -> WAITERS succeeds on a free lock and nobody ever wakes the parker.

use super::platform::{
    AtomicInt, FilterOp, Native, Ordering, ParkResult, ParkToken, Platform, UnparkResult,
    UnparkToken,
};
use super::stats::{self, Event};
pub use crate::mode::Mode;
use std::marker::PhantomData;

/// One queued request as the decisions see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Req {
    pub mode: Mode,
    /// When it entered the slow path, in microseconds of [`Platform::now_ns`]:
    /// coarse on purpose, it only has to resolve the 4 ms rwsem handoff
    /// timeout (the kernel uses jiffies, 1-4 ms).
    pub since_us: u64,
}

impl Req {
    /// A request of `mode` whose slow path started at `t0_ns`.
    pub fn at(mode: Mode, t0_ns: u64) -> Req {
        Req {
            mode,
            since_us: t0_ns / 1_000,
        }
    }

    /// How long it has waited at `now_ns`.
    pub fn waited_ns(self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.since_us.saturating_mul(1_000))
    }

    /// Bit 0 the mode, the rest the enqueue time (µs fit in 63 bits for
    /// 292,000 years).
    fn token(self) -> ParkToken {
        let mode = match self.mode {
            Mode::Read => 0,
            Mode::Write => 1,
        };
        ParkToken(((self.since_us as usize) << 1) | mode)
    }

    fn from_token(token: ParkToken) -> Req {
        Req {
            mode: if token.0 & 1 == 0 {
                Mode::Read
            } else {
                Mode::Write
            },
            since_us: (token.0 >> 1) as u64,
        }
    }
}

/// A waker's verdict on one queued request, given in queue order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Wake it (with whatever the wake's outcome says).
    Take,
    /// Leave it queued and look at the next one.
    Pass,
    /// Leave it and everything behind it queued.
    Stop,
}

impl From<Pick> for FilterOp {
    fn from(p: Pick) -> FilterOp {
        match p {
            Pick::Take => FilterOp::Unpark,
            Pick::Pass => FilterOp::Skip,
            Pick::Stop => FilterOp::Stop,
        }
    }
}

/// Who a wake is for (rwsem.c `enum rwsem_wake_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeType {
    /// After a release: whatever is at the head (RWSEM_WAKE_ANY).
    Any,
    /// By a thread that holds the lock shared (downgrade_write, a reader that
    /// stole the lock): readers only, and only if a reader is first
    /// (RWSEM_WAKE_READ_OWNED; the 2007 `__rwsem_do_wake(sem, downgrading)`).
    ReadOwned,
}

/// What a woken thread is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// The waker made it the owner before waking it: it holds the lock.
    Granted,
    /// It was woken to try again (the kernel's woken writer that must still
    /// win the lock, and may find it stolen).
    Retry,
}

impl Woken {
    fn token(self) -> UnparkToken {
        UnparkToken(match self {
            Woken::Granted => 1,
            Woken::Retry => 2,
        })
    }

    fn from_token(token: UnparkToken) -> Woken {
        if token.0 == 1 {
            Woken::Granted
        } else {
            Woken::Retry
        }
    }
}

/// Which of a lock's two parking keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The FIFO of waiters.
    Main = 0,
    /// At most one thread: the first waiter, parked again after it was woken
    /// to compete and lost (see `stealing.rs`). A separate key keeps its place
    /// at the front: parking_lot_core appends at the tail.
    First = 1,
}

/// What a wake found, passed to its commit step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// Threads taken out of the queue.
    pub taken: usize,
    /// Whether any remain queued on that key.
    pub more: bool,
}

/// A lock's wait queue: two parking keys derived from this struct's address,
/// and the number of threads parked on them (the kernel's wait list, beside
/// the count word).
#[derive(Debug)]
pub struct WaitQueue<P: Platform = Native> {
    parked: P::AtomicUsize,
    _platform: PhantomData<P>,
}

impl<P: Platform> Default for WaitQueue<P> {
    fn default() -> Self {
        WaitQueue::new()
    }
}

impl<P: Platform> WaitQueue<P> {
    pub fn new() -> WaitQueue<P> {
        WaitQueue {
            parked: P::AtomicUsize::new(0),
            _platform: PhantomData,
        }
    }

    /// Threads parked now (both keys): tests stage waiters with it.
    pub fn len(&self) -> usize {
        self.parked.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The struct is at least word-aligned and lives inside its lock, so
    /// `address + 1` is never another lock's key (parking_lot's own RwLock
    /// uses the same trick).
    fn key(&self, slot: Slot) -> usize {
        self as *const WaitQueue<P> as usize + slot as usize
    }

    /// Park on `slot` unless `validate` (run under the queue lock) refuses.
    /// Returns `None` when it refused, else what the waker said. Counts a
    /// Sleep for each park that slept.
    pub fn park(&self, slot: Slot, req: Req, validate: impl FnOnce() -> bool) -> Option<Woken> {
        let parked = &self.parked;
        let validate = || {
            let park = validate();
            if park {
                parked.fetch_add(1, Ordering::Relaxed);
            }
            park
        };
        // SAFETY: the key is this queue's own address (+ slot), used by no
        // other parking; `validate` neither unwinds nor calls into the parking
        // functions.
        let result = unsafe { P::park(self.key(slot), validate, req.token()) };
        match result {
            ParkResult::Unparked(token) => {
                stats::count(Event::Sleep, 1);
                Some(Woken::from_token(token))
            }
            // No timeout is passed, so TimedOut cannot happen.
            ParkResult::Invalid | ParkResult::TimedOut => None,
        }
    }

    /// Walk `slot`'s queue in FIFO order calling `pick` (under the queue lock);
    /// then `commit` (still under it) sees what was taken and says what the
    /// woken threads are told; they are woken after the lock is released.
    /// Returns the number woken. `pick` and `commit` must not panic.
    pub fn wake(
        &self,
        slot: Slot,
        mut pick: impl FnMut(Req) -> Pick,
        commit: impl FnOnce(Wake) -> Woken,
    ) -> usize {
        let parked = &self.parked;
        let filter = |token: ParkToken| {
            let p = pick(Req::from_token(token));
            if p == Pick::Take {
                parked.fetch_sub(1, Ordering::Relaxed);
            }
            p.into()
        };
        let callback = |r: UnparkResult| {
            commit(Wake {
                taken: r.unparked_threads,
                more: r.have_more_threads,
            })
            .token()
        };
        // SAFETY: as in `park`; `filter` and `callback` must not unwind (a
        // documented obligation on `pick` and `commit`).
        unsafe { P::unpark_filter(self.key(slot), filter, callback) }.unparked_threads
    }
}

/// Which queued readers one wake-up takes, fed the queue in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReaderBatch {
    past_writers: bool,
    cap: usize,
    taken: usize,
}

impl ReaderBatch {
    /// The 2007 lib/rwsem.c `__rwsem_do_wake`: the readers at the head of the
    /// queue, up to the first writer ("grant an infinite number of read locks
    /// to the readers at the front of the queue").
    pub const fn contiguous() -> ReaderBatch {
        ReaderBatch {
            past_writers: false,
            cap: usize::MAX,
            taken: 0,
        }
    }

    /// kernel/locking/rwsem.c `rwsem_mark_wake` (v5.3+): readers anywhere in
    /// the queue, writers skipped (phase-fair), at most `cap` of them.
    pub const fn phase_fair(cap: usize) -> ReaderBatch {
        ReaderBatch {
            past_writers: true,
            cap,
            taken: 0,
        }
    }

    pub fn pick(&mut self, mode: Mode) -> Pick {
        if self.taken >= self.cap {
            return Pick::Stop;
        }
        match mode {
            Mode::Read => {
                self.taken += 1;
                Pick::Take
            }
            Mode::Write if self.past_writers => Pick::Pass,
            Mode::Write => Pick::Stop,
        }
    }

    /// Readers taken so far.
    pub fn taken(&self) -> usize {
        self.taken
    }
}

/// The indices of `queue` (head first) that `pick` takes: the same walk a
/// wake does, for callers holding the queue as a slice (tests, a simulator).
pub fn picked(queue: &[Req], mut pick: impl FnMut(Req) -> Pick) -> Vec<usize> {
    let mut taken = Vec::new();
    for (i, req) in queue.iter().enumerate() {
        match pick(*req) {
            Pick::Take => taken.push(i),
            Pick::Pass => {}
            Pick::Stop => break,
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(modes: &str) -> Vec<Req> {
        modes
            .chars()
            .map(|c| Req {
                mode: if c == 'R' { Mode::Read } else { Mode::Write },
                since_us: 0,
            })
            .collect()
    }

    #[test]
    fn tokens_round_trip_mode_and_time() {
        for req in [
            Req::at(Mode::Read, 0),
            Req::at(Mode::Write, 123_456_789_000),
            Req {
                mode: Mode::Write,
                since_us: u64::MAX >> 1,
            },
        ] {
            assert_eq!(Req::from_token(req.token()), req);
        }
        for w in [Woken::Granted, Woken::Retry] {
            assert_eq!(Woken::from_token(w.token()), w);
        }
    }

    #[test]
    fn waited_is_measured_from_the_coarse_stamp() {
        let req = Req::at(Mode::Read, 5_000_700);
        assert_eq!(req.since_us, 5_000);
        assert_eq!(req.waited_ns(9_000_000), 4_000_000);
        assert_eq!(req.waited_ns(1_000), 0);
    }

    #[test]
    fn contiguous_batch_stops_at_the_first_writer() {
        let mut b = ReaderBatch::contiguous();
        assert_eq!(picked(&q("RRWR"), |r| b.pick(r.mode)), vec![0, 1]);
        let mut b = ReaderBatch::contiguous();
        assert_eq!(picked(&q("WRR"), |r| b.pick(r.mode)), Vec::<usize>::new());
    }

    #[test]
    fn phase_fair_batch_skips_writers_up_to_the_cap() {
        let mut b = ReaderBatch::phase_fair(256);
        assert_eq!(picked(&q("RWRWWR"), |r| b.pick(r.mode)), vec![0, 2, 5]);
        assert_eq!(b.taken(), 3);
        let mut b = ReaderBatch::phase_fair(2);
        assert_eq!(picked(&q("RWRR"), |r| b.pick(r.mode)), vec![0, 2]);
    }
}
