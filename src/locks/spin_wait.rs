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
//! platform whose spinners yield ([`Platform::spinners_yield`]), after
//! [`SPIN_POLLS_BEFORE_YIELD`] polls a waiter yields its CPU on every poll.
//!
//! Measuring a wait must not lengthen the critical section it ends in, nor
//! the handoff into it: the clock is read when the slow path starts and then
//! only after polls 1, 2, 4, 8 and every [`SPINS_PER_CLOCK_READ`]th
//! one (a clock read costs about as much as a poll natively: 30 ns against a
//! 24 ns PAUSE on this project's test machine, so reading it every poll
//! doubled the poll period and with it the time a waiter takes to see a
//! release). The wait noted at the grant is the last reading, extrapolated
//! over the polls since at the rate measured up to it, so it is exact to a
//! few polls, on both platforms (the simulator's clock costs what the
//! profile says). A waiter that yields reads the clock after every yield:
//! the time it spent switched out is no poll's worth, and the extrapolation would drop
//! it (natively a ticket waiter yielded once, came back to its turn 60 us
//! later and noted the 16 us of its spin: synchro's mmap_lock showed 21% of
//! the thread time waiting on one CPU, 97% once read), while a yield costs
//! about eight clock reads (222 against 29 ns on the test machine,
//! `rmap-storm calibrate`). Noting the grant is one thread-local push
//! ([`stats::note_grant`]); counting and the histogram insert come after the
//! release.

use super::platform::{Platform, SPINS_PER_CLOCK_READ};
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
    /// The clock at the latest reading ...
    last_ns: u64,
    /// ... which came after this many polls.
    polls_at_last: u64,
    _platform: PhantomData<P>,
}

/// Whether poll number `polls` is followed by a clock read: after polls 1,
/// 2, 4 and 8, then every `every`th, and after every poll that `yielded`.
pub fn reads_clock_after(polls: u64, every: u64, yielded: bool) -> bool {
    yielded || polls.is_multiple_of(every.max(1)) || (polls < every && polls.is_power_of_two())
}

/// The wait at the grant, `polls` polls in: the time to the last reading
/// (`last_ns` since the start, after `polls_at_last` polls), extrapolated
/// over the polls since at the rate up to it.
pub fn extrapolated_wait(last_ns: u64, polls_at_last: u64, polls: u64) -> u64 {
    if polls_at_last == 0 {
        return last_ns;
    }
    let per_poll = last_ns as f64 / polls_at_last as f64;
    last_ns + (per_poll * polls.saturating_sub(polls_at_last) as f64) as u64
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
            polls_at_last: 0,
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
            polls_at_last: 0,
            _platform: PhantomData,
        }
    }

    /// One iteration of a busy-wait: relax the CPU, or yield it once this
    /// acquisition has polled for long on a platform whose spinners yield.
    #[inline]
    pub fn poll(&mut self) {
        self.polls += 1;
        let yields = self.polls > SPIN_POLLS_BEFORE_YIELD && P::spinners_yield();
        if yields {
            P::yield_now();
        } else {
            P::spin_hint();
        }
        if reads_clock_after(self.polls, SPINS_PER_CLOCK_READ, yields) {
            self.last_ns = P::now_ns();
            self.polls_at_last = self.polls;
        }
    }

    /// Polls so far.
    pub fn polls(&self) -> u64 {
        self.polls
    }

    /// The request was granted: note its polls and wait (one thread-local
    /// push), without reading the clock.
    #[inline]
    pub fn granted(self) {
        let wait = extrapolated_wait(self.last_ns - self.start_ns, self.polls_at_last, self.polls);
        stats::note_grant(self.polls, wait);
    }
}

#[cfg(all(test, not(shuttle)))]
mod tests {
    use super::*;
    use crate::locks::platform::Native;
    use crate::locks::stats::{self, LockClass, take};

    #[test]
    fn granted_counts_the_contended_request_polls_and_one_wait() {
        let _ = take();
        let mut wait = SpinWait::<Native>::begin(Mode::Write);
        for _ in 0..3 {
            wait.poll();
        }
        assert_eq!(wait.polls(), 3);
        wait.granted();
        stats::released(Event::AcquireWrite);
        let s = take();
        let c = s.class(LockClass::AnonVma);
        assert_eq!(c.get(Event::ContendedWrite), 1);
        assert_eq!(c.get(Event::ContendedRead), 0);
        assert_eq!(c.get(Event::Spin), 3);
        assert_eq!(c.get(Event::AcquireWrite), 1);
        assert_eq!(c.wait_ns.len(), 1);
    }

    #[test]
    fn the_clock_is_read_after_polls_1_2_4_8_then_every_16th() {
        let read: Vec<u64> = (1..=64)
            .filter(|&p| reads_clock_after(p, 16, false))
            .collect();
        assert_eq!(read, [1, 2, 4, 8, 16, 32, 48, 64]);
        // Every 1st: after every poll.
        assert!((1..100).all(|p| reads_clock_after(p, 1, false)));
        // So is any clock once the waiter yields: its time switched out is
        // no poll's worth, and extrapolating would drop it.
        let n = SPIN_POLLS_BEFORE_YIELD;
        assert!((n + 1..n + 16).all(|p| reads_clock_after(p, 16, true)));
    }

    #[test]
    fn the_wait_is_extrapolated_from_the_last_reading() {
        // 80 ns after 8 polls, granted after 11: 3 more at 10 ns each.
        assert_eq!(extrapolated_wait(80, 8, 11), 110);
        assert_eq!(extrapolated_wait(80, 8, 8), 80);
        // No poll read the clock: the reading at the start stands.
        assert_eq!(extrapolated_wait(0, 0, 0), 0);
    }

    #[test]
    fn modes_feed_their_own_counters() {
        assert_eq!(Event::acquired(Mode::Read), Event::AcquireRead);
        assert_eq!(Event::contended(Mode::Read), Event::ContendedRead);
        assert_eq!(Event::contended(Mode::Write), Event::ContendedWrite);
    }
}
