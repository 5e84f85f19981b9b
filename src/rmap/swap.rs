//! The swap device and its swap cache (mm/swapfile.c, mm/swap_state.c), as
//! reclaim and do_swap_page use them.
//!
//! Reclaim of an anon page (shrink_folio_list): `add_to_swap` gives the page
//! a slot and puts it in the swap cache ([`SwapSpace::add_to_swap`]);
//! try_to_unmap then replaces every PTE mapping it with a swap entry for that
//! slot (try_to_unmap_one, `swp_entry_to_pte`), each one counted in the slot
//! (swap_duplicate); once unmapped, `__remove_mapping` takes the page out of
//! the swap cache ([`SwapSpace::delete_from_swap_cache`]) and the page is
//! freed: its data is "in swap".
//!
//! A fault on a swap entry (do_swap_page, see [`super::fault`]): the first
//! faulting task finds no page in the swap cache and reads one in
//! ([`SwapSpace::read_in`], swapin_readahead -> swap_cache_alloc_folio), later
//! faulters of the same entry find it there (a swap-cache hit). Each faulter's
//! entry leaves the slot (swap_free). The page read in is homed like the
//! kernel homes it (folio_add_new_anon_rmap -> __folio_set_anon): a page the
//! faulter holds the only entry of is exclusive and goes to the vma's own
//! anon_vma; a shared one (other entries still out, or already cached) goes
//! to the ROOT anon_vma of the vma's family, so later walks of it search the
//! whole family, as the page did before it was swapped.
//!
//! A slot lives while a PTE holds its entry or its page is in the swap cache
//! being reclaimed: when the last entry goes (faulted back in, zapped by exit
//! or munmap, or replaced by a COW copy) the slot is freed and the swap cache
//! drops its page (free_swap_and_cache; the kernel keeps a clean swap-cache
//! folio around until the swap device runs full, the model frees at once).
//!
//! Locking: atomics only, like the page pool: `count` is the kernel's
//! `swap_map` byte (changed under the swap cluster lock), `cache` the swap
//! cache's xarray slot (xa_lock); a CAS on each stands for the lock.
//!
//! Per slot:
//!
//! | field   | meaning                                           |
//! |---------|---------------------------------------------------|
//! | `count` | PTEs holding a swap entry for the slot            |
//! | `cache` | the swap-cache page (it holds one pin on it), or NIL |
//!
//! Invariants ([`World::check`](super::World::check)): a slot is allocated iff
//! `count > 0` or it has a cache page; `count` equals the swap PTEs naming it;
//! a cache page's `folio->swap` names the slot back.

use super::ids::PageId;
use super::interval_tree::NIL;
use super::page::{Mapping, PagePool};
use super::slots::BitAlloc;
use std::sync::atomic::{AtomicU32, Ordering};

/// The swap device: slots and their swap cache.
pub struct SwapSpace {
    /// Which slots are in use.
    slots: BitAlloc,
    /// Swap entries per slot (`swap_map`). Atomic.
    count: Box<[AtomicU32]>,
    /// Swap-cache page per slot, or NIL. Atomic.
    cache: Box<[AtomicU32]>,
}

impl SwapSpace {
    pub fn new(slots: u32) -> Self {
        SwapSpace {
            slots: BitAlloc::new(slots),
            count: (0..slots).map(|_| AtomicU32::new(0)).collect(),
            cache: (0..slots).map(|_| AtomicU32::new(NIL)).collect(),
        }
    }

    /// Slots in use.
    pub fn used(&self) -> u32 {
        self.slots.live()
    }

    /// Whether `slot` is in use.
    pub fn is_used(&self, slot: u32) -> bool {
        self.slots.is_used(slot)
    }

    /// Swap entries naming `slot`.
    pub fn count(&self, slot: u32) -> u32 {
        self.count[slot as usize].load(Ordering::Acquire)
    }

    /// The page in the swap cache for `slot` (swap_cache_get_folio).
    pub fn lookup(&self, slot: u32) -> Option<PageId> {
        match self.cache[slot as usize].load(Ordering::Acquire) {
            NIL => None,
            p => Some(PageId(p)),
        }
    }

