//! The LRU lists reclaim scans (mm/vmscan.c, mm/swap.c), for the model's one
//! zone: an active and an inactive list under the zone's `lru_lock`
//! ([`LockTarget::LruLock`](super::LockTarget::LruLock), a spinlock: rank 5,
//! innermost).
//!
//! | step | kernel | lock |
//! |------|--------|------|
//! | [`Lru::add`] | folio_add_lru (new anon pages go to the inactive list since 5.9, b518154e59aa; page-cache pages too) | lru_lock |
//! | [`Lru::isolate`] | isolate_lru_folios: up to [`SWAP_CLUSTER_MAX`] pages off the tail | lru_lock |
//! | page_referenced / try_to_unmap of each isolated page | shrink_folio_list / shrink_active_list | the rmap lock, no lru_lock |
//! | [`Lru::putback`] | move_folios_to_lru | lru_lock |
//!
//! Where an isolated inactive page goes ([`Verdict`], folio_check_references):
//! its walk found a young PTE -> to the active list (activated); the walk
//! gave up on a contended rmap try_lock -> kept: back at the head of the
//! inactive list, not reclaimed and not rescanned until the list has turned
//! over (Minchan Kim's 2022 change, 6d4675e60135: folio_referenced returns
//! -1, folio_check_references FOLIOREF_KEEP, "rmap lock contention:
//! rotate"); found old -> try_to_unmap and freed (reclaimed), or back on the
//! inactive list if it could not be freed. An isolated active page goes to
//! the inactive list whatever its walk found (shrink_active_list since the
//! split LRU, 2.6.28: the walk clears the young bits, and only a referenced
//! VM_EXEC file page, which the model has none of, gets another trip on the
//! active list; 8cab4754d24a, 2.6.31). Before 2.6.28 a referenced mapped
//! page stayed active; the model stands for the split LRU only.
//!
//! Which list a batch comes from (shrink_lruvec, [`Lru::inactive_is_low`]):
//! the active one while the inactive list holds fewer pages than the active
//! one over the inactive ratio (int_sqrt(10 x GiB of the two lists), 1
//! below 1 GiB: inactive_is_low since 4.8's node LRU, the same table as
//! 2.6.28's inactive_anon_is_low), else the inactive one. So on a small
//! machine about half the LRU is inactive, and each page waits there for
//! about a trip through half the LRU before its references are checked.
//!
//! too_many_isolated(): a direct reclaimer (not kswapd) waits
//! (reclaim_throttle) while more pages are isolated than the inactive list
//! holds, so a crowd of allocating tasks cannot strip the list bare
//! ([`Lru::too_many_isolated`]).
//!
//! Counters for Andrew Morton's question on the 2022 try_lock patch ("could
//! we burn much CPU time pointlessly churning through the LRU?"): pages
//! scanned and reclaimed, so an engine can report scanned per reclaimed,
//! and how many were kept for contention.
//!
//! Entries carry the page's allocation generation: a page freed elsewhere
//! (exit, COW) leaves a stale entry that isolation drops without counting it
//! (the kernel deletes the folio from its list when it is freed, under the
//! same lock; the model defers that to the next scan).
//!
//! Every field is guarded by the lru_lock.

use super::ids::PageId;
use super::page::PagePool;
use std::collections::VecDeque;

/// Pages reclaim isolates per batch (include/linux/swap.h SWAP_CLUSTER_MAX).
pub const SWAP_CLUSTER_MAX: usize = 32;

/// Which list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    Active,
    Inactive,
}

/// What one isolated page's walk decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A young PTE was found: back to the active list.
    Referenced,
    /// The rmap try_lock was contended: kept, at the head of the inactive
    /// list.
    Contended,
    /// Old, and freed by try_to_unmap: off the LRU for good.
    Reclaimed,
    /// Old but not freed (an active page deactivated, or an inactive page
    /// still mapped): on the inactive list.
    Old,
}

/// Counters since the LRU was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LruStats {
    /// Inactive pages isolated and examined (pgscan).
    pub scanned: u64,
    /// Pages freed by reclaim (pgsteal).
    pub reclaimed: u64,
    /// Pages moved to the active list: found referenced.
    pub activated: u64,
    /// Pages kept on the inactive list because the rmap try_lock was
    /// contended.
    pub contended: u64,
    /// Active pages moved to the inactive list.
    pub deactivated: u64,
}

