//! Context switches and CPU time per thread, from getrusage(RUSAGE_THREAD).
//!
//! A sleeping lock costs its waiters a voluntary switch each (seed 000's 160,000
//! switches/s); a spinning lock on an oversubscribed machine shows up as
//! involuntary ones instead. The CPU time says the rest: whether a slow role
//! was slow on the CPU or kept off it. Each thread snapshots its own counts
//! at start and end ([`ThreadCtx::now`]); the run sums the deltas over
//! threads.

use crate::results::CtxSwitches;
use std::iter::Sum;
use std::ops::{Add, Sub};

/// A thread's context-switch counts (or a difference or sum of them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadCtx {
    /// ru_nvcsw: the thread gave up the CPU (blocked, slept, yielded to a sleep).
    pub voluntary: u64,
    /// ru_nivcsw: the scheduler took the CPU away (time slice over, preemption).
    pub involuntary: u64,
    /// ru_utime + ru_stime: CPU time the thread ran, user and kernel, ns.
    pub cpu_ns: u64,
}

impl ThreadCtx {
    /// The calling thread's counts so far.
    pub fn now() -> ThreadCtx {
        // SAFETY: getrusage only writes the struct we hand it; an all-zero rusage
        // is a valid value of this plain C struct.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: RUSAGE_THREAD (Linux 2.6.26+) with a valid pointer cannot fail.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        debug_assert_eq!(rc, 0, "getrusage(RUSAGE_THREAD) failed");
        ThreadCtx {
            voluntary: ru.ru_nvcsw as u64,
            involuntary: ru.ru_nivcsw as u64,
            cpu_ns: timeval_ns(ru.ru_utime) + timeval_ns(ru.ru_stime),
        }
    }

    /// Switches per second of wall time, the report's unit.
    pub fn per_s(self, secs: f64) -> CtxSwitches {
        if secs <= 0.0 {
            return CtxSwitches::default();
        }
        CtxSwitches {
            voluntary_per_s: self.voluntary as f64 / secs,
            involuntary_per_s: self.involuntary as f64 / secs,
        }
    }
}

fn timeval_ns(t: libc::timeval) -> u64 {
    t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000
}

impl Sub for ThreadCtx {
    type Output = ThreadCtx;
    /// The switches between two snapshots of one thread (`end - start`).
    fn sub(self, start: ThreadCtx) -> ThreadCtx {
        ThreadCtx {
            voluntary: self.voluntary.saturating_sub(start.voluntary),
            involuntary: self.involuntary.saturating_sub(start.involuntary),
            cpu_ns: self.cpu_ns.saturating_sub(start.cpu_ns),
        }
    }
}

impl Add for ThreadCtx {
    type Output = ThreadCtx;
    fn add(self, o: ThreadCtx) -> ThreadCtx {
        ThreadCtx {
            voluntary: self.voluntary + o.voluntary,
            involuntary: self.involuntary + o.involuntary,
            cpu_ns: self.cpu_ns + o.cpu_ns,
        }
    }
}

impl Sum for ThreadCtx {
    fn sum<I: Iterator<Item = ThreadCtx>>(iter: I) -> ThreadCtx {
        iter.fold(ThreadCtx::default(), Add::add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_sum_over_threads_and_scale_per_second() {
        let t1 = ThreadCtx {
            voluntary: 15,
            involuntary: 4,
            cpu_ns: 900,
        } - ThreadCtx {
            voluntary: 5,
            involuntary: 1,
            cpu_ns: 100,
        };
        let t2 = ThreadCtx {
            voluntary: 30,
            involuntary: 2,
            cpu_ns: 50,
        } - ThreadCtx::default();
        let total: ThreadCtx = [t1, t2].into_iter().sum();
        assert_eq!(
            total,
            ThreadCtx {
                voluntary: 40,
                involuntary: 5,
                cpu_ns: 850,
            }
        );
        let rate = total.per_s(2.0);
        assert_eq!((rate.voluntary_per_s, rate.involuntary_per_s), (20.0, 2.5));
        assert_eq!(total.per_s(0.0), CtxSwitches::default());
    }

    #[test]
    fn sleeping_counts_as_a_voluntary_switch_of_this_thread() {
        // Measured in a fresh thread so other tests' threads cannot add to it.
        let delta = std::thread::spawn(|| {
            let start = ThreadCtx::now();
            for _ in 0..3 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            ThreadCtx::now() - start
        })
        .join()
        .unwrap();
        assert!(delta.voluntary >= 3, "{delta:?}");
    }

    #[test]
    fn spinning_counts_as_cpu_time_of_this_thread_and_sleeping_does_not() {
        let delta = std::thread::spawn(|| {
            let start = ThreadCtx::now();
            let t0 = std::time::Instant::now();
            while t0.elapsed() < std::time::Duration::from_millis(30) {
                std::hint::spin_loop();
            }
            std::thread::sleep(std::time::Duration::from_millis(60));
            ThreadCtx::now() - start
        })
        .join()
        .unwrap();
        // The spin is at most 30 ms of CPU (less if the thread was
        // preempted); the sleep adds next to nothing.
        assert!(delta.cpu_ns > 0, "{delta:?}");
        assert!(
            delta.cpu_ns < 60_000_000,
            "the sleep counted as CPU time: {delta:?}"
        );
    }
}
