//! `spinlock`: the ticket spinlock of x86 Linux 2.6.25 to 4.1
//! (arch_spin_lock / __ticket_spin_lock, replaced by qspinlock in 4.2).
//!
//! FIFO: each arrival takes the next ticket with one atomic add, then every
//! waiter polls the one shared word until the "now serving" number reaches its
//! ticket. A release bumps "now serving", which invalidates the line in every
//! waiter's cache at once: the `s + c*k/2` handoff cost of Boyd-Wickizer et al.
//! ("Non-scalable locks are dangerous", 2012).
//!
//! # State word (u32)
//! ```text
//!  31            16 15             0
//! +----------------+----------------+
//! |  tail (next)   |  head (serving)|
//! +----------------+----------------+
//! ```
//! - `head`: the ticket being served; written only by the holder, in unlock.
//! - `tail`: the next ticket to hand out; bumped by every arrival.
//!
//! Invariants: free iff `head == tail`; `tail - head` (mod 2^16) holders plus
//! waiters, so at most 65535 contenders (the CLI caps threads at 4096); tickets
//! are served in the order taken. Both halves wrap mod 2^16: the tail's carry
//! falls off the top of the word, and [`release_delta`] keeps the head's
//! from spilling into the tail.

use super::LockKind;
use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::raw::{KindInfo, exclusive_only};
use super::spin_wait::SpinWait;
use crate::mode::Mode;

/// One arrival's increment of the word: the next ticket.
const TICKET: u32 = 1 << 16;

/// The two halves of the word, decoded: the lock's whole state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TicketState {
    /// The ticket being served (held, if anyone holds).
    pub head: u16,
    /// The ticket the next arrival takes.
    pub tail: u16,
}

impl TicketState {
    pub fn from_word(word: u32) -> TicketState {
        TicketState {
            head: word as u16,
            tail: (word >> 16) as u16,
        }
    }

    pub fn word(self) -> u32 {
        (u32::from(self.tail) << 16) | u32::from(self.head)
    }

    /// Nobody holds or waits.
    pub fn is_free(self) -> bool {
        self.head == self.tail
    }

    /// Holders plus waiters (0 or 1 holder; the rest wait in ticket order).
    pub fn contenders(self) -> u16 {
        self.tail.wrapping_sub(self.head)
    }

    /// An arrival: the ticket it takes and the state after.
    pub fn take_ticket(self) -> (u16, TicketState) {
        let next = TicketState {
            tail: self.tail.wrapping_add(1),
            ..self
        };
        (self.tail, next)
    }

    /// Whether the holder of `ticket` may enter: only when it is being served.
    pub fn serves(self, ticket: u16) -> bool {
        self.head == ticket
    }

    /// A release: the next ticket in order is served.
    pub fn released(self) -> TicketState {
        TicketState {
            head: self.head.wrapping_add(1),
            ..self
        }
    }
}

/// What a release adds to the word (mod 2^32) to advance `head` by one without
/// carrying into `tail`: +1, or -0xffff when `head` wraps from 0xffff to 0.
/// (The kernel increments the head half-word alone; one 32-bit add does the
/// same once the wrap is folded in.)
pub fn release_delta(head: u16) -> u32 {
    if head == u16::MAX {
        0u32.wrapping_sub(u32::from(u16::MAX))
    } else {
        1
    }
}

/// The ticket spinlock. A token is the holder's ticket, so a release is one
/// add on the word, as the kernel's `__ticket_spin_unlock` is one add on the
/// head half-word (no load of the word first).
#[derive(Debug)]
pub struct TicketSpinlock<P: Platform = Native> {
    word: P::AtomicU32,
}

impl<P: Platform> TicketSpinlock<P> {
    /// A snapshot of the state, for tests and reports (racy by nature).
    #[inline]
    pub fn state(&self) -> TicketState {
        TicketState::from_word(self.word.load(Ordering::Relaxed))
    }

    /// spin_lock: preemption off, then take a ticket and wait for it; one
    /// atomic add when uncontended.
    #[inline]
    fn acquire(&self, mode: Mode) -> Ticket {
        P::preempt_disable();
        let before = TicketState::from_word(self.word.fetch_add(TICKET, Ordering::Acquire));
        let (ticket, _) = before.take_ticket();
        if !before.serves(ticket) {
            self.acquire_slow(mode, ticket);
        }
        Ticket(ticket)
    }

