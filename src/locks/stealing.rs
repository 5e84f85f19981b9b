//! The machinery the rw_semaphores since v3.10 and the mutex share: writer
//! lock stealing, optimistic spinning behind an osq, the woken first waiter
//! that must still win the lock, and handoff.
//!
//! The kernel locks (kernel/locking/rwsem-xadd.c v3.10-v5.2,
//! kernel/locking/rwsem.c since v5.3, kernel/locking/mutex.c since v4.10)
//! work the same way on the writer side: a release frees the lock and then
//! wakes the first waiter, which must take the lock itself when it runs;
//! until then any running writer may take it (steal). Writers that find the
//! lock held spin first, but only one of them polls the lock word: the
//! others wait their turn in the osq (kernel/locking/osq_lock.c, an MCS
//! queue of spinners, each polling its own node; here a [`McsSpinlock`]).
//! They differ in what the [`Policy`] says: when a first waiter that keeps
//! losing counts as starved (it then sets HANDOFF, which reserves the free
//! lock for it; rwsem-xadd never does), whether writers spin on a
//! reader-owned lock, and which queued readers one wake takes.
//!
//! # State word (one `usize`)
//!
//! | bits  | name           | meaning                                                    |
//! |-------|----------------|------------------------------------------------------------|
//! | 0     | WRITER_LOCKED  | a writer (or the mutex owner) holds the lock               |
//! | 1     | WAITERS        | the main wait queue is non-empty                           |
//! | 2     | HANDOFF        | the lock, once free, is reserved for the first waiter      |
//! | 3     | FIRST_OUT      | the first waiter is a writer woken out of the main queue   |
//! | 4     | FIRST_PARKED   | ... and it lost the race and is parked on the first slot   |
//! | 5     | NONSPINNABLE   | a writer's spin on the reader-owned lock timed out          |
//! | 6-7   |                | reserved                                                   |
//! | 8-63  | reader count   | readers (rwsem only), in units of READER_BIAS              |
//!
//! Bits 0-2 and 8-63 are rwsem.c's count word (RWSEM_WRITER_LOCKED,
//! RWSEM_FLAG_WAITERS, RWSEM_FLAG_HANDOFF, RWSEM_READER_SHIFT = 8);
//! NONSPINNABLE is the flag rwsem.c keeps in its owner word
//! (RWSEM_NONSPINNABLE), moved here so no extra word is touched. FIRST_OUT
//! and FIRST_PARKED stand for what the kernel has for free: its woken writer
//! stays on the wait list, first, until it gets the lock. parking_lot_core
//! removes a woken thread from its queue and can only append, so the woken
//! writer that loses parks again on a second key, the first slot, and these
//! bits say where it is.
//!
//! # Invariants
//! - The reader count is holders plus readers whose fast-path add failed and
//!   is about to be taken back (rwsem_read_trylock adds first and checks
//!   after). With WRITER_LOCKED set, every count is such a failed add.
//! - A failed add is taken back like an up_read: whoever takes the count to
//!   0 on a lock with waiters wakes them, so a release that saw the
//!   transient count as a holder loses no wake-up.
//! - WAITERS is set exactly while the main queue is non-empty: it changes only
//!   in a park's validate or a wake's commit, under the main queue lock.
//! - FIRST_PARKED is set exactly while the first slot holds its writer, and
//!   implies FIRST_OUT. At most one writer is ever out of the queue.
//! - FIRST_OUT is set by the wake that takes the head writer without granting
//!   it the lock, and cleared when that writer gets the lock.
//! - While FIRST_OUT is set the out-of-queue writer is the first waiter: no
//!   wake touches the main queue, and readers may not take the fast path.
//! - HANDOFF is set only on behalf of the first waiter (by that writer itself,
//!   or by a wake that found the lock stolen from the queue head). While set,
//!   only the first waiter may take a free lock; granting it clears HANDOFF.
//! - NONSPINNABLE is set only while readers own the lock, and cleared by any
//!   writer's acquisition and by the wake after the lock became free.
//! - A thread parks only on a state in which someone is bound to wake it: the
//!   lock is held, or HANDOFF is set (the free lock is then reserved and the
//!   wake that reserved it, or the out-of-queue writer, is still to come), or
//!   (a reader of a kind without reader stealing) the lock is free with
//!   WAITERS or FIRST_OUT set, which a release's wake that has not yet taken
//!   the queue lock, or the out-of-queue writer, is bound to serve.

