//! WalkProbe: what a long page_referenced walk costs per vma inside a storm.
//!
//! A walk of a page the whole family maps visits every vma of the family
//! (10,001 in aim7-fork-storm). What each visit costs depends on where the
//! walk's lines are, and that depends on what the storm's other threads and
//! the scan between two such walks did to the caches: more than a walk from
//! warm caches, less than one after the whole world went through them. The
//! probe measures it where it happens: `calibrate` runs the model's own
//! native storm with a probe whose clock is the thread's CPU clock, so a
//! walk that was switched out midway is charged only its time on a CPU.
//!
//! Only walks of at least `min_vmas` vmas count, so the short walks'
//! per-page work (the page's own lock, the anon_vma lookup) does not dilute
//! the per-vma figure; the walk's end read of the clock (a syscall for a
//! thread's CPU clock, some 100-200 ns) falls in its time, under 0.1% of a
//! walk of 10,001 vmas.
//!
//! That per-page work is measured apart, on the walks of exactly one vma:
//! each one's time goes into a histogram, whose mean, less the clock's own
//! share and the one visit, is what a walk costs before its first vma
//! (`calibrate`'s `work.walk_ns`). A mean, as the per-vma figure is: their
//! times spread wide (one storm on one CPU: deciles 328, 336, 340, 344,
//! 376, 476, 548, 744 and 1,076 ns, the clock's 180 in each), so a median
//! would jump between the fast and the slow ones from trial to trial.

use super::time_buckets::TimeBuckets;
use std::sync::atomic::{AtomicU64, Ordering};

/// Sums over the storm's long walks, shared by every reclaimer.
pub struct WalkProbe {
    /// The clock the walks are timed with, ns.
    clock: fn() -> u64,
    /// Shortest walk counted, in vmas visited.
    min_vmas: u32,
    ns: AtomicU64,
    vmas: AtomicU64,
    walks: AtomicU64,
    /// Walks of one vma, by time.
    one_vma: TimeBuckets,
}

/// Width of a bucket of one-vma walk times.
const BUCKET_NS: u64 = 4;

/// Buckets of one-vma walk times: up to 16 us, some 50 times a cold walk.
const BUCKETS: usize = 4_096;

impl WalkProbe {
    /// A probe timing the walks of `min_vmas` vmas or more with `clock` (ns,
    /// monotonic per thread).
    pub fn new(clock: fn() -> u64, min_vmas: u32) -> WalkProbe {
        WalkProbe {
            clock,
            min_vmas,
            ns: AtomicU64::new(0),
            vmas: AtomicU64::new(0),
            walks: AtomicU64::new(0),
            one_vma: TimeBuckets::new(BUCKET_NS, BUCKETS),
        }
    }

    /// The clock before a walk.
    #[inline]
    pub fn start(&self) -> u64 {
        (self.clock)()
    }

    /// A walk that began at `start` ended having visited `vmas` vmas: one
    /// of a single vma goes into the histogram, one of `min_vmas` or more
    /// into the sums; any other is not timed (no second clock read).
    pub fn walked(&self, start: u64, vmas: u32) {
        let long = vmas >= self.min_vmas;
        if vmas != 1 && !long {
            return;
        }
        let took = (self.clock)().saturating_sub(start);
        if vmas == 1 {
            self.one_vma.add(took);
        }
        if long {
            self.ns.fetch_add(took, Ordering::Relaxed);
            self.vmas.fetch_add(u64::from(vmas), Ordering::Relaxed);
            self.walks.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Long walks counted so far.
    pub fn walks(&self) -> u64 {
        self.walks.load(Ordering::Relaxed)
    }

    /// The mean walk of one vma, ns (each at its bucket's middle), and
    /// how many it counts; None before the first. Walks past the last
    /// bucket (16 us: an interrupt came, or the walk was switched out on a
    /// wall clock) are left out: the simulator draws interruptions itself.
    pub fn one_vma_mean(&self) -> Option<(f64, u64)> {
        self.one_vma.mean()
    }

    /// ns per vma over the long walks (None before the first).
    pub fn ns_per_vma(&self) -> Option<f64> {
        let vmas = self.vmas.load(Ordering::Relaxed);
        (vmas > 0).then(|| self.ns.load(Ordering::Relaxed) as f64 / vmas as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    static NOW: AtomicU64 = AtomicU64::new(0);
    fn fake_clock() -> u64 {
        NOW.load(Ordering::Relaxed)
    }

    #[test]
    fn only_long_walks_count_and_the_figure_is_their_time_over_their_vmas() {
        let probe = WalkProbe::new(fake_clock, 1_024);
        assert_eq!(probe.ns_per_vma(), None);
        NOW.store(1_000, Ordering::Relaxed);
        let t = probe.start();
        NOW.store(1_500, Ordering::Relaxed);
        probe.walked(t, 1_023); // short: not counted
        let t = probe.start();
        NOW.store(1_500 + 4_096 * 300, Ordering::Relaxed);
        probe.walked(t, 4_096);
        let t = probe.start();
        NOW.store(1_500 + 4_096 * 300 + 2_048 * 600, Ordering::Relaxed);
        probe.walked(t, 2_048);
        assert_eq!(probe.walks(), 2);
        assert_eq!(probe.ns_per_vma(), Some(400.0));
    }

    static ONE: AtomicU64 = AtomicU64::new(0);
    fn one_clock() -> u64 {
        ONE.load(Ordering::Relaxed)
    }

    #[test]
    fn walks_of_one_vma_give_their_mean_without_the_interrupted_ones() {
        let probe = WalkProbe::new(one_clock, 1_024);
        assert_eq!(probe.one_vma_mean(), None);
        let mut now = 0;
        // 298, 310 and 402 ns and one of 1 ms (an interrupt); a walk of
        // two vmas does not count.
        for (took, vmas) in [(298, 1), (310, 1), (5_000, 2), (402, 1), (1_000_000, 1)] {
            ONE.store(now, Ordering::Relaxed);
            let t = probe.start();
            now += took;
            ONE.store(now, Ordering::Relaxed);
            probe.walked(t, vmas);
        }
        let (mean, n) = probe.one_vma_mean().unwrap();
        assert_eq!(n, 3);
        // Bucket middles: [296, 300) -> 298, [308, 312) -> 310, [400, 404) -> 402.
        assert_eq!(mean, (298.0 + 310.0 + 402.0) / 3.0);
        assert_eq!(probe.walks(), 0, "no long walk");
    }
}
