//! TimeBuckets: a histogram of operation times that any thread adds to
//! without a lock, for the probes `calibrate` puts into a native storm.
//!
//! Fixed-width buckets of relaxed counters: an add is one uncontended
//! fetch_add, a few ns beside operations of hundreds of ns to microseconds,
//! so the timing does not slow what it times. The last bucket is
//! open-ended, taking every time past the range; the figures leave it out,
//! since a time that long is an interruption (an interrupt, or a switch on
//! a wall clock), which the simulator draws itself.

use std::sync::atomic::{AtomicU64, Ordering};

pub struct TimeBuckets {
    /// Width of a bucket, ns: bucket i holds [i, i + 1) x width.
    width: u64,
    counts: Box<[AtomicU64]>,
}

impl TimeBuckets {
    /// `buckets` buckets of `width` ns each (the last one open-ended).
    pub fn new(width: u64, buckets: usize) -> TimeBuckets {
        assert!(
            width > 0 && buckets > 1,
            "a histogram of at least two buckets"
        );
        TimeBuckets {
            width,
            counts: (0..buckets).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Count one time of `ns`.
    pub fn add(&self, ns: u64) {
        let bucket = ((ns / self.width) as usize).min(self.counts.len() - 1);
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
    }

    /// The times in range, as (bucket middle, count).
    fn in_range(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        let width = self.width as f64;
        let last = self.counts.len() - 1;
        self.counts[..last]
            .iter()
            .enumerate()
            .map(move |(i, c)| ((i as f64 + 0.5) * width, c.load(Ordering::Relaxed)))
    }

    /// Their mean, ns (each at its bucket's middle), and how many; None
    /// before the first.
    pub fn mean(&self) -> Option<(f64, u64)> {
        let (n, ns) = self
            .in_range()
            .fold((0, 0.0), |(n, ns), (mid, c)| (n + c, ns + c as f64 * mid));
        (n > 0).then(|| (ns / n as f64, n))
    }

    /// Their median, ns (the middle of the bucket it falls in), and how
    /// many; None before the first.
    pub fn median(&self) -> Option<(f64, u64)> {
        let n: u64 = self.in_range().map(|(_, c)| c).sum();
        let half = n.div_ceil(2);
        let mut seen = 0;
        self.in_range().find_map(|(mid, c)| {
            seen += c;
            (n > 0 && seen >= half).then_some((mid, n))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_median_leave_out_the_times_past_the_range() {
        let b = TimeBuckets::new(4, 100);
        assert_eq!(b.mean(), None);
        assert_eq!(b.median(), None);
        // 298, 310, 311 and 395 ns; 396 and 1 ms fall in the last bucket,
        // [396, 400) and past: out.
        for ns in [298, 310, 311, 1_000_000, 395, 396] {
            b.add(ns);
        }
        // Bucket middles: 298, 310, 310, 394.
        assert_eq!(b.mean(), Some(((298.0 + 310.0 + 310.0 + 394.0) / 4.0, 4)));
        assert_eq!(b.median(), Some((310.0, 4)));
    }

    #[test]
    fn the_median_of_an_odd_count_is_its_middle_time() {
        let b = TimeBuckets::new(10, 1_000);
        for ns in [5, 995, 4_000, 4_001, 7_000] {
            b.add(ns);
        }
        assert_eq!(b.median(), Some((4_005.0, 5)));
    }
}