use super::RawRwLock;
use super::platform::{AtomicInt, Ordering, Platform, SPINS_PER_CLOCK_READ};
use super::qspinlock::McsSpinlock;
use super::spin_wait::SpinWait;
use super::stats::{self, Event};
use super::waitq::{Mode, Pick, ReaderBatch, Req, Slot, WaitQueue, WakeType, Woken, picked};
use std::cell::Cell;
use std::marker::PhantomData;

pub const WRITER_LOCKED: usize = 1 << 0;
pub const WAITERS: usize = 1 << 1;
pub const HANDOFF: usize = 1 << 2;
pub const FIRST_OUT: usize = 1 << 3;
pub const FIRST_PARKED: usize = 1 << 4;
pub const NONSPINNABLE: usize = 1 << 5;
/// rwsem.c RWSEM_READER_SHIFT.
pub const READER_SHIFT: u32 = 8;
pub const READER_BIAS: usize = 1 << READER_SHIFT;
pub const READER_MASK: usize = !(READER_BIAS - 1);
/// Held in any mode (rwsem.c RWSEM_LOCK_MASK).
pub const LOCK_MASK: usize = WRITER_LOCKED | READER_MASK;

/// rwsem.c MAX_READERS_WAKEUP (0x100): readers one wake-up may take, "even
/// when writers are also present in the queue".
pub const MAX_READERS_WAKEUP: usize = 0x100;

/// How long a writer spins on a writer-owned lock before sleeping.
// The kernel spins while the owner is on a CPU and stops at need_resched();
// the model sees neither, so an owner counts as running while it holds the
// lock, for at most this long. 25 us is rwsem.c's own cap for spinning on a
// reader-owned lock (rwsem_rspin_threshold), reused so the two bounds agree.
pub const WRITER_SPIN_NS: u64 = 25_000;

/// What tells the kinds built on [`Core`] apart.
pub trait Policy: 'static {
    /// Whether a first waiter that has waited `waited_ns` since it queued,
    /// and lost `lost` races since it was last woken to compete (0 when a
    /// waker judges a still-queued waiter), is starved: from then on the free
    /// lock is reserved for it (HANDOFF).
    fn starved(waited_ns: u64, lost: u32) -> bool;
    /// Whether writers spin on a reader-owned lock (for at most
    /// [`rspin_threshold_ns`], then setting NONSPINNABLE). False: a writer
    /// that finds readers owning the lock stops spinning at once.
    const SPIN_ON_READERS: bool;
    /// Which queued readers one wake takes when a reader is first (never
    /// consulted for the mutex, whose queue holds no readers).
    fn reader_batch() -> ReaderBatch;
}

/// Shared holders in `state`.
pub fn readers(state: usize) -> usize {
    state >> READER_SHIFT
}

/// Writer lock stealing: a writer that is not the first waiter may take the
/// lock when it is free and not reserved, whoever is queued (rwsem.c
/// `rwsem_try_write_lock_unqueued`; mutex.c `__mutex_trylock` without the
/// handoff).
pub fn may_steal(state: usize) -> bool {
    state & (LOCK_MASK | HANDOFF) == 0
}

/// The state after a writer takes the lock from `state`: its bit set, and
/// NONSPINNABLE gone (rwsem_set_owner overwrites the owner word's flags).
pub fn with_writer(state: usize) -> usize {
    (state | WRITER_LOCKED) & !NONSPINNABLE
}

/// Whether readers own the lock in `state` (failed adds included, which the
/// model cannot tell from holders; the kernel's owner word can).
pub fn reader_owned(state: usize) -> bool {
    state & WRITER_LOCKED == 0 && readers(state) > 0
}

/// Whether taking the lock from `state` jumped ahead of a waiting thread.
pub fn jumps_queue(state: usize) -> bool {
    state & (WAITERS | FIRST_OUT) != 0
}

/// rwsem.c `rwsem_rspin_threshold`: (10 + readers/2) us, readers capped at
/// 30, so at most 25 us.
pub fn rspin_threshold_ns(readers: usize) -> u64 {
    (20 + readers.min(30) as u64) * 1_000 / 2
}