/// One zone's LRU.
#[derive(Debug, Default)]
pub struct Lru {
    /// Newest at the front; reclaim takes from the back. (page, generation).
    lists: [VecDeque<(PageId, u32)>; 2],
    /// Pages isolated now (NR_ISOLATED_ANON + NR_ISOLATED_FILE).
    isolated: u32,
    pub stats: LruStats,
}

impl Lru {
    fn list(&mut self, which: List) -> &mut VecDeque<(PageId, u32)> {
        &mut self.lists[which as usize]
    }

    /// Entries on a list (stale ones included until a scan drops them).
    pub fn len(&self, which: List) -> usize {
        self.lists[which as usize].len()
    }

    /// Pages isolated now.
    pub fn isolated(&self) -> u32 {
        self.isolated
    }

    /// folio_add_lru: a new page joins the inactive list.
    pub fn add(&mut self, pages: &PagePool, page: PageId) {
        let g = pages.generation(page);
        self.list(List::Inactive).push_front((page, g));
    }

    /// The pages of `which` the list holds now, newest first, stale entries
    /// skipped.
    pub fn pages<'a>(
        &'a self,
        pages: &'a PagePool,
        which: List,
    ) -> impl Iterator<Item = PageId> + 'a {
        self.lists[which as usize]
            .iter()
            .filter(|&&(p, g)| live(pages, p, g))
            .map(|&(p, _)| p)
    }

    /// isolate_lru_folios: up to `nr` live pages off the tail of `which`.
    /// Stale entries are dropped and not counted.
    pub fn isolate(&mut self, pages: &PagePool, which: List, nr: usize) -> Vec<PageId> {
        self.isolate_where(which, nr, |p, g| live(pages, p, g))
    }

    /// [`isolate`](Self::isolate) for pages other threads may free at any
    /// time: each page taken gets a pin (folio_try_get, as isolate_lru_folios
    /// takes a reference), which the caller drops after
    /// [`putback`](Self::putback). A page freed (or freed and reallocated)
    /// since its entry was made is a stale entry.
    pub fn isolate_pinned(&mut self, pages: &PagePool, which: List, nr: usize) -> Vec<PageId> {
        self.isolate_where(which, nr, |p, g| {
            if !live(pages, p, g) || !pages.pin(p) {
                return false;
            }
            // Pinned: now the descriptor cannot change owner under us.
            let still = live(pages, p, g);
            if !still {
                pages.unpin(p);
            }
            still
        })
    }

    fn isolate_where(
        &mut self,
        which: List,
        nr: usize,
        mut take: impl FnMut(PageId, u32) -> bool,
    ) -> Vec<PageId> {
        let mut got = Vec::with_capacity(nr);
        while got.len() < nr {
            let Some((p, g)) = self.list(which).pop_back() else {
                break;
            };
            if take(p, g) {
                got.push(p);
            }
        }
        self.isolated += got.len() as u32;
        if which == List::Inactive {
            self.stats.scanned += got.len() as u64;
        }
        got
    }

    /// Drop every stale entry (pages freed since they were added): what the
    /// kernel does at each free under the lru_lock, done here when the lists
    /// have grown to `over` entries, so a world whose pages churn without a
    /// reclaimer to pop them keeps its lists bounded.
    pub fn drop_stale(&mut self, pages: &PagePool, over: usize) {
        if self.lists.iter().map(VecDeque::len).sum::<usize>() >= over {
            for l in &mut self.lists {
                l.retain(|&(p, g)| live(pages, p, g));
            }
        }
    }

    /// move_folios_to_lru for one isolated page, by its walk's verdict.
    pub fn putback(&mut self, pages: &PagePool, page: PageId, verdict: Verdict) {
        debug_assert!(self.isolated > 0, "putback of a page never isolated");
        self.isolated -= 1;
        let to = match verdict {
            Verdict::Reclaimed => {
                self.stats.reclaimed += 1;
                return;
            }
            Verdict::Contended => {
                self.stats.contended += 1;
                List::Inactive
            }
            Verdict::Referenced => {
                self.stats.activated += 1;
                List::Active
            }
            Verdict::Old => List::Inactive,
        };
        let g = pages.generation(page);
        self.list(to).push_front((page, g));
    }

    /// An active page found old goes to the inactive list.
    pub fn deactivate(&mut self, pages: &PagePool, page: PageId) {
        self.stats.deactivated += 1;
        self.putback(pages, page, Verdict::Old);
    }

    /// [`putback`](Self::putback) of a page isolated from `from`: an old
    /// active page is deactivated.
    pub fn putback_from(&mut self, pages: &PagePool, page: PageId, from: List, verdict: Verdict) {
        match (from, verdict) {
            (List::Active, Verdict::Old) => self.deactivate(pages, page),
            _ => self.putback(pages, page, verdict),
        }
    }

    /// too_many_isolated(): true if a direct reclaimer must wait
    /// (reclaim_throttle) before isolating more: more pages are isolated than
    /// the inactive list holds. kswapd is never throttled here.
    pub fn too_many_isolated(&self, kswapd: bool) -> bool {
        !kswapd && self.isolated as usize > self.len(List::Inactive)
    }

    /// inactive_is_low(): the next batch refills the inactive list from the
    /// active one (shrink_active_list). Entries count as pages, stale ones
    /// included until a scan drops them.
    pub fn inactive_is_low(&self) -> bool {
        let (inactive, active) = (self.len(List::Inactive), self.len(List::Active));
        inactive * inactive_ratio(inactive + active) < active
    }
}

