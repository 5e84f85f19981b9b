//! The zone's LRU as reclaimers share it (mm/vmscan.c shrink_lruvec): the
//! lists under the lru_lock, taken only to add pages, to isolate a batch and
//! to put it back, never together with an rmap lock (reclaim isolates,
//! drops the lru_lock, walks each page, then retakes it).
//!
//! | step | kernel | lock |
//! |------|--------|------|
//! | [`SharedWorld::lru_add`] | folio_add_lru of a fault's new page | lru_lock (the kernel batches them per CPU first, 15 a batch in pagevec days; the model adds each at once) |
//! | [`SharedWorld::isolate`] | isolate_lru_folios: up to a batch off the tail, each page pinned | lru_lock |
//! | [`SharedWorld::putback`] | move_folios_to_lru, then the isolation pins dropped | lru_lock |
//!
//! A batch comes from the active list while the inactive one is low
//! ([`Lru::inactive_is_low`](crate::rmap::lru::Lru::inactive_is_low):
//! shrink_active_list refilling it), else from the inactive list. A direct
//! reclaimer finding more pages isolated than the inactive list holds is
//! told to throttle ([`Isolated::Throttle`], too_many_isolated). Each
//! acquisition reports how long it waited for the lru_lock, for the memory
//! line.
//!
//! Each page moved from one list to another (added, isolated, put back) is
//! charged the profile's `work.lru_page_ns` under the lock: the list_del and
//! list_add of its lru links and the flag bits, real work natively.

use super::SharedWorld;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::rmap::PageId;
use crate::rmap::lru::{List, SWAP_CLUSTER_MAX, Verdict};

/// Entries the lists may hold per page of the pool before the stale ones
/// (pages freed since they were added) are dropped: a bound on the lists
/// when pages churn faster than reclaim pops them.
const STALE_BOUND: usize = 2;

/// An isolated batch (shrink_inactive_list's or shrink_active_list's local
/// list): its pages, pinned, not yet walked, and the verdicts of those that
/// were.
#[derive(Debug)]
pub struct LruBatch {
    /// The list it was isolated from.
    pub from: List,
    /// Oldest last (popped first).
    left: Vec<PageId>,
    decided: Vec<(PageId, Verdict)>,
}

impl LruBatch {
    /// The next page to walk, oldest first.
    pub fn next_page(&mut self) -> Option<PageId> {
        self.left.pop()
    }

    /// Where `page` goes back to.
    pub fn decide(&mut self, page: PageId, verdict: Verdict) {
        self.decided.push((page, verdict));
    }

    /// Every page walked: ready for [`SharedWorld::putback`].
    pub fn drained(&self) -> bool {
        self.left.is_empty()
    }
}

/// What an isolation attempt got.
#[derive(Debug)]
pub enum Isolated {
    Batch(LruBatch),
    /// A direct reclaimer must wait first (too_many_isolated).
    Throttle,
    /// Both lists are empty (or hold only stale entries).
    Empty,
}

impl<L: RawRwLock> SharedWorld<L> {
    /// folio_add_lru of a page a fault allocated, as the fault hands it over
    /// (see [`crate::rmap::fault::handle_mm_fault`]: mapped by the fault,
    /// or held by the page cache or swap cache, so nothing frees it
    /// meanwhile; reclaim only takes pages off the LRU). The ns waited for
    /// the lru_lock.
    pub(super) fn lru_add(&self, page: PageId) -> u64 {
        let mut lru = self.lru.lock();
        lru.add(&self.pages, page);
        L::Platform::charge(self.costs.lru_page);
        let bound = STALE_BOUND * self.pages.capacity() as usize + SWAP_CLUSTER_MAX;
        lru.drop_stale(&self.pages, bound);
        lru.waited_ns()
    }

    /// isolate_lru_folios of up to `nr` pages, each pinned until
    /// [`putback`](Self::putback); `direct` (not kswapd) is refused when too
    /// many pages are isolated already. The ns waited for the lru_lock.
    pub fn isolate(&self, nr: usize, direct: bool) -> (Isolated, u64) {
        let mut lru = self.lru.lock();
        let waited = lru.waited_ns();
        if lru.too_many_isolated(!direct) {
            return (Isolated::Throttle, waited);
        }
        let from = if lru.inactive_is_low() {
            List::Active
        } else {
            List::Inactive
        };
        let mut left = lru.isolate_pinned(&self.pages, from, nr);
        L::Platform::charge(left.len() as u64 * self.costs.lru_page);
        if left.is_empty() {
            return (Isolated::Empty, waited);
        }
        left.reverse();
        let decided = Vec::with_capacity(left.len());
        let batch = LruBatch {
            from,
            left,
            decided,
        };
        (Isolated::Batch(batch), waited)
    }

    /// move_folios_to_lru of a walked batch (pages not walked go back as
    /// they were found: old), then each isolation pin dropped, which frees
    /// a reclaimed page. The ns waited for the lru_lock.
    pub fn putback(&self, mut batch: LruBatch) -> u64 {
        while let Some(page) = batch.next_page() {
            batch.decide(page, Verdict::Old);
        }
        let waited = {
            let mut lru = self.lru.lock();
            for &(page, verdict) in &batch.decided {
                lru.putback_from(&self.pages, page, batch.from, verdict);
            }
            L::Platform::charge(batch.decided.len() as u64 * self.costs.lru_page);
            lru.waited_ns()
        };
        for &(page, _) in &batch.decided {
            self.pages.unpin(page);
        }
        waited
    }

    /// too_many_isolated() for a direct reclaimer, under the lru_lock.
    pub fn too_many_isolated(&self) -> bool {
        self.lru.lock().too_many_isolated(false)
    }

    /// Whether reclaim's isolation pin is all that keeps `page` (it is
    /// mapped nowhere and in no cache): freed at its putback.
    pub fn only_isolated(&self, page: PageId) -> bool {
        self.pages.mapcount(page) == 0 && self.pages.pins(page) == 1
    }
}
