//! `rwsem`: today's rw_semaphore (kernel/locking/rwsem.c, the v5.3 rework by
//! Waiman Long and Peter Zijlstra; reader lock stealing and one
//! NONSPINNABLE bit since v5.11, when reader optimistic spinning went).
//!
//! Behaviour modelled, each from rwsem.c (the shared machinery is in
//! `rw_semaphore.rs` and `stealing.rs`):
//! - Reader fast path: an unconditional add of a reader, backed out in the
//!   slow path if a writer, a waiter or a reservation shows
//!   (`rwsem_read_trylock`: atomic_long_add_return, fail on
//!   RWSEM_READ_FAILED_MASK). Writer fast path only from an idle word
//!   (`rwsem_write_trylock`); `down_write_trylock` is the same CAS, so it
//!   fails while anyone waits; stealing happens in the slow path.
//! - Writer optimistic spinning behind the osq (`rwsem_optimistic_spin`):
//!   while a writer owns the lock (at most [`WRITER_SPIN_NS`], the model's
//!   stand-in for owner->on_cpu and need_resched), or while readers own it
//!   for at most (10 + readers/2) us, capped at 25 us (`rwsem_rspin_threshold`),
//!   restarted each time the owner turns from a writer to readers; it takes
//!   the lock the moment it is free and not reserved, ahead of the queue.
//! - RWSEM_NONSPINNABLE: when a spin on readers runs out, the spinner marks
//!   the lock non-spinnable and sleeps; writers arriving while it is set
//!   sleep at once without spinning (`rwsem_can_spin_on_owner`). A writer's
//!   acquisition clears it, and so does the wake after the readers have left
//!   with waiters queued (`__up_read`'s clear_nonspinnable).
//! - Reader lock stealing (`rwsem_down_read_slowpath`): a reader whose add
//!   finds the lock free and not reserved keeps it even though others queue,
//!   then wakes the queued readers if one is first (RWSEM_WAKE_READ_OWNED).
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
//! Not modelled: the kernel's writer also stops spinning when the owner is
//! off its CPU; the owner's identity is not in the model's count word, and
//! user space could not ask anyway.
//!
//! Instrumentation: Handoff counts a writer granted the lock by a waker;
//! WakeBatch/ReaderWoken count reader batches; Steal counts writers and
//! readers that took the lock while others waited; NoSpin counts the lock
//! made non-spinnable.
//!
//! [`WRITER_SPIN_NS`]: super::stealing::WRITER_SPIN_NS

use super::LockKind;
use super::platform::Native;
use super::rw_semaphore::{Era, RwSemaphore};
use super::stealing::{MAX_READERS_WAKEUP, Policy};
use super::waitq::ReaderBatch;

/// rwsem.c RWSEM_WAIT_TIMEOUT = DIV_ROUND_UP(HZ, 250) jiffies: "at least 4ms
/// or 1 jiffy (if it is higher than 4ms)".
pub const RWSEM_WAIT_TIMEOUT_NS: u64 = 4_000_000;

/// Whether a first waiter that has waited `waited_ns` is starved.
pub fn should_set_handoff(waited_ns: u64) -> bool {
    waited_ns >= RWSEM_WAIT_TIMEOUT_NS
}

/// Today's era: see the module doc.
pub struct Today;

impl Policy for Today {
    /// Age only.
    fn starved(waited_ns: u64, _lost: u32) -> bool {
        should_set_handoff(waited_ns)
    }
    const SPIN_ON_READERS: bool = true;
    /// rwsem_mark_wake: readers anywhere in the queue, "even when writers
    /// are also present in the queue", at most MAX_READERS_WAKEUP.
    fn reader_batch() -> ReaderBatch {
        ReaderBatch::phase_fair(MAX_READERS_WAKEUP)
    }
}

impl Era for Today {
    const KIND: LockKind = LockKind::Rwsem;
    const READER_STEALS: bool = true;
}

/// Today's rw_semaphore.
pub type Rwsem<P = Native> = RwSemaphore<P, Today>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::stealing::readers_to_wake;
    use crate::locks::waitq::{Mode, Req};

    #[test]
    fn handoff_starts_at_the_4ms_wait_timeout() {
        assert!(!should_set_handoff(3_999_999));
        assert!(should_set_handoff(4_000_000));
        assert!(Today::starved(5_000_000, 0));
        assert!(!Today::starved(1_000, 9));
    }

    #[test]
    fn a_reader_batch_takes_up_to_256_readers_past_writers() {
        let queue: Vec<Req> = (0..600)
            .map(|i| Req {
                mode: if i % 2 == 1 { Mode::Write } else { Mode::Read },
                since_us: 0,
            })
            .collect();
        let woken = readers_to_wake::<Today>(&queue);
        assert_eq!(woken.len(), MAX_READERS_WAKEUP);
        assert_eq!(woken[..3], [0, 2, 4]);
        assert_eq!(woken.last(), Some(&510));
    }
}

#[cfg(all(test, shuttle))]
mod model {
    use super::Rwsem;
    use crate::locks::model_check::{Op::*, check, op_mix, roles};

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

    // Three writers: a spinner holds the osq while another queues in it and
    // the holder releases; readers' failed adds race the writers' CASes.
    #[test]
    fn osq_spinners_and_failed_adds() {
        check::<Rwsem>(2_000, roles(&[Write, Write, Write, Read]));
    }
}