/// The target ratio of active to inactive pages for an LRU of `pages` 4 KiB
/// pages: int_sqrt(10 x whole GiB), at least 1 (mm/vmscan.c's table: 1 up to
/// 1 GiB, 3 at 1 GiB, 10 at 10 GiB, 31 at 100 GiB).
fn inactive_ratio(pages: usize) -> usize {
    const PAGES_PER_GIB: usize = 1 << 18;
    (10 * (pages / PAGES_PER_GIB)).isqrt().max(1)
}

/// What the walk of an isolated page found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walked {
    /// A young PTE.
    Referenced,
    /// No young PTE (or nothing left mapping it).
    Old,
    /// The rmap try_lock was contended; the page was not walked.
    Contended,
}

/// Where a page isolated from `from` whose walk found `walked` goes: an
/// active page is deactivated whatever was found (shrink_active_list); an
/// inactive one by folio_check_references. `reclaim` (try_to_unmap and
/// free) runs only for an old inactive page and says whether the page was
/// freed.
pub fn verdict(from: List, walked: Walked, reclaim: impl FnOnce() -> bool) -> Verdict {
    match walked {
        _ if from == List::Active => Verdict::Old,
        Walked::Contended => Verdict::Contended,
        Walked::Referenced => Verdict::Referenced,
        Walked::Old if from == List::Inactive && reclaim() => Verdict::Reclaimed,
        Walked::Old => Verdict::Old,
    }
}

