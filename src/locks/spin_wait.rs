//! How the spinning kinds wait, and what one slow-path acquisition reports.
//!
//! The kernel's spinning locks poll with one `cpu_relax()` per iteration and
//! never back off (arch_spin_lock of the 2.6.25 ticket lock, the MCS node loop
//! in queued_spin_lock_slowpath, atomic_cond_read_acquire in qrwlock.c). That
//! constant poll rate is part of what the spinning kinds model (a ticket
//! handoff costs `s + c*k/2` because every waiter re-reads the line at once;
//! Boyd-Wickizer et al., "Non-scalable locks are dangerous", 2012), so
//! [`SpinWait`] polls at that rate and does not use crossbeam's exponential
//! `Backoff`, which would stretch the time between polls and with it the
//! measured handoff.
//!
//! One userspace difference has to be bridged: a kernel spinlock holder runs
//! with preemption disabled, so the CPU it waits for is always running. In a
//! user process a holder (or the next ticket) can be preempted, and on an
//! oversubscribed machine pure spinning then burns whole time slices. So on a
//! platform whose spinners yield ([`Platform::SPINNERS_YIELD`]), after
//! [`SPIN_POLLS_BEFORE_YIELD`] polls a waiter yields its CPU on every poll.
//!
//! Measuring a wait must not lengthen the critical section it ends in: the
//! clock is read when the slow path starts and after every poll (while
//! waiting, not holding), and the wait is only noted at the grant
//! ([`stats::note_wait`]); the histogram insert comes after the release.

use super::platform::Platform;
use super::stats::{self, Event};
use crate::mode::Mode;
use std::marker::PhantomData;

/// Polls at the kernel's constant rate before a waiter starts yielding its CPU.
// 1024 polls of a PAUSE (about 40-140 cycles each, Intel SDM "PAUSE" latency
// by microarchitecture) is roughly 15-50 us: well above the few-microsecond
// hold times torture and the benches use (`--load-us 2`), so a waiter with a
// CPU of its own behaves like the kernel's; well below the scheduler slice
// (CFS sched_min_granularity 0.75 ms), so a preempted holder is not starved.
pub const SPIN_POLLS_BEFORE_YIELD: u64 = 1 << 10;

/// One slow-path acquisition: its polls and when it started waiting.
///
/// Made only on slow paths, so fast paths never read the clock.
#[derive(Debug)]
pub struct SpinWait<P: Platform> {
    polls: u64,
    start_ns: u64,
    /// The clock after the latest poll: the grant happened at most one poll later.
    last_ns: u64,
    _platform: PhantomData<P>,
}

impl<P: Platform> SpinWait<P> {
    /// Enter a slow path: counts the contended request and starts the clock.
    #[inline]
    pub fn begin(mode: Mode) -> SpinWait<P> {
        stats::count(Event::contended(mode), 1);
        let now = P::now_ns();
        SpinWait {
            polls: 0,
            start_ns: now,
            last_ns: now,
            _platform: PhantomData,
        }
    }

    /// A busy-wait inside another slow path (the osq a sleeping lock's
    /// spinner queues in): counts no contended request of its own.
    #[inline]
    pub fn nested() -> SpinWait<P> {
        let now = P::now_ns();
        SpinWait {
            polls: 0,
            start_ns: now,
            last_ns: now,
            _platform: PhantomData,
        }
    }

    /// One iteration of a busy-wait: relax the CPU, or yield it once this
    /// acquisition has polled for long on a platform whose spinners yield.
    #[inline]
    pub fn poll(&mut self) {
        self.polls += 1;
        if P::SPINNERS_YIELD && self.polls > SPIN_POLLS_BEFORE_YIELD {
            P::yield_now();
        } else {
            P::spin_hint();
        }
        self.last_ns = P::now_ns();
    }

    /// Polls so far.
    pub fn polls(&self) -> u64 {
        self.polls
    }

    /// The request was granted: count its polls (once, as a total) and note
    /// its wait, without reading the clock.
    #[inline]
    pub fn granted(self) {
        stats::count(Event::Spin, self.polls);
        stats::note_wait(self.last_ns - self.start_ns);
    }
}

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;
    use crate::locks::platform::Native;
    use crate::locks::stats::{LockClass, take};

    #[test]
    fn granted_counts_the_contended_request_polls_and_one_wait() {
        let _ = take();
        let mut wait = SpinWait::<Native>::begin(Mode::Write);
        for _ in 0..3 {
            wait.poll();
        }
        assert_eq!(wait.polls(), 3);
        wait.granted();
        let s = take();
        let c = s.class(LockClass::AnonVma);
        assert_eq!(c.get(Event::ContendedWrite), 1);
        assert_eq!(c.get(Event::ContendedRead), 0);
        assert_eq!(c.get(Event::Spin), 3);
        assert_eq!(c.wait_ns.len(), 1);
    }

    #[test]
    fn modes_feed_their_own_counters() {
        assert_eq!(Event::acquired(Mode::Read), Event::AcquireRead);
        assert_eq!(Event::contended(Mode::Read), Event::ContendedRead);
        assert_eq!(Event::contended(Mode::Write), Event::ContendedWrite);
    }
}
