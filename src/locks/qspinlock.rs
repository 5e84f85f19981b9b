//! `qspinlock`: the MCS queue spinlock of x86 Linux since 4.2
//! (kernel/locking/qspinlock.c, queued_spin_lock and queued_spin_lock_slowpath).
//!
//! Uncontended it is one CAS on the lock word. Contended, each waiter joins a
//! queue of nodes and polls a flag in its OWN cache-padded node, so a release
//! disturbs one waiter, not all of them: a handoff costs one line transfer
//! whatever the number of waiters (Mellor-Crummey and Scott 1991). Only the queue head polls the lock word, waiting for
//! the holder; on release it claims the lock and makes the next node head.
//!
//! As in the kernel, a node is needed only while its owner waits (the holder
//! needs none, the kernel's per-CPU `qnodes` are reused per acquisition), so
//! the node lives on the waiter's stack frame and tokens are `()`. Modelled
//! without the kernel's pending-bit shortcut (the first contender spinning on
//! the word instead of queueing) and its paravirt hooks: every contender queues.
//!
//! # State word (usize)
//! ```text
//!  63                                            1       0
//! +-----------------------------------------------+--------+
//! | tail: address of the last queued node         | LOCKED |
//! +-----------------------------------------------+--------+
//! ```
//! - `LOCKED`: someone holds the lock (the kernel's locked byte).
//! - `tail`: the last waiter's node (0: nobody queued). Nodes are cache-line
//!   aligned, so the low bits are free.
//!
//! Invariants:
//! - the fast path and trylock take the lock only from word 0 (no holder, no
//!   queue), so a queued waiter is never overtaken: FIFO by enqueue order;
//! - while the tail is non-zero only the queue head sets `LOCKED`;
//! - other threads touch a node only between its owner's enqueue and its
//!   handoff (or its removal of itself as tail), all inside the owner's slow
//!   path, so the node may live on the owner's stack.

use super::LockKind;
use super::platform::{AtomicFlag, AtomicInt, Native, Ordering, Platform};
use super::raw::{KindInfo, exclusive_only};
use super::spin_wait::SpinWait;
use crate::mode::Mode;
use crossbeam_utils::CachePadded;

/// Someone holds the lock.
const LOCKED: usize = 1;
/// The tail bits: a node address.
const TAIL: usize = !LOCKED;

/// The lock word, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McsState {
    pub locked: bool,
    /// The last queued waiter's node address, 0 when nobody queues. Opaque:
    /// compare it, never dereference it.
    pub tail: usize,
}

impl McsState {
    pub fn from_word(word: usize) -> McsState {
        McsState {
            locked: word & LOCKED != 0,
            tail: word & TAIL,
        }
    }
}

/// queued_spin_trylock: an arrival may take the lock directly only when
/// nobody holds it and nobody queues.
pub fn may_take_directly(word: usize) -> bool {
    word == 0
}

/// The word after the node at `node` has become the tail (xchg_tail): the
/// holder's bit is kept.
pub fn with_tail(word: usize, node: usize) -> usize {
    debug_assert_eq!(node & LOCKED, 0, "node addresses are cache-line aligned");
    (word & LOCKED) | node
}

/// The queue head may claim the lock once the holder has released it.
pub fn head_may_claim(word: usize) -> bool {
    word & LOCKED == 0
}

/// How the queue head claims a released lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Nobody queued behind the head: one CAS sets the hold's bits and clears
    /// the tail.
    Alone,
    /// Others queued behind: set the hold's bits, then make the next node head.
    AheadOfOthers,
}

/// The head's claim, given the word it saw and its own node address.
pub fn claim(word: usize, node: usize) -> Claim {
    if word & TAIL == node {
        Claim::Alone
    } else {
        Claim::AheadOfOthers
    }
}

/// A waiter's queue node (the kernel's struct mcs_spinlock).
#[derive(Debug)]
struct Node<P: Platform> {
    /// The next waiter's node, linked by that waiter after it became the tail.
    next: P::AtomicUsize,
    /// Set by the predecessor when this waiter becomes the queue head (the
    /// kernel's `mcs->locked`).
    head: P::AtomicBool,
}

