//! Derived lock figures from the raw per-class counters of [`crate::locks::stats`].
//!
//! The counters are merged over threads first (`ClassStats::merge`); these turn
//! the merged counts into the figures a report prints.

use crate::locks::stats::{ClassStats, Event};
use crate::results::LockClassReport;
use std::collections::BTreeMap;

/// Acquisitions that had to leave the fast path, as a percentage of all
/// acquisitions (0 when nothing was acquired).
pub fn contended_pct(s: &ClassStats) -> f64 {
    let acquired = s.get(Event::AcquireRead) + s.get(Event::AcquireWrite);
    let contended = s.get(Event::ContendedRead) + s.get(Event::ContendedWrite);
    ratio(contended, acquired) * 100.0
}

/// Readers woken per wake-up batch (rwsem wakes up to 256 queued readers at
/// once, rwsem.c: MAX_READERS_WAKEUP); 0 when no batch was woken.
pub fn mean_wake_batch(s: &ClassStats) -> f64 {
    ratio(s.get(Event::ReaderWoken), s.get(Event::WakeBatch))
}

/// Total slow-path wait over total thread time `thread_time_ns`: the share of
/// the threads' lives spent waiting for this lock (0 when no time was given).
/// The total comes from the wait histogram, so it is exact to its 3 significant
/// figures.
pub fn wait_share(s: &ClassStats, thread_time_ns: u64) -> f64 {
    let total_wait = s.wait_ns.mean() * s.wait_ns.len() as f64;
    if thread_time_ns == 0 {
        return 0.0;
    }
    total_wait / thread_time_ns as f64
}

/// The report entry for one lock class. `mean_readers` (time-averaged readers
/// inside while read-held) is measured by the engine, not by the lock, so the
/// caller passes it in.
pub fn class_report(s: &ClassStats, thread_time_ns: u64, mean_readers: f64) -> LockClassReport {
    let events: BTreeMap<String, u64> = Event::ALL
        .iter()
        .map(|&ev| (ev.key().to_string(), s.get(ev)))
        .collect();
    LockClassReport {
        acquire_read: s.get(Event::AcquireRead),
        acquire_write: s.get(Event::AcquireWrite),
        contended_pct: contended_pct(s),
        wait_share: wait_share(s, thread_time_ns),
        max_wait_ns: if s.wait_ns.is_empty() {
            0
        } else {
            s.wait_ns.max()
        },
        mean_readers,
        events,
    }
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(pairs: &[(Event, u64)]) -> ClassStats {
        let mut s = ClassStats::default();
        for &(ev, n) in pairs {
            s.counts[ev as usize] = n;
        }
        s
    }

    #[test]
    fn contended_share_counts_both_modes_over_all_acquisitions() {
        let s = stats(&[
            (Event::AcquireRead, 300),
            (Event::AcquireWrite, 100),
            (Event::ContendedRead, 20),
            (Event::ContendedWrite, 30),
        ]);
        assert_eq!(contended_pct(&s), 12.5);
        assert_eq!(contended_pct(&ClassStats::default()), 0.0);
    }

    #[test]
    fn mean_batch_is_readers_woken_per_batch() {
        let s = stats(&[(Event::WakeBatch, 4), (Event::ReaderWoken, 10)]);
        assert_eq!(mean_wake_batch(&s), 2.5);
        assert_eq!(mean_wake_batch(&ClassStats::default()), 0.0);
    }

    #[test]
    fn wait_share_sums_the_histogram_over_thread_time() {
        let mut s = ClassStats::default();
        s.wait_ns.record_n(1_000, 10).unwrap();
        s.wait_ns.record_n(2_000, 5).unwrap();
        // 10 us + 10 us of waiting in 100 us of thread time.
        assert!((wait_share(&s, 100_000) - 0.2).abs() < 1e-3);
        assert_eq!(wait_share(&s, 0), 0.0);
    }

    #[test]
    fn class_report_lists_every_event_by_key() {
        let mut s = stats(&[
            (Event::AcquireWrite, 8),
            (Event::Steal, 3),
            (Event::ContendedWrite, 2),
        ]);
        s.wait_ns.record(5_000).unwrap();
        let r = class_report(&s, 10_000, 1.5);
        assert_eq!((r.acquire_read, r.acquire_write), (0, 8));
        assert_eq!(r.contended_pct, 25.0);
        assert_eq!(r.events.len(), Event::ALL.len());
        assert_eq!(r.events["steals"], 3);
        // The histogram keeps 2 significant digits: within 1%.
        assert!(r.max_wait_ns.abs_diff(5_000) <= 50);
        assert_eq!(r.mean_readers, 1.5);
        assert_eq!(class_report(&ClassStats::default(), 0, 0.0).max_wait_ns, 0);
    }
}