    /// Wait for `ticket` to be served.
    #[cold]
    fn acquire_slow(&self, mode: Mode, ticket: u16) {
        let mut wait = SpinWait::<P>::begin(mode);
        // Step 1: poll the shared word until our number comes up; every waiter
        // re-reads this one line after each release.
        while !self.state_acquire().serves(ticket) {
            wait.poll();
        }
        // Step 2: the previous holder's release (and so its critical section)
        // happens-before this acquire load; we hold the lock.
        wait.granted();
    }

    fn state_acquire(&self) -> TicketState {
        TicketState::from_word(self.word.load(Ordering::Acquire))
    }

    /// arch_spin_trylock: take a ticket only if it would be served at once.
    #[inline]
    fn try_acquire(&self) -> Option<Ticket> {
        P::preempt_disable();
        let state = self.state();
        let taken = state.is_free()
            && self
                .word
                .compare_exchange(
                    state.word(),
                    state.take_ticket().1.word(),
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_ok();
        if !taken {
            P::preempt_enable();
        }
        taken.then_some(Ticket(state.tail))
    }

    /// spin_unlock: serve the ticket after the holder's, then preemption back on.
    #[inline]
    fn release(&self, held: Ticket) {
        // The holder's ticket is `head`: only the holder writes `head`.
        self.word
            .fetch_add(release_delta(held.0), Ordering::Release);
        P::preempt_enable();
    }
}

impl<P: Platform> KindInfo for TicketSpinlock<P> {
    const KIND: LockKind = LockKind::Spinlock;
    const SHARED_READERS: bool = false;
    const HAS_DOWNGRADE: bool = false;
}

// SAFETY: one ticket is served at a time and only the served ticket's owner
// returns from `acquire`; `release` serves the next one. Shared requests take
// the same exclusive path (SHARED_READERS = false).
/// The ticket a holder was served: what its release advances past.
#[must_use = "a ticket must be passed to the unlock"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u16);

exclusive_only!(
    TicketSpinlock,
    Ticket,
    TicketSpinlock {
        word: P::AtomicU32::new(0)
    },
    acquire,
    try_acquire,
    release
);

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;
    use crate::locks::RawRwLock;

    #[test]
    fn word_round_trips_and_halves_are_where_documented() {
        let s = TicketState::from_word(0x0003_0001);
        assert_eq!(s, TicketState { head: 1, tail: 3 });
        assert_eq!(s.word(), 0x0003_0001);
        assert_eq!(s.contenders(), 2);
    }

    #[test]
    fn tickets_are_served_in_the_order_taken() {
        let mut s = TicketState { head: 0, tail: 0 };
        let mut tickets = Vec::new();
        for _ in 0..3 {
            let (t, next) = s.take_ticket();
            tickets.push(t);
            s = next;
        }
        // The first arrival is served at once; the others wait in order.
        assert!(s.serves(tickets[0]) && !s.serves(tickets[1]));
        s = s.released();
        assert!(s.serves(tickets[1]) && !s.serves(tickets[2]));
        s = s.released();
        assert!(s.serves(tickets[2]));
        assert!(!s.is_free());
        assert!(s.released().is_free());
    }

    #[test]
    fn release_delta_wraps_head_without_touching_tail() {
        for (head, tail) in [
            (0u16, 5u16),
            (0xfffe, 0xffff),
            (0xffff, 0x0003),
            (0xffff, 0),
        ] {
            let before = TicketState { head, tail };
            let word = before.word().wrapping_add(release_delta(head));
            assert_eq!(TicketState::from_word(word), before.released());
        }
    }

    #[test]
    fn lock_wraps_past_65536_tickets() {
        let lock = <TicketSpinlock>::new();
        for _ in 0..70_000 {
            let t = lock.lock_exclusive();
            // SAFETY: held just above.
            unsafe { lock.unlock_exclusive(t) };
        }
        assert!(lock.state().is_free());
        assert!(lock.try_lock_exclusive().is_some());
        assert!(lock.try_lock_shared().is_none());
    }
}

#[cfg(all(test, shuttle))]
mod shuttle_tests {
    use super::TicketSpinlock;
    use crate::locks::model_check::{Op::*, check, roles};

    // Bound, for each check here: 2000 random + 2000 PCT (depth 3)
    // schedules, each at most model_check::MAX_STEPS steps; 3 threads x 2 acquisitions each.
    #[test]
    fn three_contenders_exclude_and_all_finish() {
        check::<TicketSpinlock>(2000, roles(&[Write, Read, Downgrade]));
    }

    #[test]
    fn try_paths_exclude_and_all_finish() {
        check::<TicketSpinlock>(2000, roles(&[Write, TryWrite, TryRead]));
    }
}
