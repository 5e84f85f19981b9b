//! How the spinning kinds wait, and what one slow-path acquisition reports.
//!
//! The kernel's spinning locks poll with one `cpu_relax()` per iteration and
//! never back off (arch_spin_lock of the 2.6.25 ticket lock, the MCS node loop
//! in queued_spin_lock_slowpath, atomic_cond_read_acquire in qrwlock.c). That
//! constant poll rate is part of what the spinning kinds model (a ticket
//! handoff costs `s + c*k/2` because every waiter re-reads the line at once,
//! DOMAIN.md section 3), so [`SpinWait`] polls at that rate and does not use
//! crossbeam's exponential `Backoff`, which would stretch the time between
//! polls and with it the measured handoff.
//!
//! One userspace difference has to be bridged: a kernel spinlock holder runs
//! with preemption disabled, so the CPU it waits for is always running. Here a
//! holder (or the next ticket) can be preempted, and on an oversubscribed
//! machine pure spinning then burns whole time slices. So after
//! [`SPIN_POLLS_BEFORE_YIELD`] polls a waiter yields its CPU on every poll.
//!
//! Every busy-wait goes through [`crate::locks::shim::spin_hint`], so under
//! `--cfg shuttle` each poll is a scheduling point for the model checker.

use super::shim::spin_hint;
use super::stats::{self, Event};
use std::time::Instant;

/// Polls at the kernel's constant rate before a waiter starts yielding its CPU.
// 1024 polls of a PAUSE (about 40-140 cycles each, Intel SDM "PAUSE" latency
// by microarchitecture) is roughly 15-50 us: well above the few-microsecond
// hold times torture and the benches use (`--load-us 2`), so a waiter with a
// CPU of its own behaves like the kernel's; well below the scheduler slice
// (CFS sched_min_granularity 0.75 ms), so a preempted holder is not starved.
pub const SPIN_POLLS_BEFORE_YIELD: u64 = 1 << 10;

/// What a caller asked for, which decides the counters its acquisition feeds.
///
/// Exclusive-only kinds grant a [`Request::Read`] exclusively but still count
/// it as a read, so reports compare kinds request for request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    Read,
    Write,
}

impl Request {
    /// The event counted when this request is granted.
    #[inline]
    pub fn granted(self) -> Event {
        match self {
            Request::Read => Event::AcquireRead,
            Request::Write => Event::AcquireWrite,
        }
    }

    /// Count a trylock's outcome: this request granted, or a failed try.
    #[inline]
    pub fn count_try(self, taken: bool) {
        stats::count(
            if taken {
                self.granted()
            } else {
                Event::TryFail
            },
            1,
        );
    }

    /// The event counted when this request leaves the fast path.
    #[inline]
    pub fn contended(self) -> Event {
        match self {
            Request::Read => Event::ContendedRead,
            Request::Write => Event::ContendedWrite,
        }
    }
}

/// One slow-path acquisition: its polls and when it started waiting.
///
/// Made only on slow paths, so fast paths never read the clock.
#[derive(Debug)]
pub struct SpinWait {
    request: Request,
    polls: u64,
    start: Instant,
}

impl SpinWait {
    /// Enter a slow path: counts the contended request and starts the clock.
    #[inline]
    pub fn begin(request: Request) -> SpinWait {
        stats::count(request.contended(), 1);
        SpinWait {
            request,
            polls: 0,
            start: Instant::now(),
        }
    }

    /// One iteration of a busy-wait: relax the CPU, or yield it once this
    /// acquisition has polled for long ([`SPIN_POLLS_BEFORE_YIELD`]).
    #[inline]
    pub fn poll(&mut self) {
        self.polls += 1;
        // Under shuttle every poll must be a checker yield (spin_hint) instead.
        if cfg!(not(shuttle)) && self.polls > SPIN_POLLS_BEFORE_YIELD {
            std::thread::yield_now();
        } else {
            spin_hint();
        }
    }

    /// Polls so far.
    pub fn polls(&self) -> u64 {
        self.polls
    }

    /// The request was granted: count it, its polls (once, as a total) and its wait.
    pub fn granted(self) {
        stats::count(Event::Spin, self.polls);
        let ns = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        stats::record_wait(ns);
        stats::count(self.request.granted(), 1);
    }
}

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;
    use crate::locks::stats::{LockClass, take};

    #[test]
    fn granted_counts_request_polls_and_one_wait() {
        let _ = take();
        let mut wait = SpinWait::begin(Request::Write);
        for _ in 0..3 {
            wait.poll();
        }
        assert_eq!(wait.polls(), 3);
        wait.granted();
        let s = take();
        let c = s.class(LockClass::AnonVma);
        assert_eq!(c.get(Event::ContendedWrite), 1);
        assert_eq!(c.get(Event::AcquireWrite), 1);
        assert_eq!(c.get(Event::AcquireRead), 0);
        assert_eq!(c.get(Event::Spin), 3);
        assert_eq!(c.wait_ns.len(), 1);
    }

    #[test]
    fn read_requests_feed_read_counters() {
        assert_eq!(Request::Read.granted(), Event::AcquireRead);
        assert_eq!(Request::Read.contended(), Event::ContendedRead);
        assert_eq!(Request::Write.contended(), Event::ContendedWrite);
    }
}