/// Whether an LRU entry still names the page it was made for.
fn live(pages: &PagePool, page: PageId, generation: u32) -> bool {
    pages.mapping(page).is_some() && pages.generation(page) == generation
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rmap::ids::SpaceId;
    use crate::rmap::page::Mapping;

    fn file() -> Mapping {
        Mapping::File { space: SpaceId(0) }
    }

    #[test]
    fn isolation_takes_the_oldest_and_skips_freed_pages() {
        let pool = PagePool::new(8);
        let mut lru = Lru::default();
        let p: Vec<PageId> = (0..5).map(|i| pool.alloc(file(), i).unwrap()).collect();
        for &q in &p {
            lru.add(&pool, q);
        }
        assert!(pool.unpin(p[0]), "the oldest page is freed elsewhere");
        let reused = pool.alloc(file(), 9).unwrap();
        assert_eq!(reused, p[0], "same slot, new page");
        let got = lru.isolate(&pool, List::Inactive, 3);
        assert_eq!(
            got,
            vec![p[1], p[2], p[3]],
            "oldest live first, stale entry dropped"
        );
        assert_eq!((lru.isolated(), lru.stats.scanned), (3, 3));
    }

    #[test]
    fn verdicts_send_pages_where_the_kernel_does_and_count_them() {
        let pool = PagePool::new(8);
        let mut lru = Lru::default();
        let p: Vec<PageId> = (0..4).map(|i| pool.alloc(file(), i).unwrap()).collect();
        for &q in &p {
            lru.add(&pool, q);
        }
        let got = lru.isolate(&pool, List::Inactive, SWAP_CLUSTER_MAX);
        assert_eq!(got.len(), 4);
        lru.putback(&pool, got[0], Verdict::Referenced);
        lru.putback(&pool, got[1], Verdict::Contended);
        lru.putback(&pool, got[2], Verdict::Old);
        lru.putback(&pool, got[3], Verdict::Reclaimed);
        let active: Vec<PageId> = lru.pages(&pool, List::Active).collect();
        assert_eq!(
            active,
            vec![got[0]],
            "only the referenced page is activated"
        );
        assert_eq!(
            lru.pages(&pool, List::Inactive).collect::<Vec<_>>(),
            vec![got[2], got[1]],
            "a contended page is kept at the inactive head (2022)"
        );
        let s = lru.stats;
        assert_eq!(
            (s.scanned, s.reclaimed, s.activated, s.contended),
            (4, 1, 1, 1)
        );
        assert_eq!(lru.isolated(), 0);
    }

    #[test]
    fn pinned_isolation_pins_live_pages_only_and_stale_entries_can_be_dropped() {
        let pool = PagePool::new(8);
        let mut lru = Lru::default();
        let p: Vec<PageId> = (0..4).map(|i| pool.alloc(file(), i).unwrap()).collect();
        for &q in &p {
            lru.add(&pool, q);
        }
        assert!(pool.unpin(p[1]), "freed elsewhere");
        let got = lru.isolate_pinned(&pool, List::Inactive, 8);
        assert_eq!(got, vec![p[0], p[2], p[3]]);
        assert!(
            got.iter().all(|&q| pool.pins(q) == 2),
            "each isolated page pinned"
        );
        for &q in &got {
            lru.putback_from(&pool, q, List::Active, Verdict::Old);
            pool.unpin(q);
        }
        assert_eq!((lru.stats.deactivated, lru.isolated()), (3, 0));
        assert!(pool.unpin(p[0]));
        lru.drop_stale(&pool, 100);
        assert_eq!(
            lru.len(List::Inactive),
            3,
            "below the bound nothing is dropped"
        );
        lru.drop_stale(&pool, 3);
        assert_eq!(lru.len(List::Inactive), 2, "the freed page's entry is gone");
    }

    #[test]
    fn only_old_inactive_pages_are_reclaimed_and_every_active_one_is_deactivated() {
        let never = || -> bool { panic!("reclaim of a page that is not old and inactive") };
        assert_eq!(
            verdict(List::Inactive, Walked::Referenced, never),
            Verdict::Referenced
        );
        for walked in [Walked::Referenced, Walked::Contended, Walked::Old] {
            assert_eq!(
                verdict(List::Active, walked, never),
                Verdict::Old,
                "an active page is deactivated whatever its walk found ({walked:?})"
            );
        }
        assert_eq!(
            verdict(List::Inactive, Walked::Old, || true),
            Verdict::Reclaimed
        );
        assert_eq!(verdict(List::Inactive, Walked::Old, || false), Verdict::Old);
    }

    #[test]
    fn direct_reclaimers_wait_while_more_are_isolated_than_inactive() {
        let pool = PagePool::new(8);
        let mut lru = Lru::default();
        for i in 0..6 {
            let q = pool.alloc(file(), i).unwrap();
            lru.add(&pool, q);
        }
        lru.isolate(&pool, List::Inactive, 3);
        assert!(!lru.too_many_isolated(false), "3 isolated, 3 inactive");
        lru.isolate(&pool, List::Inactive, 1);
        assert!(lru.too_many_isolated(false), "4 isolated, 2 inactive");
        assert!(!lru.too_many_isolated(true), "kswapd is not throttled");
    }

    #[test]
    fn the_inactive_list_is_low_below_the_kernels_ratio() {
        let gib = 1 << 18;
        let ratios = [0, gib - 1, gib, 10 * gib, 100 * gib, 1024 * gib].map(inactive_ratio);
        assert_eq!(ratios, [1, 1, 3, 10, 31, 101], "mm/vmscan.c's table");
        let pool = PagePool::new(8);
        let mut lru = Lru::default();
        let p: Vec<PageId> = (0..5).map(|i| pool.alloc(file(), i).unwrap()).collect();
        for &q in &p {
            lru.add(&pool, q);
        }
        for &q in &lru.isolate(&pool, List::Inactive, 3) {
            lru.putback(&pool, q, Verdict::Referenced);
        }
        assert!(lru.inactive_is_low(), "2 inactive, 3 active");
        let q = lru.isolate(&pool, List::Active, 1)[0];
        lru.putback_from(&pool, q, List::Active, Verdict::Old);
        assert!(!lru.inactive_is_low(), "3 inactive, 2 active");
    }
}
