//! `mutex`: the sleeping mutex with optimistic spinning (kernel/locking/mutex.c;
//! spinning since v2.6.29, the i_mmap_mutex of seed 003; handoff since v4.10).
//!
//! Behaviour modelled, each from mutex.c:
//! - Fast path: one CAS from an idle word (`__mutex_trylock_fast`).
//! - Optimistic spinning (`mutex_optimistic_spin`, behind the osq since
//!   v3.15): one locker at a time spins while the owner holds, at most
//!   [`WRITER_SPIN_NS`](super::stealing::WRITER_SPIN_NS) (the model's stand-in
//!   for the kernel's `owner->on_cpu` and `need_resched()`), the others
//!   waiting in the osq, each on its own node; it takes the mutex the moment
//!   it is free and not reserved, ahead of any sleeper (a steal).
//! - Then it sleeps in a FIFO; an unlock wakes the first sleeper, which must
//!   still take the mutex itself and may find it stolen.
//! - Handoff: a woken first waiter that fails to get the mutex sets
//!   MUTEX_FLAG_HANDOFF (`__mutex_trylock_or_handoff`), spins for it, then
//!   sleeps again, still first; the next unlock hands the mutex to it directly
//!   (`__mutex_handoff`; the kernel's PICKUP step is folded into the grant).
//! - `mutex_trylock` takes a free, unreserved mutex even when others sleep.
//!
//! Exclusive-only: every read takes the exclusive path (the kernel's i_mmap
//! was a mutex before v3.19 made it i_mmap_rwsem), so SHARED_READERS and
//! HAS_DOWNGRADE are false; acquisitions are counted under the mode asked for.
//!
//! State word, bit map and invariants: see `stealing.rs` (bit 0 is the owner
//! bit; the reader count stays zero).

use super::LockKind;
use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::raw::{KindInfo, exclusive_only};
use super::stats::{self, Event};
use super::stealing::{Core, Policy, WRITER_LOCKED};
use super::waitq::ReaderBatch;
use crate::mode::Mode;

/// Whether the first waiter should reserve the mutex: as soon as it has lost
/// one race after being woken (mutex.c sets MUTEX_FLAG_HANDOFF on the first
/// failed trylock of a woken first waiter; no timeout).
pub fn should_set_handoff(lost_after_wake: u32) -> bool {
    lost_after_wake >= 1
}

/// The mutex's policy: starved by lost races, not age.
pub struct MutexPolicy;

impl Policy for MutexPolicy {
    fn starved(_waited_ns: u64, lost: u32) -> bool {
        should_set_handoff(lost)
    }
    /// Never consulted: a mutex has no reader owners.
    const SPIN_ON_READERS: bool = false;
    /// Never consulted: a mutex queues no readers.
    fn reader_batch() -> ReaderBatch {
        ReaderBatch::contiguous()
    }
}

/// Sleeping mutex with optimistic spinning. See the module doc.
pub struct Mutex<P: Platform = Native> {
    core: Core<P, MutexPolicy>,
}

impl<P: Platform> Mutex<P> {
    /// Threads parked on this mutex now.
    pub fn queued(&self) -> usize {
        self.core.queue().len()
    }

    /// Whether someone holds it now.
    pub fn locked(&self) -> bool {
        self.core.state().load(Ordering::Relaxed) & WRITER_LOCKED != 0
    }

    /// mutex_lock: might_sleep(), then the fast path; a slow path counts
    /// as a contended request of `mode`.
    #[inline]
    fn lock(&self, mode: Mode) {
        P::might_sleep();
        if !self.core.try_lock_idle() {
            stats::count(Event::contended(mode), 1);
            self.core.lock_write_slow();
        }
    }

    /// mutex_trylock.
    #[inline]
    fn try_lock(&self) -> Option<()> {
        self.core.try_steal().then_some(())
    }

    /// mutex_unlock.
    #[inline]
    fn unlock(&self, _: ()) {
        self.core.unlock_write();
    }
}

impl<P: Platform> KindInfo for Mutex<P> {
    const KIND: LockKind = LockKind::Mutex;
    const SHARED_READERS: bool = false;
    const HAS_DOWNGRADE: bool = false;
}

exclusive_only!(
    Mutex,
    (),
    Mutex { core: Core::new() },
    lock,
    try_lock,
    unlock
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_waiter_reserves_after_one_lost_race_whatever_its_age() {
        assert!(!should_set_handoff(0));
        assert!(should_set_handoff(1));
        assert!(!MutexPolicy::starved(u64::MAX, 0));
        assert!(MutexPolicy::starved(0, 1));
    }
}

#[cfg(all(test, shuttle))]
mod model {
    use super::Mutex;
    use crate::locks::model_check::{check, op_mix};

    // Bound per test: check::<K>(schedules, op_mix(threads, ops each)); see
    // model_check.rs.
    #[test]
    fn two_threads() {
        check::<Mutex>(10_000, op_mix(2, 4));
    }

    #[test]
    fn three_threads() {
        check::<Mutex>(10_000, op_mix(3, 3));
    }

    #[test]
    fn four_threads() {
        check::<Mutex>(5_000, op_mix(4, 2));
    }
}