/// How long a stealing writer may spin on `state` before it queues; `None`:
/// do not spin. A reserved lock (HANDOFF) cannot be stolen, so spinning on it
/// is pointless; a NONSPINNABLE one is not spun on (rwsem_can_spin_on_owner);
/// a reader-owned one only if `spin_on_readers`.
pub fn spin_budget_ns(state: usize, spin_on_readers: bool) -> Option<u64> {
    if state & (HANDOFF | NONSPINNABLE) != 0 {
        None
    } else if reader_owned(state) {
        spin_on_readers.then(|| rspin_threshold_ns(readers(state)))
    } else {
        Some(WRITER_SPIN_NS)
    }
}

/// A wake's verdict on a writer that is the first waiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstWriter {
    /// Make it the owner now (handoff): it is starved or the lock is reserved.
    Grant,
    /// Wake it to compete for the free lock (stealers may beat it).
    Wake,
    /// The lock is held (a stealer got in first): leave it asleep, and reserve
    /// the lock for it if it is starved.
    Wait { set_handoff: bool },
}

/// The verdict on the first waiter when it is a writer. `starved` is the
/// kind's [`Policy::starved`] for it.
pub fn first_writer_verdict(state: usize, starved: bool) -> FirstWriter {
    if state & LOCK_MASK != 0 {
        FirstWriter::Wait {
            set_handoff: starved && state & HANDOFF == 0,
        }
    } else if starved || state & HANDOFF != 0 {
        FirstWriter::Grant
    } else {
        FirstWriter::Wake
    }
}

/// A wake's verdict when the first waiter is a reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadReaders {
    /// Grant a reader batch (readers join readers; rwsem_mark_wake).
    Grant,
    /// A writer stole the lock: leave them, reserving it if they are starved.
    Wait { set_handoff: bool },
}

/// The verdict on a reader at the head of the queue.
pub fn head_readers_verdict(state: usize, starved: bool) -> HeadReaders {
    if state & WRITER_LOCKED != 0 {
        HeadReaders::Wait {
            set_handoff: starved && state & HANDOFF == 0,
        }
    } else {
        HeadReaders::Grant
    }
}

/// The queue positions (head first) a wake of kind `Pol` takes when the
/// head is a reader it may grant: the slice form of its reader batch.
pub fn readers_to_wake<Pol: Policy>(queue: &[Req]) -> Vec<usize> {
    let mut batch = Pol::reader_batch();
    picked(queue, |r| batch.pick(r.mode))
}

/// On what terms a spinner may take the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claim {
    /// A writer not (yet) queued: only a free, unreserved lock.
    Steal,
    /// The first waiter: any free lock, HANDOFF being for it.
    AsFirst,
}

/// What a wake decided at the head of the main queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Head {
    Undecided,
    /// Nobody is woken.
    Nothing,
    /// The head writer alone, granted or to compete.
    Writer(Woken),
    /// A reader batch; `counted` of them are already in the reader count.
    Readers {
        counted: usize,
    },
}

/// State word + wait queue + osq, generic over the kind's policy.
pub(crate) struct Core<P: Platform, Pol: Policy> {
    state: P::AtomicUsize,
    queue: WaitQueue<P>,
    /// The optimistic spin queue: only its holder polls `state`.
    osq: McsSpinlock<P>,
    _policy: PhantomData<fn() -> Pol>,
}

impl<P: Platform, Pol: Policy> Core<P, Pol> {
    pub(crate) fn new() -> Self {
        Core {
            state: P::AtomicUsize::new(0),
            queue: WaitQueue::new(),
            osq: <McsSpinlock<P> as RawRwLock>::new(),
            _policy: PhantomData,
        }
    }

    pub(crate) fn state(&self) -> &P::AtomicUsize {
        &self.state
    }

    pub(crate) fn queue(&self) -> &WaitQueue<P> {
        &self.queue
    }

