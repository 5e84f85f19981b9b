//! `rwsem-xadd`: the rw_semaphore of Linux v3.16 to v5.2
//! (kernel/locking/rwsem-xadd.c, replaced by the v5.3 rwsem.c), the
//! i_mmap_rwsem of seed 003 (v3.19, "mm: convert i_mmap_mutex to rwsem") and
//! the anon_vma lock of the 2013-2019 kernels.
//!
//! Its history, each step kept here: the xadd count (readers and writers
//! add to one signed count: ACTIVE_BIAS per active locker, WAITING_BIAS
//! while anyone queues); writer lock stealing since v3.10 (Alex Shi and
//! Michel Lespinasse, ce6711f3d196: before it, aim7 fork_test had lost
//! about 50% when anon_vma's mutex became an rwsem); writer optimistic
//! spinning behind an osq since v3.16 (Davidlohr Bueso and Jason Low,
//! 4fc828e24cd9); reader-owned marked in the owner field since v4.9
//! (19c5d690e416), from when a writer stops spinning as soon as readers own
//! the lock; the empty-queue reader shortcut of v4.15.
//!
//! Behaviour modelled (the shared machinery is in `rw_semaphore.rs` and
//! `stealing.rs`):
//! - Reader fast path: one add of a reader, failing if the count shows a
//!   writer or waiters (__down_read's `atomic_long_inc_return` <= 0), taken
//!   back in rwsem_down_read_failed. No reader stealing: a reader whose add
//!   failed queues, unless under the queue lock it finds the queue empty and
//!   no writer (the v4.15 shortcut).
//! - Writer fast path: the add succeeds only on an idle count.
//! - Writer optimistic spinning (`rwsem_optimistic_spin`) while a writer
//!   owns the lock, at most [`WRITER_SPIN_NS`] (the model's stand-in for
//!   owner->on_cpu and need_resched, which bound the kernel's), taking it the
//!   moment it is free (`rwsem_try_write_lock_unqueued`), queued waiters or
//!   not. No spinning at all while readers own it (v4.9+). No NONSPINNABLE,
//!   no time bound on readers: those came with v5.3.
//! - No handoff: the first waiter is never starved by rule, so stealers can
//!   keep beating it (v5.3 added RWSEM_FLAG_HANDOFF for that).
//! - A release wakes the first waiter: a writer is woken to compete and, if
//!   it loses, sleeps again still first (`rwsem_down_write_failed`'s loop,
//!   seed 003's "wait until we successfully acquire the lock"); readers are
//!   granted by the waker, all the readers at the head of the queue up to
//!   the first writer (`__rwsem_mark_wake`, "grant an infinite number of read
//!   locks to the readers at the front of the queue").
//! - `downgrade_write`: the writer becomes a reader and grants the readers at
//!   the head (RWSEM_WAKE_READ_OWNED).
//! - down_read_critical (Lespinasse 2010, seed 002) as on every rwsem kind.
//!
//! What the model does differently, stated: the count word is the v5.3
//! layout the kinds share (writer bit, waiters bit, reader count), which
//! holds the same facts as the xadd count; the reader add and its back-out
//! are the xadd's accesses, while the writer's fast path is a CAS from idle
//! where the kernel's add fails and is undone with a second RMW when the
//! lock is busy. The writer queueing on a reader-owned lock does not wake
//! the readers queued ahead of it (RWSEM_WAKE_READERS), and a release whose
//! wake finds the lock already stolen does not wake the first writer only to
//! let it sleep again. A reader whose failed add is still in the count
//! looks like a reader owner to a spinning writer, which then stops
//! spinning where the kernel's owner field would still say "no owner".
//!
//! [`WRITER_SPIN_NS`]: super::stealing::WRITER_SPIN_NS

use super::LockKind;
use super::platform::Native;
use super::rw_semaphore::{Era, RwSemaphore};
use super::stealing::Policy;
use super::waitq::ReaderBatch;

/// The v3.16-v5.2 era: see the module doc.
pub struct Xadd;

impl Policy for Xadd {
    /// Never: rwsem-xadd has no handoff.
    fn starved(_waited_ns: u64, _lost: u32) -> bool {
        false
    }
    const SPIN_ON_READERS: bool = false;
    /// __rwsem_mark_wake: the readers at the head, up to the first writer.
    fn reader_batch() -> ReaderBatch {
        ReaderBatch::contiguous()
    }
}

impl Era for Xadd {
    const KIND: LockKind = LockKind::RwsemXadd;
    const READER_STEALS: bool = false;
}

/// The v3.16-v5.2 rw_semaphore.
pub type RwsemXadd<P = Native> = RwSemaphore<P, Xadd>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::stealing::{
        READER_BIAS, WRITER_LOCKED, WRITER_SPIN_NS, readers_to_wake, spin_budget_ns,
    };
    use crate::locks::waitq::{Mode, Req};

    #[test]
    fn writers_spin_on_a_writer_owner_and_never_on_readers() {
        assert_eq!(
            spin_budget_ns(WRITER_LOCKED, Xadd::SPIN_ON_READERS),
            Some(WRITER_SPIN_NS)
        );
        assert_eq!(spin_budget_ns(3 * READER_BIAS, Xadd::SPIN_ON_READERS), None);
        // Free: spin to steal it.
        assert_eq!(
            spin_budget_ns(0, Xadd::SPIN_ON_READERS),
            Some(WRITER_SPIN_NS)
        );
    }

    #[test]
    fn nobody_is_ever_starved() {
        assert!(!Xadd::starved(u64::MAX, u32::MAX));
    }

    #[test]
    fn a_wake_takes_the_head_readers_up_to_the_first_writer() {
        let queue: Vec<Req> = "RRWRR"
            .chars()
            .map(|c| Req {
                mode: if c == 'R' { Mode::Read } else { Mode::Write },
                since_us: 0,
            })
            .collect();
        assert_eq!(readers_to_wake::<Xadd>(&queue), [0, 1]);
    }
}

#[cfg(all(test, shuttle))]
mod model {
    use super::RwsemXadd;
    use crate::locks::model_check::{Op::*, check, op_mix, roles};

    // Bounds: PCT depth 3, schedules as below, each at most
    // model_check::MAX_STEPS steps.
    #[test]
    fn two_threads() {
        check::<RwsemXadd>(2_000, op_mix(2, 4));
    }

    #[test]
    fn three_threads() {
        check::<RwsemXadd>(2_000, op_mix(3, 3));
    }

    #[test]
    fn four_threads() {
        check::<RwsemXadd>(1_000, op_mix(4, 2));
    }

    // Readers without stealing park on a free lock with waiters: the wake
    // that is due must find them (a lost one shows as a deadlock).
    #[test]
    fn readers_queue_behind_writers_without_stealing() {
        check::<RwsemXadd>(2_000, roles(&[Write, Read, Read, Write]));
    }
}
