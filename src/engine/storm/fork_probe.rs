//! ForkProbe: what a fork and its task's exit cost inside a storm.
//!
//! A fork copies the parent's vmas, links an anon_vma_chain per family and
//! copies the page table; an exit unlinks and frees them. Timed in a loop of
//! their own they run from warm caches; in a storm the reclaim walks and
//! the faults between two forks push the parent's vmas, the families' trees
//! and the slabs out, and each fork pays for bringing them back (aim7 on a
//! 2-vCPU Xeon VM: a fork and exit took 4.3 us in the loop, and a median
//! 7.8 us in the storm on two CPUs, 5.9 us on one, as the run's worker loop
//! times them). As [`super::walk_probe`] does for the walks, `calibrate`
//! measures them where they happen: the
//! fork-exit role times its `fork` and its `exit` with the thread's CPU
//! clock, so a task switched out midway, or asleep on a lock, is charged
//! only its time on a CPU; the wait for the old task's last user, between
//! the two, is left out. A median, as the touch's: a fork that spins for
//! its write lock counts the spin, which the simulator's locks spend
//! themselves, and the median is the uncontended fork when most are.

use super::time_buckets::TimeBuckets;

pub struct ForkProbe {
    /// The clock the forks are timed with, ns.
    clock: fn() -> u64,
    /// Fork and exit CPU time, per cycle.
    cycles: TimeBuckets,
}

/// Width of a bucket of cycle times.
const BUCKET_NS: u64 = 16;

/// Buckets of cycle times: up to 64 us, some 15 times an aim7 fork and exit.
const BUCKETS: usize = 4_096;

impl ForkProbe {
    /// A probe timing forks and exits with `clock` (ns, monotonic per thread).
    pub fn new(clock: fn() -> u64) -> ForkProbe {
        ForkProbe {
            clock,
            cycles: TimeBuckets::new(BUCKET_NS, BUCKETS),
        }
    }

    /// `f`, and the time it took on `probe`'s clock (0, and no clock read,
    /// without a probe).
    pub fn time<T>(probe: Option<&ForkProbe>, f: impl FnOnce() -> T) -> (T, u64) {
        match probe {
            Some(p) => {
                let start = (p.clock)();
                let out = f();
                (out, (p.clock)().saturating_sub(start))
            }
            None => (f(), 0),
        }
    }

    /// One fork and exit took `ns` in all (its two timed parts).
    pub fn cycled(&self, ns: u64) {
        self.cycles.add(ns);
    }

    /// The median cycle, ns, and how many were timed; None before the first.
    pub fn median(&self) -> Option<(f64, u64)> {
        self.cycles.median()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    static NOW: AtomicU64 = AtomicU64::new(0);
    fn fake_clock() -> u64 {
        NOW.fetch_add(1_000, Ordering::Relaxed)
    }

    #[test]
    fn a_cycle_is_its_timed_parts_and_nothing_without_a_probe() {
        let probe = ForkProbe::new(fake_clock);
        // The fake clock moves 1 us a read: each timed part takes 1 us.
        let (child, fork_ns) = ForkProbe::time(Some(&probe), || 7);
        let ((), exit_ns) = ForkProbe::time(Some(&probe), || ());
        assert_eq!((child, fork_ns, exit_ns), (7, 1_000, 1_000));
        probe.cycled(fork_ns + exit_ns);
        assert_eq!(probe.median(), Some((2_008.0, 1)));
        let before = NOW.load(Ordering::Relaxed);
        assert_eq!(ForkProbe::time(None, || 3), (3, 0));
        assert_eq!(NOW.load(Ordering::Relaxed), before, "no clock read");
    }
}
