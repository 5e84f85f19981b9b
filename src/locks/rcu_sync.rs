//! rcu_sync (kernel/rcu/sync.c, Oleg Nesterov; its state machine as reworked
//! in v5.2): how percpu-rwsem's writers take readers off their fast path and
//! why the first writer after a quiet spell pays a whole RCU grace period.
//!
//! A reader's fast path (`rcu_sync_is_idle()`: a per-CPU increment without a
//! barrier) is safe only if no writer can be checking the counters while a
//! reader is inside it. So a writer first moves the rcu_sync out of IDLE and
//! waits one grace period (synchronize_rcu), after which every reader has
//! seen the change and takes the slow path. Writers that arrive while
//! another is inside, or within one grace period of the last one leaving,
//! need no grace period of their own: readers are still off the fast path.
//! When the last writer leaves, readers get the fast path back one grace
//! period later (the kernel's call_rcu callback). The percpu_rw_semaphore
//! documentation of v3.14 put the write side at "hundreds of milliseconds";
//! one grace period is 4-32 ms on a busy server (the machine profile's
//! `work.rcu_gp_ns`).
//!
//! The kernel returns to IDLE from a callback; nothing here runs
//! asynchronously, so the EXIT phase ends lazily: whoever looks at it next
//! (a writer entering) compares the time since the last exit with the last
//! grace period this rcu_sync waited, and treats it as IDLE once that much
//! has passed. The kernel's REPLAY (an exit during EXIT) folds into moving
//! the exit time forward.
//!
//! # State word (usize)
//! ```text
//!  63                          2   1 0
//! +------------------------------+-----+
//! | gp_count: writers inside     |phase|
//! +------------------------------+-----+
//! ```
//! - phase IDLE (0): readers may use their fast path; no writer inside.
//! - phase ENTER (1): the first writer is waiting its grace period; writers
//!   arriving now wait for it too (`gp_wait`).
//! - phase PASSED (2): a grace period has passed since the phase left IDLE:
//!   readers are off the fast path; writers enter without waiting.
//! - phase EXIT (3): gp_count is 0; readers regain the fast path one grace
//!   period after `exit_ns`.
//!
//! Invariants: gp_count is 0 exactly in IDLE and EXIT; only the writer that
//! moved IDLE to ENTER moves ENTER to PASSED; `gp_wait` holds writers only
//! while the phase is ENTER (they park only after seeing ENTER under the
//! queue lock, and the ENTER to PASSED move precedes the wake of all).

use super::platform::{AtomicInt, Native, Ordering, Platform};
use super::stats::{self, Event};
use super::waitq::{Mode, Pick, Req, Slot, WaitQueue, Woken};

const PHASE: usize = 0b11;
const IDLE: usize = 0;
const ENTER: usize = 1;
const PASSED: usize = 2;
const EXIT: usize = 3;
/// One writer in gp_count.
const WRITER: usize = 1 << 2;

/// The phase of an rcu_sync, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Enter,
    Passed,
    Exit,
}

/// The phase of a state word.
pub fn phase(state: usize) -> Phase {
    match state & PHASE {
        IDLE => Phase::Idle,
        ENTER => Phase::Enter,
        PASSED => Phase::Passed,
        _ => Phase::Exit,
    }
}

/// Writers inside (between enter and exit) in a state word.
pub fn writers(state: usize) -> usize {
    state >> 2
}

/// Whether an EXIT phase that began at `exit_ns` is over at `now_ns`, given
/// the last grace period lasted `gp_ns`.
pub fn exit_is_over(exit_ns: u64, now_ns: u64, gp_ns: u64) -> bool {
    now_ns.saturating_sub(exit_ns) >= gp_ns
}

/// What a writer's [`RcuSync::enter`] did, with the nanoseconds it waited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entered {
    /// It waited a grace period of its own.
    WaitedGracePeriod(u64),
    /// It waited for the grace period another writer was waiting.
    WaitedForAnother(u64),
    /// Readers were already off the fast path: no wait.
    AtOnce,
}

impl Entered {
    /// Nanoseconds it waited (0 at once).
    pub fn waited_ns(self) -> u64 {
        match self {
            Entered::WaitedGracePeriod(ns) | Entered::WaitedForAnother(ns) => ns,
            Entered::AtOnce => 0,
        }
    }
}

/// One rcu_sync. See the module doc.
#[derive(Debug)]
pub struct RcuSync<P: Platform = Native> {
    state: P::AtomicUsize,
    /// When gp_count last dropped to 0 ([`Platform::now_ns`]).
    exit_ns: P::AtomicUsize,
    /// How long the last grace period waited here took, ns: how long an
    /// EXIT phase lasts.
    gp_ns: P::AtomicUsize,
    /// Writers waiting for the grace period of the writer that left IDLE.
    gp_wait: WaitQueue<P>,
}

impl<P: Platform> Default for RcuSync<P> {
    fn default() -> Self {
        RcuSync::new()
    }
}

impl<P: Platform> RcuSync<P> {
    pub fn new() -> RcuSync<P> {
        RcuSync {
            state: P::AtomicUsize::new(IDLE),
            exit_ns: P::AtomicUsize::new(0),
            gp_ns: P::AtomicUsize::new(0),
            gp_wait: WaitQueue::new(),
        }
    }

    /// The phase now (racy snapshot, for tests and reports).
    pub fn phase(&self) -> Phase {
        phase(self.state.load(Ordering::Relaxed))
    }