    /// add_to_swap: a slot for `page` (its own if it is in the swap cache
    /// already), with the page in the swap cache holding a pin on it. None if
    /// the device is full (the page is then only unmapped, not swapped).
    pub fn add_to_swap(&self, pages: &PagePool, page: PageId) -> Option<u32> {
        if let Some(slot) = pages.swap_slot(page) {
            return Some(slot);
        }
        let slot = self.slots.alloc()?;
        debug_assert_eq!(self.count(slot), 0);
        let pinned = pages.pin(page);
        debug_assert!(pinned, "add_to_swap of a free page");
        self.cache[slot as usize].store(page.0, Ordering::Release);
        pages.set_swap_slot(page, Some(slot));
        Some(slot)
    }

    /// swap_duplicate: one more PTE holds an entry for `slot` (fork copying
    /// it, or try_to_unmap writing it).
    pub fn dup(&self, slot: u32) {
        let prev = self.count[slot as usize].fetch_add(1, Ordering::AcqRel);
        debug_assert!(self.is_used(slot) && prev < u32::MAX);
    }

    /// Give back a [`dup`](Self::dup) whose entry was never written (the
    /// PTE changed before try_to_unmap could write it: try_to_unmap_one's
    /// swap_free on its failure paths). Never frees the slot: its page is
    /// still in the swap cache (the kernel's SWAP_HAS_CACHE), which keeps
    /// it allocated at count 0.
    pub fn undup(&self, slot: u32) {
        let prev = self.count[slot as usize].fetch_sub(1, Ordering::AcqRel);
        debug_assert!(
            prev > 0 && self.lookup(slot).is_some(),
            "undup of swap slot {slot} outside the swap cache"
        );
    }

