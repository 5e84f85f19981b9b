//! What one worker thread measured, whatever engine ran it, and how records
//! of one thread (flush after flush) or of many threads add up.
//!
//! A role's operation ends in an [`OpOutcome`]; only a done operation counts
//! as an operation, gives a latency sample and moves the role's progress. A
//! failed or given-up attempt is counted apart, so a role that fails fast
//! never looks like a fast role.

use super::ctx::ThreadCtx;
use super::latency;
use super::overlap::Hold;
use crate::locks::stats::LockStats;
use crate::rmap::vma_lock::VmaLockStats;
use hdrhistogram::Histogram;

/// Read holds kept per thread for the concurrency integral: beyond this the
/// figure is computed over the first holds only (bounded memory: 16 MiB of
/// 16-byte holds plus their keys).
pub const MAX_HOLDS: usize = 1 << 20;

/// How one operation of a role ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpOutcome {
    /// It did its work: an operation, with a latency sample.
    Done,
    /// It could not be done: no free page after direct reclaim, no live task
    /// to work on, a fault or fork that found no room, nothing to split.
    Failed,
    /// It gave up on a contended lock (reclaim's 2022+ try_lock keeps the
    /// page instead of waiting for the root).
    GaveUp,
}

/// Which rmap lock a hold was of: an anon_vma family or a file's i_mmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockKey {
    Family(u32),
    Space(u32),
}

/// Everything one worker measured (summed over its flushes).
pub struct Record {
    /// Latency of each done operation, ns.
    pub latency_ns: Histogram<u64>,
    /// Read holds of rmap locks, keyed by which lock (family or file id).
    pub holds: Vec<(LockKey, Hold)>,
    pub lock: LockStats,
    pub ctx: ThreadCtx,
    pub vmas_visited: u64,
    pub direct_reclaims: u64,
    pub direct_reclaim_ns: u64,
    /// Pages this thread freed (kswapd or direct reclaim): the memory line.
    pub pages_reclaimed: u64,
    /// Of those, how many in each second of the thread's run (index: whole
    /// seconds since its first operation).
    pub reclaimed_by_s: Vec<u64>,
    /// Inactive pages this thread isolated and walked while reclaiming
    /// (pgscan): over `pages_reclaimed`, the LRU churn per page freed.
    pub pages_scanned: u64,
    /// Faults on swap entries that read a page in (do_swap_page, no page
    /// in the swap cache).
    pub swapins: u64,
    /// Faults on swap entries that found their page in the swap cache.
    pub swap_cache_hits: u64,
    /// Direct-reclaim entries that had to wait (too_many_isolated).
    pub throttled: u64,
    /// ns spent waiting for the lru_lock.
    pub lru_wait_ns: u64,
    /// vma_lock_* events of this thread's faults (per-VMA locks).
    pub vma_lock: VmaLockStats,
    /// Operations that ended [`OpOutcome::Failed`].
    pub failed: u64,
    /// Operations that ended [`OpOutcome::GaveUp`].
    pub gave_up: u64,
    /// The thread's time in the run so far (start to last flush), ns: the
    /// denominator of its wait shares.
    pub lifetime_ns: u64,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            latency_ns: latency::histogram(),
            holds: Vec::new(),
            lock: LockStats::default(),
            ctx: ThreadCtx::default(),
            vmas_visited: 0,
            direct_reclaims: 0,
            direct_reclaim_ns: 0,
            pages_reclaimed: 0,
            reclaimed_by_s: Vec::new(),
            pages_scanned: 0,
            swapins: 0,
            swap_cache_hits: 0,
            throttled: 0,
            lru_wait_ns: 0,
            vma_lock: VmaLockStats::default(),
            failed: 0,
            gave_up: 0,
            lifetime_ns: 0,
        }
    }
}

impl Record {
    /// Count one operation that ended `outcome` after `ns`: a latency sample
    /// for a done one, a count for the others. True if it was done.
    #[inline]
    pub fn note(&mut self, outcome: OpOutcome, ns: u64) -> bool {
        match outcome {
            OpOutcome::Done => {
                latency::record(&mut self.latency_ns, ns);
                return true;
            }
            OpOutcome::Failed => self.failed += 1,
            OpOutcome::GaveUp => self.gave_up += 1,
        }
        false
    }

    /// One page freed `second` whole seconds into the thread's run.
    pub fn reclaimed(&mut self, second: usize) {
        self.pages_reclaimed += 1;
        if self.reclaimed_by_s.len() <= second {
            self.reclaimed_by_s.resize(second + 1, 0);
        }
        self.reclaimed_by_s[second] += 1;
    }