    /// down_write_trylock / the write fast path: only from an idle word
    /// (rwsem.c `rwsem_write_trylock`, mutex.c `__mutex_trylock_fast`). A
    /// NONSPINNABLE left by the last reader phase lives in the kernel's owner
    /// word, not its count, so it does not fail the fast path here either.
    #[inline]
    pub(crate) fn try_lock_idle(&self) -> bool {
        match self
            .state
            .compare_exchange(0, WRITER_LOCKED, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => true,
            Err(NONSPINNABLE) => self
                .state
                .compare_exchange(
                    NONSPINNABLE,
                    WRITER_LOCKED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_ok(),
            Err(_) => false,
        }
    }

    /// One steal attempt (mutex_trylock): the lock if it is free and not
    /// reserved, queued waiters or not.
    #[inline]
    pub(crate) fn try_steal(&self) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        let took = may_steal(s)
            && self
                .state
                .compare_exchange(s, with_writer(s), Ordering::Acquire, Ordering::Relaxed)
                .is_ok();
        if took && jumps_queue(s) {
            stats::count(Event::Steal, 1);
        }
        took
    }

    /// The write slow path: spin, queue, and if woken to compete, lead.
    #[cold]
    pub(crate) fn lock_write_slow(&self) {
        let t0 = P::now_ns();
        // Step 1: optimistic spinning: take the lock if it frees up soon,
        // ahead of any queue (rwsem_optimistic_spin, mutex_optimistic_spin).
        if !self.spin_then_take(Claim::Steal) {
            // Step 2: queue. A writer that finds the lock free and unreserved
            // as it queues takes it instead (rwsem_try_write_lock right after
            // rwsem_add_waiter).
            let req = Req::at(Mode::Write, t0);
            let mut stole_from = None;
            let woken = self.queue.park(Slot::Main, req, || {
                let mut s = self.state.load(Ordering::Relaxed);
                loop {
                    let (new, park) = if may_steal(s) {
                        (with_writer(s), false)
                    } else {
                        (s | WAITERS, true)
                    };
                    match self.state.compare_exchange_weak(
                        s,
                        new,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => {
                            if !park {
                                stole_from = Some(s);
                            }
                            return park;
                        }
                        Err(now) => s = now,
                    }
                }
            });
            match (woken, stole_from) {
                (Some(Woken::Retry), _) => self.lead(req),
                (_, Some(s)) if jumps_queue(s) => stats::count(Event::Steal, 1),
                // Granted by the waker, or took an uncontested lock.
                _ => {}
            }
        }
        stats::note_wait(P::now_ns().saturating_sub(t0));
    }

    /// Spin while the holder is expected to let go soon, taking the lock when
    /// it frees on the terms of `claim`. Returns whether it took the lock.
    ///
    /// rwsem_optimistic_spin / mutex_optimistic_spin: a writer that may not
    /// spin on the lock as it is now does not spin at all
    /// (rwsem_can_spin_on_owner); one that may, queues in the osq first, so
    /// only the osq holder polls the lock word. The first waiter spinning for
    /// its reserved lock skips the osq, as the kernel's does. The time bound
    /// restarts whenever the owner turns from a writer to readers (rwsem.c
    /// re-initialises rspin_threshold then); a spin on readers that runs out
    /// makes the lock NONSPINNABLE where the policy spins on readers.
    fn spin_then_take(&self, claim: Claim) -> bool {
        let first = claim == Claim::AsFirst;
        let seen = |s: usize| if first { s & !HANDOFF } else { s };
        // rwsem_optimistic_spin spins with preemption disabled.
        P::preempt_disable();
        let s = self.state.load(Ordering::Relaxed);
        let mut spins = 0u64;
        let may_spin =
            self.free_for(claim, s) || spin_budget_ns(seen(s), Pol::SPIN_ON_READERS).is_some();
        if !may_spin {
            P::preempt_enable();
            return false;
        }
        if !first {
            let mut wait = SpinWait::<P>::nested();
            self.osq.acquire(&mut wait);
            spins += wait.polls();
        }
        let mut start = P::now_ns();
        let mut readers_before = false;
        let took = loop {
            let s = self.state.load(Ordering::Relaxed);
            if self.free_for(claim, s) {
                let new = if first {
                    with_writer(s) & !(HANDOFF | FIRST_OUT)
                } else {
                    with_writer(s)
                };
                if self
                    .state
                    .compare_exchange_weak(s, new, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    if !first && jumps_queue(s) {
                        stats::count(Event::Steal, 1);
                    }
                    break true;
                }
                continue;
            }
            let Some(budget) = spin_budget_ns(seen(s), Pol::SPIN_ON_READERS) else {
                break false;
            };
            let readers_now = reader_owned(s);
            if readers_now && !readers_before {
                start = P::now_ns();
            }
            readers_before = readers_now;
            spins += 1;
            if spins.is_multiple_of(SPINS_PER_CLOCK_READ)
                && P::now_ns().saturating_sub(start) > budget
            {
                if readers_now && Pol::SPIN_ON_READERS {
                    self.set_nonspinnable();
                }
                break false;
            }
            P::spin_hint_until(start + budget);
        };
        if !first {
            self.osq.release();
        }
        P::preempt_enable();
        stats::count(Event::Spin, spins);
        took
    }