/// The MCS queue spinlock. Tokens are `()`: the holder needs no node.
#[derive(Debug)]
pub struct McsSpinlock<P: Platform = Native> {
    word: P::AtomicUsize,
}

impl<P: Platform> McsSpinlock<P> {
    /// A snapshot of the state, for tests and reports (racy by nature).
    pub fn state(&self) -> McsState {
        McsState::from_word(self.word.load(Ordering::Relaxed))
    }

    /// One CAS from an idle word: the fast path and trylock.
    #[inline]
    pub(crate) fn try_take(&self) -> bool {
        self.word
            .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Take the lock for another lock's internal use (qrwlock's wait_lock,
    /// the sleeping locks' osq): counts nothing itself, its polls go to the
    /// caller's `wait`.
    #[inline]
    pub(crate) fn acquire(&self, wait: &mut SpinWait<P>) {
        if !self.try_take() {
            self.lock_queued(wait);
        }
    }

    /// queued_spin_unlock: clear LOCKED, leaving the queue to its head.
    #[inline]
    pub(crate) fn release(&self) {
        self.word.fetch_sub(LOCKED, Ordering::Release);
    }

    /// spin_lock: preemption off, then the lock.
    #[inline]
    fn lock(&self, mode: Mode) {
        P::preempt_disable();
        if !self.try_take() {
            self.lock_slow(mode);
        }
    }

    #[cold]
    fn lock_slow(&self, mode: Mode) {
        let mut wait = SpinWait::<P>::begin(mode);
        self.lock_queued(&mut wait);
        wait.granted();
    }

    /// queued_spin_lock_slowpath without the pending bit.
    #[cold]
    fn lock_queued(&self, wait: &mut SpinWait<P>) {
        // Step 1: a node on this stack frame (the kernel's per-CPU qnode).
        let node = CachePadded::new(Node::<P> {
            next: P::AtomicUsize::new(0),
            head: P::AtomicBool::new(false),
        });
        let me = &*node as *const Node<P> as usize;
        // Step 2: one more try before queueing, as the kernel does.
        if self.try_take() {
            return;
        }
        // Step 3: become the tail; whoever was tail before is our predecessor.
        let prev = self.swap_tail(me);
        // Step 4: behind a predecessor, link in and poll our own node until it
        // hands us the head of the queue.
        if prev != 0 {
            // SAFETY: `prev` was the tail, so its owner is in this function
            // between Step 3 and Step 7; it cannot return before it reads this
            // link (its Step 6 CAS fails: the tail is now us), so its node is alive.
            unsafe { &*(prev as *const Node<P>) }
                .next
                .store(me, Ordering::Release);
            while !node.head.load(Ordering::Acquire) {
                wait.poll();
            }
        }
        // Step 5: as head, poll the lock word until the holder releases.
        let mut word = self.word.load(Ordering::Acquire);
        while !head_may_claim(word) {
            wait.poll();
            word = self.word.load(Ordering::Acquire);
        }
        // Step 6: claim. Alone, one CAS takes the lock and empties the queue;
        // it fails only if someone enqueued meanwhile (nobody else sets
        // LOCKED while the tail is non-zero).
        while claim(word, me) == Claim::Alone {
            match self
                .word
                .compare_exchange(word, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => word = now,
            }
        }
        self.word.fetch_or(LOCKED, Ordering::Acquire);
        // Step 7: hand the head to the next node once it has linked itself.
        let next = loop {
            let next = node.next.load(Ordering::Acquire);
            if next != 0 {
                break next;
            }
            wait.poll();
        };
        // SAFETY: the next waiter polls its node in Step 4 until this store;
        // after it, neither of us touches the other's node.
        unsafe { &*(next as *const Node<P>) }
            .head
            .store(true, Ordering::Release);
    }

    /// xchg_tail: a CAS loop, as the kernel's for NR_CPUS >= 16K, because the
    /// tail shares the word with the holder's bits. Returns the previous tail.
    fn swap_tail(&self, me: usize) -> usize {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            // AcqRel: publish our node's initialisation to the next waiter,
            // and see the predecessor's before writing its `next`.
            match self.word.compare_exchange_weak(
                word,
                with_tail(word, me),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(prev) => return prev & TAIL,
                Err(now) => word = now,
            }
        }
    }