    /// One read hold of the rmap lock `key` (dropped beyond [`MAX_HOLDS`]).
    pub fn hold(&mut self, key: LockKey, h: Hold) {
        if self.holds.len() < MAX_HOLDS {
            self.holds.push((key, h));
        }
    }

    /// Add `other` into this record and leave `other` empty: a thread's
    /// flush into its shared slot. Counts and histograms add; lock stats
    /// merge; the lifetime is the longer of the two (both run from the
    /// thread's start).
    pub fn absorb(&mut self, other: &mut Record) {
        self.latency_ns
            .add(&other.latency_ns)
            .expect("auto-resizing histograms merge");
        other.latency_ns.reset();
        let room = MAX_HOLDS.saturating_sub(self.holds.len());
        self.holds.extend(other.holds.drain(..).take(room));
        self.lock.merge(&other.lock);
        other.lock = LockStats::default();
        self.ctx = self.ctx + std::mem::take(&mut other.ctx);
        add_series(
            &mut self.reclaimed_by_s,
            &std::mem::take(&mut other.reclaimed_by_s),
        );
        self.vma_lock.add(&std::mem::take(&mut other.vma_lock));
        for (a, b) in [
            (&mut self.vmas_visited, &mut other.vmas_visited),
            (&mut self.direct_reclaims, &mut other.direct_reclaims),
            (&mut self.direct_reclaim_ns, &mut other.direct_reclaim_ns),
            (&mut self.pages_reclaimed, &mut other.pages_reclaimed),
            (&mut self.pages_scanned, &mut other.pages_scanned),
            (&mut self.swapins, &mut other.swapins),
            (&mut self.swap_cache_hits, &mut other.swap_cache_hits),
            (&mut self.throttled, &mut other.throttled),
            (&mut self.lru_wait_ns, &mut other.lru_wait_ns),
            (&mut self.failed, &mut other.failed),
            (&mut self.gave_up, &mut other.gave_up),
        ] {
            *a += std::mem::take(b);
        }
        self.lifetime_ns = self.lifetime_ns.max(other.lifetime_ns);
    }
}

/// Add `more` into `into` element by element, growing `into` to fit.
pub fn add_series(into: &mut Vec<u64>, more: &[u64]) {
    if into.len() < more.len() {
        into.resize(more.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(more) {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_done_operations_give_latency_samples() {
        let mut r = Record::default();
        assert!(r.note(OpOutcome::Done, 500));
        assert!(!r.note(OpOutcome::Failed, 7));
        assert!(!r.note(OpOutcome::GaveUp, 9));
        assert!(!r.note(OpOutcome::Failed, 7));
        assert_eq!((r.latency_ns.len(), r.failed, r.gave_up), (1, 2, 1));
        assert!(r.latency_ns.min() >= 495, "the failures' 7 ns is no sample");
    }

    #[test]
    fn absorb_adds_every_count_and_empties_the_source() {
        let mut slot = Record::default();
        let mut local = Record::default();
        local.note(OpOutcome::Done, 100);
        local.note(OpOutcome::Failed, 1);
        local.note(OpOutcome::GaveUp, 1);
        local.reclaimed(0);
        local.reclaimed(2);
        local.reclaimed(2);
        local.swapins = 5;
        local.vma_lock.abort = 2;
        local.vmas_visited = 40;
        local.lifetime_ns = 1_000;
        local.hold(
            LockKey::Family(2),
            Hold {
                enter_ns: 1,
                leave_ns: 2,
            },
        );
        slot.absorb(&mut local);
        local.note(OpOutcome::Failed, 1);
        local.reclaimed(1);
        local.vma_lock.abort = 1;
        local.lifetime_ns = 2_000;
        slot.absorb(&mut local);
        assert_eq!(slot.reclaimed_by_s, [1, 1, 2], "second by second");
        assert_eq!((slot.swapins, slot.vma_lock.abort), (5, 3));
        assert!(local.reclaimed_by_s.is_empty());
        assert_eq!(
            (slot.latency_ns.len(), slot.failed, slot.gave_up),
            (1, 2, 1)
        );
        assert_eq!((slot.pages_reclaimed, slot.vmas_visited), (4, 40));
        assert_eq!((slot.holds.len(), slot.lifetime_ns), (1, 2_000));
        assert_eq!((local.failed, local.latency_ns.len()), (0, 0));
        assert!(local.holds.is_empty());
    }
}