    /// [`dup`](Self::dup) for a caller that found `slot` through its page
    /// rather than through an entry it holds: false if the slot's last entry
    /// has just gone (the slot is being freed; a concurrent engine's
    /// reclaim then leaves the page alone).
    pub fn try_dup(&self, slot: u32) -> bool {
        self.count[slot as usize]
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
                (c > 0).then_some(c + 1)
            })
            .is_ok()
    }

    /// swap_free / free_swap_and_cache: one entry for `slot` left its PTE.
    /// The last one frees the slot and drops the swap-cache page.
    pub fn put(&self, pages: &PagePool, slot: u32) {
        let prev = self.count[slot as usize].fetch_sub(1, Ordering::AcqRel);
        debug_assert!(prev > 0, "swap slot {slot} underflow");
        if prev == 1 {
            self.release(pages, slot);
        }
    }

    /// __remove_mapping of a reclaimed anon page (unmapped, still pinned by
    /// reclaim): out of the swap cache; the slot stays for its entries, or
    /// is freed if none was written.
    pub fn delete_from_swap_cache(&self, pages: &PagePool, page: PageId) {
        let Some(slot) = pages.swap_slot(page) else {
            return;
        };
        if self.count(slot) == 0 {
            self.release(pages, slot);
        } else {
            self.uncache(pages, slot, page);
        }
    }

    /// Swap-in of `slot` with no page cached: allocate one for `mapping` at
    /// `index` and publish it in the swap cache (the cache's pin) with the
    /// caller's pin on it too. None on a lost race: another faulter
    /// published its page first (the caller retries and finds it cached,
    /// as swap_cache_alloc_folio's loser goes back to the swap-cache
    /// lookup), or the slot's last entry went since the caller read its PTE
    /// (the caller retries and finds the PTE changed). Err if the pool is
    /// full.
    ///
    /// The faulter read the entry from a PTE it does not hold still: another
    /// faulter of the same PTE may have mapped the page and dropped the
    /// slot's last entry, freeing the slot. The kernel's swapcache_prepare
    /// sets SWAP_HAS_CACHE only while the entry's count is above 0, in the
    /// same swap_map byte; here a hold on the count while the page is
    /// published stands for it, so a page never lands in the cache of a
    /// free slot (where the slot's next owner would overwrite it).
    pub fn read_in(
        &self,
        pages: &PagePool,
        slot: u32,
        mapping: Mapping,
        index: u32,
    ) -> Result<Option<PageId>, super::fault::OutOfPages> {
        if !self.try_dup(slot) {
            return Ok(None);
        }
        let Some(page) = pages.alloc(mapping, index) else {
            self.put(pages, slot);
            return Err(super::fault::OutOfPages);
        };
        pages.pin(page);
        // `folio->swap` first: a faulter finding the page in the cache
        // checks that it names the slot.
        pages.set_swap_slot(page, Some(slot));
        let published = self.cache[slot as usize]
            .compare_exchange(NIL, page.0, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if !published {
            pages.set_swap_slot(page, None);
            pages.unpin(page);
            pages.unpin(page);
        }
        // The hold goes; if the slot's entries went meanwhile, it was the
        // last, and the slot is freed with the page just cached.
        self.put(pages, slot);
        if !published {
            return Ok(None);
        }
        if pages.swap_slot(page) != Some(slot) {
            pages.unpin(page);
            return Ok(None);
        }
        Ok(Some(page))
    }

    /// Free `slot`, dropping its cache page if any.
    fn release(&self, pages: &PagePool, slot: u32) {
        if let Some(page) = self.lookup(slot) {
            self.uncache(pages, slot, page);
        }
        self.slots.free(slot);
    }

    /// Take `page` out of `slot`'s cache entry and drop the cache's pin.
    fn uncache(&self, pages: &PagePool, slot: u32, page: PageId) {
        self.cache[slot as usize].store(NIL, Ordering::Release);
        pages.set_swap_slot(page, None);
        pages.unpin(page);
    }

    pub fn bytes(&self) -> usize {
        self.slots.bytes() + (self.count.len() + self.cache.len()) * size_of::<AtomicU32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rmap::ids::{AnonVmaId, FamilyId};

    fn anon() -> Mapping {
        Mapping::Anon {
            family: FamilyId(0),
            anon_vma: AnonVmaId(0),
        }
    }

    #[test]
    fn a_slot_lives_until_its_last_entry_goes() {
        let pool = PagePool::new(4);
        let page = pool.alloc(anon(), 3).unwrap();
        let slot = pool.swap.add_to_swap(&pool, page).unwrap();
        assert_eq!(
            pool.swap.add_to_swap(&pool, page),
            Some(slot),
            "one slot per page"
        );
        assert_eq!(pool.pins(page), 2);
        pool.swap.dup(slot);
        assert!(pool.swap.try_dup(slot), "a slot with entries can be held");
        pool.swap.delete_from_swap_cache(&pool, page);
        assert!(
            pool.unpin(page),
            "reclaim's pin was the last: the page is free"
        );
        assert!(pool.swap.is_used(slot) && pool.swap.lookup(slot).is_none());
        let back = pool.swap.read_in(&pool, slot, anon(), 3).unwrap();
        let back = back.expect("nothing cached: this read-in publishes");
        assert_eq!(
            pool.swap.read_in(&pool, slot, anon(), 3),
            Ok(None),
            "a second read-in of a cached slot loses"
        );
        assert_eq!(pool.swap.lookup(slot), Some(back));
        pool.swap.put(&pool, slot);
        assert!(pool.swap.is_used(slot), "one entry is still out");
        pool.swap.put(&pool, slot);
        assert!(!pool.swap.is_used(slot) && pool.swap_slot(back).is_none());
        assert_eq!(pool.pins(back), 1, "only the faulter's pin is left");
    }

    #[test]
    fn a_read_in_of_a_slot_whose_entries_are_gone_publishes_nothing() {
        let pool = PagePool::new(4);
        let page = pool.alloc(anon(), 0).unwrap();
        let slot = pool.swap.add_to_swap(&pool, page).unwrap();
        pool.swap.dup(slot);
        pool.swap.delete_from_swap_cache(&pool, page);
        // The one entry goes (another faulter of the same PTE mapped it back
        // from its own read-in): the slot is free.
        pool.swap.put(&pool, slot);
        assert!(!pool.swap.is_used(slot));
        // A faulter that read the entry before it went now reads it in.
        assert_eq!(pool.swap.read_in(&pool, slot, anon(), 0), Ok(None));
        assert_eq!(
            pool.swap.lookup(slot),
            None,
            "nothing cached in a free slot"
        );
        assert!(!pool.swap.is_used(slot));
        assert_eq!(pool.swap.count(slot), 0);
        assert_eq!(pool.live(), 1, "the read-in page went back to the pool");
    }

    #[test]
    fn an_unwritten_slot_is_freed_with_its_cache_entry() {
        let pool = PagePool::new(2);
        let page = pool.alloc(anon(), 0).unwrap();
        let slot = pool.swap.add_to_swap(&pool, page).unwrap();
        assert!(!pool.swap.try_dup(slot), "no entry to hold on to");
        pool.swap.delete_from_swap_cache(&pool, page);
        assert_eq!((pool.swap.used(), pool.pins(page)), (0, 1));
        assert!(!pool.swap.is_used(slot));
    }
}