    /// spin_trylock.
    #[inline]
    fn try_lock(&self) -> Option<()> {
        P::preempt_disable();
        let taken = may_take_directly(self.word.load(Ordering::Relaxed)) && self.try_take();
        if !taken {
            P::preempt_enable();
        }
        taken.then_some(())
    }

    /// spin_unlock: release, then preemption back on.
    #[inline]
    fn unlock(&self, _: ()) {
        self.release();
        P::preempt_enable();
    }
}

impl<P: Platform> KindInfo for McsSpinlock<P> {
    const KIND: LockKind = LockKind::Qspinlock;
    const SHARED_READERS: bool = false;
    const HAS_DOWNGRADE: bool = false;
}

exclusive_only!(
    McsSpinlock,
    (),
    McsSpinlock {
        word: P::AtomicUsize::new(0)
    },
    lock,
    try_lock,
    unlock
);

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;
    use crate::locks::RawRwLock;

    const A: usize = 0x1000;
    const B: usize = 0x2000;

    #[test]
    fn only_an_idle_word_is_taken_directly() {
        assert!(may_take_directly(0));
        assert!(!may_take_directly(LOCKED));
        // A released lock with a queue belongs to the queue head.
        assert!(!may_take_directly(A));
    }

    #[test]
    fn enqueue_keeps_the_holder_and_replaces_the_tail() {
        assert_eq!(with_tail(LOCKED | A, B), LOCKED | B);
        assert_eq!(with_tail(A, B), B);
        assert_eq!(
            McsState::from_word(LOCKED | B),
            McsState {
                locked: true,
                tail: B
            }
        );
    }

    #[test]
    fn head_claims_after_release_alone_or_ahead_of_others() {
        assert!(!head_may_claim(LOCKED | A));
        assert!(head_may_claim(A));
        assert_eq!(claim(A, A), Claim::Alone);
        assert_eq!(claim(B, A), Claim::AheadOfOthers);
    }

    #[test]
    fn nodes_are_cache_padded_apart() {
        // The claim each waiter polls its own line rests on this.
        assert!(std::mem::align_of::<CachePadded<Node<Native>>>() >= 64);
        assert_eq!(
            std::mem::align_of::<CachePadded<Node<Native>>>() & LOCKED,
            0
        );
    }

    #[test]
    fn try_lock_fails_while_held_and_release_frees() {
        let lock = <McsSpinlock>::new();
        lock.lock_exclusive();
        assert!(lock.try_lock_shared().is_none());
        assert!(lock.state().locked);
        // SAFETY: held just above.
        unsafe { lock.unlock_exclusive(()) };
        assert_eq!(lock.state(), McsState::from_word(0));
        assert!(lock.try_lock_exclusive().is_some());
    }
}

#[cfg(all(test, shuttle))]
mod shuttle_tests {
    use super::McsSpinlock;
    use crate::locks::model_check::{Op::*, check, roles};

    // Bound, for each check here: 2000 random + 2000 PCT (depth 3)
    // schedules, each at most model_check::MAX_STEPS steps. Three contenders make a queue of two
    // behind a holder, so the link, handoff and tail-CAS races all occur.
    #[test]
    fn three_contenders_exclude_and_all_finish() {
        check::<McsSpinlock>(2000, roles(&[Write, Read, Downgrade]));
    }

    // Four threads: a queue of three, with a trylock racing the tail.
    #[test]
    fn four_contenders_with_a_trylock() {
        check::<McsSpinlock>(2000, roles(&[Write, Write, Read, TryWrite]));
    }
}
