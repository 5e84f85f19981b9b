//! Reverse-map walks under the rmap lock: page_referenced
//! (folio_referenced) and reclaim (try_to_unmap, then freeing the page), with
//! the read hold timed from inside the critical section for
//! [`crate::metrics::overlap`].
//!
//! A walk pins its page first (the caller's folio reference: reclaim isolates
//! pages before walking them), so the page can be neither freed nor
//! reallocated while the walk looks at it; see the module doc of
//! [`super`] for why the anon re-check under the lock also needs the page to
//! be mapped.

use super::SharedWorld;
use super::page_lock::PageKey;
use crate::locks::platform::Platform;
use crate::locks::{RawRwLock, RwLock};
use crate::metrics::overlap::Hold;
use crate::rmap::walk::{self, Locked};
use crate::rmap::{Mapping, PageId, PagePool, WalkResult};

/// What a walk did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkOutcome {
    /// The walk took its lock. `hold` is the read hold `[enter, leave)` in ns
    /// since the epoch, stamped inside the critical section. `result.raced`:
    /// under the lock the page turned out to belong elsewhere, or (anon) to be
    /// unmapped, so nothing was visited.
    Done { result: WalkResult, hold: Hold },
    /// `try_lock` found the lock taken and gave up (the 2022+ reclaim keeps
    /// the page).
    Contended,
    /// reclaim only: a fault holds the page lock; the page is kept for a
    /// later pass (shrink_folio_list's folio_trylock), no rmap lock taken.
    PageLocked,
    /// The page is free (or being allocated): there was nothing to walk.
    Free,
}

const RACED: WalkResult = WalkResult {
    vmas_visited: 0,
    mapped: 0,
    hits: 0,
    raced: true,
};

/// A reference on a page for the duration of a walk; dropped by folio_put.
struct Pin<'a> {
    pages: &'a PagePool,
    page: PageId,
}

impl Drop for Pin<'_> {
    fn drop(&mut self) {
        self.pages.unpin(self.page);
    }
}

impl<L: RawRwLock> SharedWorld<L> {
    /// page_referenced of `page`: test and clear the young bit of every PTE
    /// mapping it, under the page's rmap lock for READ (root anon_vma or
    /// i_mmap). With `try_lock`, give up if the lock is not free for a reader
    /// (Minchan Kim's 2022 change to folio_referenced's rmap_walk_control);
    /// otherwise block. `on_vma` runs for every vma visited, lock held.
    pub fn page_referenced(
        &self,
        page: PageId,
        try_lock: bool,
        on_vma: &mut impl FnMut(),
    ) -> WalkOutcome {
        let Some((_pin, mapping)) = self.pin(page) else {
            return WalkOutcome::Free;
        };
        self.walk_locked(page, mapping, try_lock, |locked| {
            walk::page_referenced(locked, &self.page_tables, &self.pages, page, |_| on_vma())
        })
    }

    /// Reclaim `page` as [`crate::rmap::World::reclaim`] does
    /// (shrink_folio_list): an anon page first goes into the swap cache
    /// (add_to_swap: a slot, the cache's pin), then try_to_unmap under the
    /// rmap lock READ (blocking: only folio_referenced took the 2022
    /// try_lock option) leaves a swap entry for that slot in every PTE it
    /// clears; once nothing maps it, the page leaves the page cache
    /// (__remove_mapping) or the swap cache (delete_from_swap_cache, its
    /// data now in swap only), so it is free once the last reference goes.
    /// A page still mapped somewhere stays in the swap cache, where faults
    /// on its entries find it. A full swap device leaves anon PTEs empty,
    /// as before swap was modelled. The page lock is taken first (trylock:
    /// [`WalkOutcome::PageLocked`] if a fault holds it) and held throughout
    /// (see `page_lock.rs`). `on_vma` runs for every vma visited.
    pub fn reclaim(&self, page: PageId, on_vma: &mut impl FnMut()) -> WalkOutcome {
        let Some((_pin, mapping)) = self.pin(page) else {
            return WalkOutcome::Free;
        };
        let index = self.pages.index(page);
        let key = match mapping {
            Mapping::Anon { .. } => PageKey::Anon(page),
            Mapping::File { space } => PageKey::File(space, index),
        };
        let Some(_page_lock) = self.page_locks.try_lock(key) else {
            return WalkOutcome::PageLocked;
        };
        // The swap cache's own hold on the slot (SWAP_HAS_CACHE in the
        // kernel's swap_map) across the walk and the cache removal: an exit
        // zapping the last entry written so far must not free the slot (and
        // drop the cache page) while try_to_unmap still writes entries for
        // it.
        let held = match mapping {
            Mapping::Anon { .. } => match self.hold_swap_slot(page) {
                Some(held) => held,
                None => return WalkOutcome::PageLocked,
            },
            Mapping::File { .. } => None,
        };
        let out = self.walk_locked(page, mapping, false, |locked| {
            let result =
                walk::try_to_unmap(locked, &self.page_tables, &self.pages, page, |_| on_vma());
            // ptep_clear_flush of every PTE it cleared, under the rmap lock:
            // IPIs the engine only stands for.
            let flushes = u64::from(result.mapped);
            L::Platform::udelay(flushes * self.costs.tlb_shootdown(self.mm_remote_cpus));
            result
        });
        if self.pages.mapcount(page) == 0 {
            match mapping {
                Mapping::File { space } => {
                    if self.page_cache[space.index()].remove(index, page) {
                        // The page cache's reference (__remove_mapping).
                        self.pages.unpin(page);
                    }
                }
                // Only the slot this reclaim holds: a slot the page joined
                // meanwhile (a swap-in publishing it) is not this one's to
                // empty.
                Mapping::Anon { .. } if held.is_some() => {
                    self.pages.swap.delete_from_swap_cache(&self.pages, page)
                }
                Mapping::Anon { .. } => {}
            }
        }
        if let Some(slot) = held {
            // With no entry left at all (every one zapped meanwhile) the slot
            // goes now, and with it a cache page still in it.
            self.pages.swap.put(&self.pages, slot);
        }
        out
    }

