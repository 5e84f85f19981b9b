//! TouchProbe: what a touch of a mapped page costs inside a storm.
//!
//! A touch that finds its PTE present only picks a task, looks up its page
//! table and sets young; the simulator charges that as one figure
//! (`work.touch_ns`) and plays the rest (the faults, the direct reclaims)
//! out itself. In a storm the touches take two times, not one: on one CPU
//! of a 2-vCPU Xeon VM (aim7-fork-storm, 2026-12-07) the deciles of every
//! touch, as the worker loop times an operation, were 85, 97, 104, 118,
//! then 205, 214, 223, 265, and 499 and 1,655 ns (the faults and direct
//! reclaims): a fast group (likeliest the task's lines still cached) and a
//! slow one, whose shares move from trial to trial. Their median, which
//! `calibrate` took before, read 187-200 ns in nine of a crosscheck's ten
//! one-CPU aim7 row profiles and 92 ns in the tenth (its trials 91.7-144.7
//! ns), whose simulated touches then ran twice as fast. The touches this
//! probe times (some 80% of them) had a median of 110-130 ns and a mean of
//! 153-170 ns over three trials (the probe's clock read in each). A
//! throughput is one over the mean time, so the probe takes the mean: of
//! the touches that did no direct reclaim and found their page mapped, each
//! timed whole, from the op's start to its access, on the monotonic clock.

use super::time_buckets::TimeBuckets;

/// The plain touches' times of one storm, shared by its touch threads.
pub struct TouchProbe {
    /// The clock the touches are timed with, ns.
    clock: fn() -> u64,
    /// Plain touches, by time.
    plain: TimeBuckets,
}

/// Width of a bucket of touch times.
const BUCKET_NS: u64 = 4;

/// Buckets of touch times: up to 16 us, beyond which an interrupt or a
/// switch fell in the touch (the simulator draws those itself).
const BUCKETS: usize = 4_096;

impl TouchProbe {
    /// A probe timing touches with `clock` (ns, monotonic).
    pub fn new(clock: fn() -> u64) -> TouchProbe {
        TouchProbe {
            clock,
            plain: TimeBuckets::new(BUCKET_NS, BUCKETS),
        }
    }

    /// The clock before a touch.
    #[inline]
    pub fn start(&self) -> u64 {
        (self.clock)()
    }

    /// A touch that began at `start` did no direct reclaim and found its
    /// page mapped.
    pub fn plain(&self, start: u64) {
        self.plain.add((self.clock)().saturating_sub(start));
    }

    /// The mean plain touch, ns (each at its bucket's middle, the clock's
    /// share in it), and how many were timed; None before the first.
    pub fn mean(&self) -> Option<(f64, u64)> {
        self.plain.mean()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    static NOW: AtomicU64 = AtomicU64::new(0);
    fn fake_clock() -> u64 {
        NOW.load(Ordering::Relaxed)
    }

    /// Two groups, 100 ns and 200 ns: the mean follows their shares where
    /// a median would jump from one group to the other.
    #[test]
    fn the_figure_is_the_mean_of_the_plain_touches() {
        let probe = TouchProbe::new(fake_clock);
        assert_eq!(probe.mean(), None);
        for (ns, times) in [(100, 6), (200, 4)] {
            for _ in 0..times {
                let t = probe.start();
                NOW.fetch_add(ns, Ordering::Relaxed);
                probe.plain(t);
            }
        }
        // Bucket middles: 102 and 202 ns.
        assert_eq!(probe.mean(), Some((142.0, 10)));
    }
}
