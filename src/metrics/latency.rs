//! Latency summaries from HDR histograms, and their merge across threads.
//!
//! Each thread records into its own histogram (no shared line on the hot path);
//! the run merges them at the end and reports p50/p99/p99.9/max, as LKP and
//! lockhammer do.

use crate::results::Latency;
use hdrhistogram::Histogram;

// 2 significant figures: every value within 1% of its true value at any
// magnitude, which is finer than run-to-run noise, and keeps a per-thread
// histogram spanning 1 ns to 1 s near 20 KiB (3 figures take 8x that, too much
// for 4096 threads each with their own).
const SIGFIG: u8 = 2;

/// A fresh auto-resizing histogram of nanoseconds, the one every engine records into.
pub fn histogram() -> Histogram<u64> {
    Histogram::new(SIGFIG).expect("2 significant figures is valid")
}

/// Record `ns` into `h`, growing it as needed.
///
/// Not `saturating_record`: that clamps to the histogram's current range and
/// never grows it, and `Histogram::new` starts at a range of 1..2048 at 3
/// figures, so every larger value would be recorded as about 2 us.
#[inline]
pub fn record(h: &mut Histogram<u64>, ns: u64) {
    if h.record(ns).is_err() {
        // Only beyond what a u64 histogram can grow to (about 2^62 ns).
        h.saturating_record(ns);
    }
}

/// p50, p99, p99.9 and max of `h`; all zero when nothing was recorded.
pub fn latency(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    Latency {
        p50: h.value_at_quantile(0.50),
        p99: h.value_at_quantile(0.99),
        p999: h.value_at_quantile(0.999),
        max: h.max(),
    }
}

/// One histogram holding every sample of `hists` (per-thread histograms of one role).
pub fn merge<'a>(hists: impl IntoIterator<Item = &'a Histogram<u64>>) -> Histogram<u64> {
    let mut all = histogram();
    for h in hists {
        all.add(h).expect("auto-resizing histograms always merge");
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within hdrhistogram's 2-significant-figure bucket of `want`.
    fn near(got: u64, want: u64) -> bool {
        got.abs_diff(want) <= want / 100 + 1
    }

    #[test]
    fn record_grows_the_histogram_instead_of_clamping() {
        let mut h = histogram();
        record(&mut h, 300_000_000);
        record(&mut h, 5);
        assert!(near(h.max(), 300_000_000), "max {}", h.max());
        assert_eq!(h.min(), 5);
    }

    #[test]
    fn percentiles_of_one_to_ten_thousand() {
        let mut h = histogram();
        for v in 1..=10_000u64 {
            h.record(v).unwrap();
        }
        let l = latency(&h);
        assert!(near(l.p50, 5_000), "{l:?}");
        assert!(near(l.p99, 9_900), "{l:?}");
        assert!(near(l.p999, 9_990), "{l:?}");
        assert!(near(l.max, 10_000), "{l:?}");
    }

    #[test]
    fn a_rare_outlier_shows_in_max_and_p999_not_p99() {
        let mut h = histogram();
        h.record_n(100, 999).unwrap();
        h.record(1_000_000).unwrap();
        let l = latency(&h);
        assert!(
            near(l.p50, 100) && near(l.p99, 100) && near(l.p999, 100),
            "{l:?}"
        );
        assert!(near(l.max, 1_000_000), "{l:?}");
    }

    #[test]
    fn empty_histogram_is_all_zero() {
        assert_eq!(latency(&histogram()), Latency::default());
    }

    #[test]
    fn merge_keeps_every_sample_of_both_threads() {
        let (mut a, mut b) = (histogram(), histogram());
        a.record_n(10, 50).unwrap();
        b.record_n(1_000, 50).unwrap();
        let m = merge([&a, &b]);
        assert_eq!(m.len(), 100);
        let l = latency(&m);
        // Half the samples are 10, half 1000: the median is the low one, p99 the high.
        assert!(near(l.p50, 10), "{l:?}");
        assert!(near(l.p99, 1_000) && near(l.max, 1_000), "{l:?}");
        assert_eq!(merge([]).len(), 0);
    }
}
