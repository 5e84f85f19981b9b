//! Latency summaries from HDR histograms, and their merge across threads.
//!
//! Each thread records into its own histogram (no shared line on the hot path);
//! the run merges them at the end and reports p50/p99/p99.9/max, as LKP and
//! lockhammer do.

use crate::report::run::Latency;
use hdrhistogram::Histogram;

// 3 significant figures: values within 0.1% of their true value at any
// magnitude; the same precision as `locks::stats` so the two merge cleanly.
const SIGFIG: u8 = 3;

/// A fresh auto-resizing histogram of nanoseconds, the one every engine records into.
pub fn histogram() -> Histogram<u64> {
    Histogram::new(SIGFIG).expect("3 significant figures is valid")
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

    /// Within hdrhistogram's 3-significant-figure bucket of `want`.
    fn near(got: u64, want: u64) -> bool {
        got.abs_diff(want) <= want / 1000 + 1
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
        assert_eq!((l.p50, l.p99), (100, 100));
        assert!(near(l.max, 1_000_000) && l.p999 == 100, "{l:?}");
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
        assert_eq!(l.p50, 10);
        assert!(near(l.p99, 1_000) && near(l.max, 1_000), "{l:?}");
        assert_eq!(merge([]).len(), 0);
    }
}