    /// add_to_swap of a pinned, page-locked anon page, with one count taken
    /// on its slot for the caller ([`SwapSpace::put`] it when done): a new
    /// slot, or the one it already has. Some(None): the swap device is
    /// full. None: the page's slot is being freed right now (its last entry
    /// just went), or the page is a fault's, not yet mapped; the page is
    /// left for a later pass.
    ///
    /// [`SwapSpace::put`]: crate::rmap::swap::SwapSpace::put
    fn hold_swap_slot(&self, page: PageId) -> Option<Option<u32>> {
        let swap = &self.pages.swap;
        // The mapcount first, `folio->swap` after it: a swap-in publishes
        // its page in the swap cache (read_in sets `folio->swap`) before it
        // maps it, so a page seen mapped and then in no swap cache is in
        // none for good (only this reclaim, holding the page lock, adds
        // one). Read the other way round, a swap-in could publish and map
        // the page in between: add_to_swap would then hand back that slot as
        // if new and count it blind (dup), while the faulter puts the slot's
        // last entry and frees it, and the slot was freed twice. The kernel
        // needs no such order: the swap-in folio is locked before it enters
        // the swap cache (swap_cache_alloc_folio, __folio_set_locked) and
        // until do_swap_page has mapped it, so shrink_folio_list's
        // folio_trylock fails on it.
        let mapped = self.pages.mapcount(page) > 0;
        let Some(slot) = self.pages.swap_slot(page) else {
            if !mapped {
                // Unmapped and in no swap cache: a page a fault has just
                // allocated and not yet mapped (a swap-in about to publish
                // it), which the kernel's reclaim cannot find (not yet on
                // the LRU, and locked before it enters the swap cache).
                return None;
            }
            // A new slot: nobody else knows it yet.
            let slot = swap.add_to_swap(&self.pages, page);
            if let Some(s) = slot {
                swap.dup(s);
            }
            return Some(slot);
        };
        if !swap.try_dup(slot) {
            return None;
        }
        // Held: the slot cannot be freed now; make sure it is still this
        // page's (it may have been freed and reused before the hold).
        if swap.lookup(slot) == Some(page) {
            Some(Some(slot))
        } else {
            swap.put(&self.pages, slot);
            None
        }
    }

    /// Hold the rmap lock a walk of `page` would take, for WRITE, while `hold`
    /// runs: a writer of the page's family or file at a moment of the
    /// caller's choosing (the tests make walkers contend with it). False if
    /// the page is free.
    pub fn hold_rmap_write(&self, page: PageId, hold: &dyn Fn()) -> bool {
        let Some((_pin, mapping)) = self.pin(page) else {
            return false;
        };
        match mapping {
            Mapping::Anon { family, .. } => {
                let _w = self.family_slot(family).write();
                hold();
            }
            Mapping::File { space } => {
                let _w = self.spaces[space.index()].write();
                hold();
            }
        }
        true
    }

    /// Pin a live page and read its mapping; None if it is free (or still
    /// being allocated, its mapping not yet published).
    fn pin(&self, page: PageId) -> Option<(Pin<'_>, Mapping)> {
        if page.0 >= self.pages.capacity() || !self.pages.pin(page) {
            return None;
        }
        let pin = Pin {
            pages: &self.pages,
            page,
        };
        Some((pin, self.pages.mapping(page)?))
    }

    /// Take the rmap lock `mapping` names for READ and run `walk` on its part,
    /// re-checking (anon) that the slot is live and the page still mapped.
    fn walk_locked(
        &self,
        page: PageId,
        mapping: Mapping,
        try_lock: bool,
        walk: impl FnOnce(Locked<'_>) -> WalkResult,
    ) -> WalkOutcome {
        let timed = match mapping {
            Mapping::Anon { family, .. } => {
                self.timed_read(self.family_slot(family), try_lock, |slot| match slot {
                    Some(f) if self.pages.mapcount(page) > 0 => walk(Locked::Family(family, f)),
                    _ => RACED,
                })
            }
            Mapping::File { space } => {
                self.timed_read(&self.spaces[space.index()], try_lock, |s| {
                    walk(Locked::Space(space, s))
                })
            }
        };
        match timed {
            Some((result, hold)) => WalkOutcome::Done { result, hold },
            None => WalkOutcome::Contended,
        }
    }

    /// Run `f` under `domain`'s read lock, stamping the hold just after the
    /// acquisition and just before the release; None if `try_lock` failed.
    fn timed_read<K: RawRwLock, T>(
        &self,
        domain: &RwLock<K, T>,
        try_lock: bool,
        f: impl FnOnce(&T) -> WalkResult,
    ) -> Option<(WalkResult, Hold)> {
        let guard = if try_lock {
            domain.try_read()?
        } else {
            domain.read()
        };
        let enter_ns = self.now_ns();
        let result = f(&guard);
        let leave_ns = self.now_ns();
        drop(guard);
        Some((result, Hold { enter_ns, leave_ns }))
    }
}