    /// Whether a spinner claiming on `claim`'s terms may take the lock now.
    fn free_for(&self, claim: Claim, s: usize) -> bool {
        match claim {
            Claim::AsFirst => s & LOCK_MASK == 0,
            Claim::Steal => may_steal(s),
        }
    }

    /// rwsem_set_nonspinnable: only while readers still own the lock.
    #[cold]
    fn set_nonspinnable(&self) {
        let set = self
            .state
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| {
                (reader_owned(s) && s & NONSPINNABLE == 0).then_some(s | NONSPINNABLE)
            });
        if set.is_ok() {
            stats::count(Event::NoSpin, 1);
        }
    }

    /// The first waiter after a wake without grant, until it owns the lock:
    /// the kernel's woken writer that retries rwsem_try_write_lock (or
    /// __mutex_trylock_or_handoff) while staying first in the wait list.
    fn lead(&self, req: Req) {
        let mut lost = 0u32;
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & LOCK_MASK == 0 {
                let new = with_writer(s) & !(HANDOFF | FIRST_OUT);
                if self
                    .state
                    .compare_exchange(s, new, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            // Lost the race: a stealer holds the lock.
            lost += 1;
            if s & HANDOFF == 0
                && Pol::starved(req.waited_ns(P::now_ns()), lost)
                && self
                    .state
                    .compare_exchange(s, s | HANDOFF, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            // With the lock reserved, spin to take it the moment it frees
            // (rwsem.c: `if (waiter.handoff_set) rwsem_spin_on_owner`; mutex.c:
            // the first waiter's mutex_optimistic_spin).
            if self.state.load(Ordering::Relaxed) & HANDOFF != 0
                && self.spin_then_take(Claim::AsFirst)
            {
                return;
            }
            let woken = self.queue.park(Slot::First, req, || {
                let mut s = self.state.load(Ordering::Relaxed);
                loop {
                    if s & LOCK_MASK == 0 {
                        return false;
                    }
                    match self.state.compare_exchange_weak(
                        s,
                        s | FIRST_PARKED,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return true,
                        Err(now) => s = now,
                    }
                }
            });
            if woken == Some(Woken::Granted) {
                return;
            }
        }
    }

    /// up_write / mutex_unlock.
    #[inline]
    pub(crate) fn unlock_write(&self) {
        if self
            .state
            .compare_exchange(WRITER_LOCKED, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            self.unlock_write_slow();
        }
    }

    #[cold]
    fn unlock_write_slow(&self) {
        let old = self.state.fetch_and(!WRITER_LOCKED, Ordering::Release);
        if old & (WAITERS | FIRST_PARKED) != 0 {
            self.wake();
        }
    }

    /// After the lock became free: wake whoever is first (rwsem_wake /
    /// __mutex_unlock_slowpath). A NONSPINNABLE left by the readers goes
    /// first (__up_read's and rwsem_cond_wake_waiter's clear_nonspinnable).
    #[cold]
    pub(crate) fn wake(&self) {
        let mut s = self.state.load(Ordering::Relaxed);
        if s & NONSPINNABLE != 0 {
            s = self.state.fetch_and(!NONSPINNABLE, Ordering::Relaxed) & !NONSPINNABLE;
        }
        if s & FIRST_OUT != 0 {
            // If it is running rather than parked, it finds the lock free
            // itself: its park validates against a free lock.
            if s & FIRST_PARKED != 0 {
                self.wake_first();
            }
        } else if s & WAITERS != 0 {
            self.wake_queue(WakeType::Any);
        }
    }

    /// Wake the out-of-queue first waiter: grant it the lock if it is starved
    /// or the lock is reserved, else let it compete.
    fn wake_first(&self) {
        let now = P::now_ns();
        // Written by the pick, read by the commit and afterwards.
        let outcome = Cell::new(Woken::Retry);
        self.queue.wake(
            Slot::First,
            |req| {
                let starved = Pol::starved(req.waited_ns(now), 0);
                let mut s = self.state.load(Ordering::Relaxed);
                loop {
                    let (new, pick, told) = match first_writer_verdict(s, starved) {
                        FirstWriter::Grant => (
                            with_writer(s) & !(HANDOFF | FIRST_OUT | FIRST_PARKED),
                            Pick::Take,
                            Woken::Granted,
                        ),
                        FirstWriter::Wake => (s & !FIRST_PARKED, Pick::Take, Woken::Retry),
                        FirstWriter::Wait { set_handoff } => (
                            if set_handoff { s | HANDOFF } else { s },
                            Pick::Stop,
                            Woken::Retry,
                        ),
                    };
                    if new == s {
                        return pick;
                    }
                    match self.state.compare_exchange_weak(
                        s,
                        new,
                        Ordering::AcqRel,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => {
                            outcome.set(told);
                            return pick;
                        }
                        Err(x) => s = x,
                    }
                }
            },
            |_| outcome.get(),
        );
        if outcome.get() == Woken::Granted {
            stats::count(Event::Handoff, 1);
        }
    }

    /// Walk the main queue (rwsem_mark_wake): a head writer alone, or a batch
    /// of up to MAX_READERS_WAKEUP readers from anywhere in the queue. A
    /// [`WakeType::ReadOwned`] wake only grants readers.
    #[cold]
    pub(crate) fn wake_queue(&self, wake_type: WakeType) {
        let now = P::now_ns();
        // Written by the pick, read by the commit and afterwards.
        let head = Cell::new(Head::Undecided);
        let batch = Cell::new(Pol::reader_batch());
        let pick_reader = |mode| {
            let mut b = batch.get();
            let pick = b.pick(mode);
            batch.set(b);
            pick
        };
        self.queue.wake(
            Slot::Main,
            |req| match head.get() {
                Head::Undecided => {
                    let decided = match (wake_type, req.mode) {
                        (WakeType::ReadOwned, Mode::Write) => Head::Nothing,
                        (WakeType::ReadOwned, Mode::Read) => Head::Readers { counted: 0 },
                        (WakeType::Any, _) => {
                            self.judge_head(req, Pol::starved(req.waited_ns(now), 0))
                        }
                    };
                    head.set(decided);
                    match decided {
                        Head::Readers { .. } => pick_reader(req.mode),
                        Head::Writer(_) => Pick::Take,
                        Head::Nothing | Head::Undecided => Pick::Stop,
                    }
                }
                Head::Readers { .. } => pick_reader(req.mode),
                Head::Writer(_) | Head::Nothing => Pick::Stop,
            },
            |wake| {
                let taken = batch.get().taken();
                let counted = match head.get() {
                    Head::Readers { counted } => counted,
                    _ => 0,
                };
                self.commit_wake(taken - counted, taken > 0, wake.more);
                match head.get() {
                    Head::Writer(told) => told,
                    _ => Woken::Granted,
                }
            },
        );
        let taken = batch.get().taken();
        match head.get() {
            Head::Writer(Woken::Granted) => stats::count(Event::Handoff, 1),
            Head::Readers { .. } if taken > 0 => {
                stats::count(Event::WakeBatch, 1);
                stats::count(Event::ReaderWoken, taken as u64);
            }
            _ => {}
        }
    }

    /// Decide for the head of the main queue after a release, applying the
    /// state change of the verdict atomically with the state it judged.
    fn judge_head(&self, req: Req, starved: bool) -> Head {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let (new, head) = if s & FIRST_OUT != 0 {
                // Another wake already let the head writer out: it is first.
                (s, Head::Nothing)
            } else {
                match req.mode {
                    Mode::Write => match first_writer_verdict(s, starved) {
                        FirstWriter::Grant => {
                            (with_writer(s) & !HANDOFF, Head::Writer(Woken::Granted))
                        }
                        FirstWriter::Wake => (s | FIRST_OUT, Head::Writer(Woken::Retry)),
                        FirstWriter::Wait { set_handoff } => {
                            (if set_handoff { s | HANDOFF } else { s }, Head::Nothing)
                        }
                    },
                    Mode::Read => match head_readers_verdict(s, starved) {
                        HeadReaders::Grant => (s + READER_BIAS, Head::Readers { counted: 1 }),
                        HeadReaders::Wait { set_handoff } => {
                            (if set_handoff { s | HANDOFF } else { s }, Head::Nothing)
                        }
                    },
                }
            };
            if new == s {
                return head;
            }
            match self
                .state
                .compare_exchange_weak(s, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return head,
                Err(x) => s = x,
            }
        }
    }

    /// A wake's last state change, under the queue lock: `extra` more readers
    /// join the count; a granted reader batch ends HANDOFF ("when we've woken
    /// a reader, we no longer need to force writers to give up the lock");
    /// WAITERS goes when the queue emptied.
    fn commit_wake(&self, extra: usize, readers_woken: bool, more: bool) {
        let mut clear = if readers_woken { HANDOFF } else { 0 };
        if !more {
            clear |= WAITERS;
        }
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |s| {
                Some((s + extra * READER_BIAS) & !clear)
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_needs_a_free_unreserved_lock_and_ignores_the_queue() {
        assert!(may_steal(0));
        assert!(may_steal(WAITERS | FIRST_OUT));
        assert!(!may_steal(WAITERS | HANDOFF));
        assert!(!may_steal(WRITER_LOCKED));
        assert!(!may_steal(READER_BIAS | WAITERS));
        assert!(jumps_queue(WAITERS) && jumps_queue(FIRST_OUT) && !jumps_queue(0));
    }

    #[test]
    fn reader_spin_threshold_is_10us_plus_half_a_us_per_reader_capped_at_25us() {
        assert_eq!(rspin_threshold_ns(0), 10_000);
        assert_eq!(rspin_threshold_ns(4), 12_000);
        assert_eq!(rspin_threshold_ns(30), 25_000);
        assert_eq!(rspin_threshold_ns(1_000), 25_000);
        assert_eq!(
            spin_budget_ns((3 * READER_BIAS) | WAITERS, true),
            Some(11_500)
        );
        assert_eq!(spin_budget_ns((3 * READER_BIAS) | WAITERS, false), None);
        assert_eq!(spin_budget_ns(WRITER_LOCKED, true), Some(WRITER_SPIN_NS));
        assert_eq!(spin_budget_ns(WRITER_LOCKED | HANDOFF, true), None);
        // A non-spinnable lock is not spun on, by anyone.
        assert_eq!(spin_budget_ns((3 * READER_BIAS) | NONSPINNABLE, true), None);
    }

    #[test]
    fn a_writer_takes_the_lock_and_clears_nonspinnable() {
        assert_eq!(with_writer(NONSPINNABLE | WAITERS), WRITER_LOCKED | WAITERS);
        assert!(reader_owned(READER_BIAS) && !reader_owned(WRITER_LOCKED | READER_BIAS));
    }

    #[test]
    fn first_writer_is_woken_to_compete_until_starved_or_reserved() {
        assert_eq!(first_writer_verdict(WAITERS, false), FirstWriter::Wake);
        assert_eq!(first_writer_verdict(WAITERS, true), FirstWriter::Grant);
        assert_eq!(
            first_writer_verdict(WAITERS | HANDOFF, false),
            FirstWriter::Grant
        );
        assert_eq!(
            first_writer_verdict(WRITER_LOCKED | WAITERS, true),
            FirstWriter::Wait { set_handoff: true }
        );
        assert_eq!(
            first_writer_verdict(READER_BIAS | HANDOFF, true),
            FirstWriter::Wait { set_handoff: false }
        );
        assert_eq!(
            first_writer_verdict(WRITER_LOCKED, false),
            FirstWriter::Wait { set_handoff: false }
        );
    }

    #[test]
    fn head_readers_join_readers_but_not_a_writer() {
        assert_eq!(head_readers_verdict(0, false), HeadReaders::Grant);
        assert_eq!(
            head_readers_verdict(2 * READER_BIAS, false),
            HeadReaders::Grant
        );
        assert_eq!(
            head_readers_verdict(WRITER_LOCKED, true),
            HeadReaders::Wait { set_handoff: true }
        );
        assert_eq!(
            head_readers_verdict(WRITER_LOCKED | HANDOFF, true),
            HeadReaders::Wait { set_handoff: false }
        );
    }
}
