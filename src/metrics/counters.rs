//! Per-thread counters that other threads may read while a run goes on.
//!
//! Each thread owns one cache-padded row of `N` counters, so counting costs no
//! line transfer (the lock's own line is the object of study, as will-it-scale
//! pads its per-task counters). Rows are atomics rather than thread-locals so
//! the watchdog can read every thread's progress even when a thread never comes
//! back from an acquire.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// `threads` rows of `N` counters, one cache-padded row per thread.
pub struct PerThread<const N: usize> {
    rows: Box<[CachePadded<[AtomicU64; N]>]>,
}

impl<const N: usize> PerThread<N> {
    pub fn new(threads: usize) -> Self {
        PerThread {
            rows: (0..threads)
                .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
        }
    }

    /// Add one to counter `which` of `thread`'s row.
    ///
    /// Only the owning thread writes its row, so a plain load and store (no
    /// locked read-modify-write) cannot lose an update; readers see a value at
    /// most one behind.
    #[inline]
    pub fn bump(&self, thread: usize, which: usize) {
        let c = &self.rows[thread][which];
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Counter `which` of `thread`'s row.
    pub fn get(&self, thread: usize, which: usize) -> u64 {
        self.rows[thread][which].load(Ordering::Relaxed)
    }

    /// Counter `which` of every row, in thread order.
    pub fn column(&self, which: usize) -> Vec<u64> {
        (0..self.rows.len()).map(|t| self.get(t, which)).collect()
    }

    pub fn threads(&self) -> usize {
        self.rows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sit_on_separate_cache_lines() {
        let c = PerThread::<2>::new(2);
        let a = &c.rows[0] as *const _ as usize;
        let b = &c.rows[1] as *const _ as usize;
        // CachePadded aligns to 128 bytes on x86_64 (adjacent-line prefetch pairs).
        assert!(b - a >= 64, "rows {a:#x} and {b:#x} share a line");
    }

    #[test]
    fn bumps_land_in_their_own_thread_and_counter() {
        let c = PerThread::<2>::new(3);
        std::thread::scope(|s| {
            for t in 0..3 {
                let c = &c;
                s.spawn(move || {
                    for _ in 0..(t + 1) * 1000 {
                        c.bump(t, 0);
                    }
                    c.bump(t, 1);
                });
            }
        });
        assert_eq!(c.column(0), vec![1000, 2000, 3000]);
        assert_eq!(c.column(1), vec![1, 1, 1]);
        assert_eq!(c.threads(), 3);
    }
}
