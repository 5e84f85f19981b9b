//! The exclusion check run by every holder.
//!
//! Two shared counts, kept apart from the lock under test: readers inside and
//! writers inside. A holder adds itself right after its acquire returns and
//! checks what it sees; it checks again right before releasing, so an intruder
//! that arrived during the hold is caught by one side or the other. This is
//! synchro-test's VALIDATE_OPERATORS (TRACK/CHECK around every down/up) and
//! locktorture's lock_is_write_held / lock_is_read_held checks.
//!
//! Invariants a correct lock keeps:
//! - a writer sees writers == 1 (itself) and readers == 0;
//! - a reader sees writers == 0;
//! - for an exclusive-only kind (`!RawRwLock::SHARED_READERS`) a reader also sees
//!   readers == 1: its reads take the exclusive path.
//!
//! The counts use SeqCst so every holder's view is one total order: a correct
//! lock's release/acquire already orders the previous holder's decrement before
//! our increment, so a violation seen here is the lock's fault, not the checker's.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// Who is inside the lock, by mode. Each count on its own line so the checker's
/// traffic does not share a line with anything else.
#[derive(Default)]
pub struct Occupancy {
    readers: CachePadded<AtomicUsize>,
    writers: CachePadded<AtomicUsize>,
}

/// Whether a holder saw the lock's invariant hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Seen {
    Ok,
    Violation,
}

impl Seen {
    fn from(ok: bool) -> Seen {
        if ok { Seen::Ok } else { Seen::Violation }
    }

    /// Both observations held.
    pub fn and(self, other: Seen) -> Seen {
        Seen::from(self == Seen::Ok && other == Seen::Ok)
    }
}

impl Occupancy {
    /// A writer just got the lock.
    pub fn enter_write(&self) -> Seen {
        let w = self.writers.fetch_add(1, SeqCst) + 1;
        let r = self.readers.load(SeqCst);
        Seen::from(w == 1 && r == 0)
    }

    /// A writer is about to release.
    pub fn exit_write(&self) -> Seen {
        let r = self.readers.load(SeqCst);
        let w = self.writers.fetch_sub(1, SeqCst);
        Seen::from(w == 1 && r == 0)
    }

    /// A reader just got the lock; `shared` is the kind's `SHARED_READERS`.
    pub fn enter_read(&self, shared: bool) -> Seen {
        let r = self.readers.fetch_add(1, SeqCst) + 1;
        let w = self.writers.load(SeqCst);
        Seen::from(w == 0 && (shared || r == 1))
    }

    /// A reader is about to release.
    pub fn exit_read(&self, shared: bool) -> Seen {
        let w = self.writers.load(SeqCst);
        let r = self.readers.fetch_sub(1, SeqCst);
        Seen::from(w == 0 && (shared || r == 1))
    }

    /// A writer is about to downgrade: it becomes a reader while it still holds
    /// the lock exclusively, counted as a reader before it stops counting as a
    /// writer so it is never invisible (synchro-test's do_downgrade_write order).
    pub fn write_to_read(&self) -> Seen {
        let r = self.readers.fetch_add(1, SeqCst);
        let w = self.writers.fetch_sub(1, SeqCst);
        Seen::from(w == 1 && r == 0)
    }

    /// A downgraded holder checks it is a reader among readers only.
    pub fn check_read(&self, shared: bool) -> Seen {
        let w = self.writers.load(SeqCst);
        let r = self.readers.load(SeqCst);
        Seen::from(w == 0 && r >= 1 && (shared || r == 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Seen::*;

    #[test]
    fn lone_writer_and_shared_readers_pass() {
        let o = Occupancy::default();
        assert_eq!(o.enter_write(), Ok);
        assert_eq!(o.exit_write(), Ok);
        assert_eq!(o.enter_read(true), Ok);
        assert_eq!(o.enter_read(true), Ok);
        assert_eq!(o.exit_read(true), Ok);
        assert_eq!(o.exit_read(true), Ok);
    }

    #[test]
    fn a_second_writer_is_caught_by_both_and_on_exit() {
        let o = Occupancy::default();
        assert_eq!(o.enter_write(), Ok);
        assert_eq!(o.enter_write(), Violation);
        assert_eq!(o.exit_write(), Violation);
        // The first writer, alone again, is fine.
        assert_eq!(o.exit_write(), Ok);
    }

    #[test]
    fn a_writer_among_readers_is_caught_from_both_sides() {
        let o = Occupancy::default();
        assert_eq!(o.enter_read(true), Ok);
        assert_eq!(o.enter_write(), Violation);
        // The reader, checking before its release, sees the writer too.
        assert_eq!(o.exit_read(true), Violation);
        assert_eq!(o.exit_write(), Ok);
    }

    #[test]
    fn a_reader_arriving_during_a_write_is_caught() {
        let o = Occupancy::default();
        assert_eq!(o.enter_write(), Ok);
        assert_eq!(o.enter_read(true), Violation);
        assert_eq!(o.exit_write(), Violation);
        assert_eq!(o.exit_read(true), Ok);
    }

    #[test]
    fn exclusive_only_kinds_allow_one_reader_at_a_time() {
        let o = Occupancy::default();
        assert_eq!(o.enter_read(false), Ok);
        assert_eq!(o.enter_read(false), Violation);
        assert_eq!(o.exit_read(false), Violation);
        assert_eq!(o.exit_read(false), Ok);
    }

    #[test]
    fn downgrade_turns_the_writer_into_a_reader_that_others_may_join() {
        let o = Occupancy::default();
        assert_eq!(o.enter_write(), Ok);
        assert_eq!(o.write_to_read(), Ok);
        assert_eq!(o.check_read(true), Ok);
        assert_eq!(o.enter_read(true), Ok);
        assert_eq!(o.check_read(true), Ok);
        // ...but not on an exclusive-only kind, and never a writer.
        assert_eq!(o.check_read(false), Violation);
        assert_eq!(o.enter_write(), Violation);
    }

    #[test]
    fn downgrade_with_an_intruder_inside_is_caught() {
        let o = Occupancy::default();
        assert_eq!(o.enter_write(), Ok);
        assert_eq!(o.enter_read(true), Violation);
        assert_eq!(o.write_to_read(), Violation);
    }

    #[test]
    fn and_needs_both() {
        assert_eq!(Ok.and(Ok), Ok);
        assert_eq!(Ok.and(Violation), Violation);
        assert_eq!(Violation.and(Ok), Violation);
    }
}