    /// Writers inside now (racy snapshot).
    pub fn writers(&self) -> usize {
        writers(self.state.load(Ordering::Relaxed))
    }

    /// rcu_sync_enter: count the writer in; leave IDLE and wait a grace
    /// period if readers may still be on their fast path.
    pub fn enter(&self) -> Entered {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            let next = match phase(s) {
                Phase::Idle => ENTER | WRITER,
                Phase::Exit if self.exit_over() => ENTER | WRITER,
                Phase::Exit => PASSED | WRITER,
                Phase::Enter | Phase::Passed => s + WRITER,
            };
            match self
                .state
                .compare_exchange(s, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if phase(s) == Phase::Enter => return self.wait_for_another(),
                Ok(_) if phase(next) == Phase::Enter => return self.wait_grace_period(),
                Ok(_) => return Entered::AtOnce,
                Err(now) => s = now,
            }
        }
    }

    /// Whether the current EXIT phase has lasted a grace period.
    fn exit_over(&self) -> bool {
        let exit = self.exit_ns.load(Ordering::Acquire) as u64;
        let gp = self.gp_ns.load(Ordering::Relaxed) as u64;
        exit_is_over(exit, P::now_ns(), gp)
    }

    /// The writer that left IDLE: one grace period, then PASSED, then wake
    /// the writers that waited for it.
    #[cold]
    fn wait_grace_period(&self) -> Entered {
        stats::count(Event::GracePeriod, 1);
        let t0 = P::now_ns();
        P::synchronize_rcu();
        let took = P::now_ns().saturating_sub(t0);
        self.gp_ns.store(took as usize, Ordering::Relaxed);
        // Only this writer leaves ENTER; gp_count may have grown meanwhile.
        self.state.fetch_add(PASSED - ENTER, Ordering::AcqRel);
        self.gp_wait
            .wake(Slot::Main, |_| Pick::Take, |_| Woken::Granted);
        Entered::WaitedGracePeriod(took)
    }

    /// A writer that arrived during ENTER: sleep until it is PASSED.
    #[cold]
    fn wait_for_another(&self) -> Entered {
        let t0 = P::now_ns();
        let req = Req::at(Mode::Write, t0);
        while self
            .gp_wait
            .park(Slot::Main, req, || {
                phase(self.state.load(Ordering::Acquire)) == Phase::Enter
            })
            .is_some()
        {}
        Entered::WaitedForAnother(P::now_ns().saturating_sub(t0))
    }

    /// Enter only if no wait is needed (readers are off their fast path
    /// already): for a write trylock, which must not sleep.
    pub fn try_enter(&self) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            let next = match phase(s) {
                Phase::Passed => s + WRITER,
                Phase::Exit if !self.exit_over() => PASSED | WRITER,
                Phase::Idle | Phase::Enter | Phase::Exit => return false,
            };
            match self
                .state
                .compare_exchange(s, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// rcu_sync_exit: count the writer out; the last one out starts EXIT.
    pub fn exit(&self) {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            debug_assert!(writers(s) > 0, "rcu_sync_exit without an enter");
            let last = writers(s) == 1;
            if last {
                // Before the phase says EXIT, so nobody reads a stale time.
                self.exit_ns.store(P::now_ns() as usize, Ordering::Release);
            }
            let next = if last { EXIT } else { s - WRITER };
            match self
                .state
                .compare_exchange(s, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => s = now,
            }
        }
    }
}

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;

    #[test]
    fn the_state_word_decodes_phase_and_writers() {
        assert_eq!(phase(IDLE), Phase::Idle);
        assert_eq!(phase(ENTER | (3 * WRITER)), Phase::Enter);
        assert_eq!(writers(PASSED | (2 * WRITER)), 2);
        assert_eq!(phase(EXIT), Phase::Exit);
    }

    #[test]
    fn exit_ends_one_grace_period_after_the_last_writer_left() {
        assert!(!exit_is_over(1_000, 1_500, 1_000));
        assert!(exit_is_over(1_000, 2_000, 1_000));
        assert!(exit_is_over(1_000, 900, 0), "a clock behind counts as 0 ns");
    }

    #[test]
    fn a_lone_writer_waits_a_grace_period_and_the_next_one_close_behind_does_not() {
        let rss = <RcuSync>::new();
        assert!(matches!(rss.enter(), Entered::WaitedGracePeriod(_)));
        assert_eq!((rss.phase(), rss.writers()), (Phase::Passed, 1));
        assert_eq!(rss.enter(), Entered::AtOnce);
        rss.exit();
        assert_eq!((rss.phase(), rss.writers()), (Phase::Passed, 1));
        rss.exit();
        assert_eq!(rss.phase(), Phase::Exit);
        // Within one grace period of the exit readers are still slow.
        rss.gp_ns.store(u32::MAX as usize, Ordering::Relaxed);
        assert_eq!(rss.enter(), Entered::AtOnce);
        rss.exit();
        // Once a grace period has passed, the next writer pays again.
        rss.gp_ns.store(0, Ordering::Relaxed);
        assert!(!rss.try_enter(), "a trylock cannot wait a grace period");
        assert!(matches!(rss.enter(), Entered::WaitedGracePeriod(_)));
        assert!(rss.try_enter());
        rss.exit();
        rss.exit();
    }
}
