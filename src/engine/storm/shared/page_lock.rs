//! The page lock (the folio lock, PG_locked), only where a fault and reclaim
//! must exclude each other. Not a lock under study: one word per page,
//! uncounted.
//!
//! The model's faults take a page reference from a lookup (a PTE, a page-cache
//! slot) without pinning first, and reclaim frees a page once it has cleared its
//! PTEs. Two interleavings would then touch a freed (or reallocated) page:
//!
//! ```text
//! fault (mmap_lock READ)               reclaim
//! ----------------------               -------
//! do_shared_fault:
//!   page = page_cache[index]
//!                                      try_to_unmap(page); mapcount == 0
//!                                      page_cache[index] = none; folio_put
//!   map(page)        <- freed page
//!
//! do_wp_page (write to a COW PTE):
//!   page = pte; mapcount(page) == 1
//!                                      try_to_unmap(page); folio_put: free,
//!                                      reallocated to another owner
//!   set_mapping(page) <- someone else's page
//! ```
//!
//! The kernel closes both with the folio lock: filemap_fault locks the folio
//! and re-checks its mapping, do_wp_page's reuse test (wp_can_reuse_anon_folio)
//! trylocks it, and shrink_folio_list trylocks it and holds it from
//! try_to_unmap through __remove_mapping. Here reclaim trylocks the page's
//! lock and holds it across its walk and the page-cache removal, and a fault
//! holds it across handle_mm_fault (waiting for it: simpler than the kernel's
//! fall-back to a copy when the reuse trylock fails, and as correct):
//!
//! - file pages are locked by page-cache slot (file, index), because a fault
//!   learns the page from the slot, and the slot's content changes only under
//!   this lock (inserted by a fault, removed by reclaim);
//! - anon pages are locked by page id, taken by a fault only on the write
//!   protect path, after which it re-checks the PTE still maps that page.
//!
//! Lock order: mmap_lock -> page lock -> i_mmap_rwsem -> anon_vma root, as in
//! the kernel (a fault holds mmap_lock when it locks a page; reclaim takes the
//! rmap lock with the page locked). Nobody holds two page locks.

use super::spin::spin_until;
use crate::locks::platform::{AtomicInt, Ordering, Platform};
use crate::rmap::{PageId, SpaceId};

/// A held page lock; released on drop (unlock_page).
pub struct PageLock<'a, P: Platform> {
    word: &'a P::AtomicU32,
}

impl<P: Platform> Drop for PageLock<'_, P> {
    fn drop(&mut self) {
        self.word.store(0, Ordering::Release);
    }
}

/// Which page lock: an anon page by id, a file page by page-cache slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageKey {
    Anon(PageId),
    File(SpaceId, u32),
}

/// Every page lock of the world: one word per page (PG_locked is one bit of
/// the folio's flags; a word of the platform's, so a simulated waiter waits
/// for the holder's unlock to write it).
pub struct PageLocks<P: Platform> {
    /// By page id: anonymous pages.
    anon: Box<[P::AtomicU32]>,
    /// By file, then page-cache index: file pages.
    file: Box<[Box<[P::AtomicU32]>]>,
}

fn words<P: Platform>(n: u32) -> Box<[P::AtomicU32]> {
    (0..n).map(|_| P::AtomicU32::new(0)).collect()
}

impl<P: Platform> PageLocks<P> {
    /// Locks for a pool of `pages` pages and files of `file_pages` pages each.
    pub fn new(pages: u32, file_pages: &[u32]) -> Self {
        PageLocks {
            anon: words::<P>(pages),
            file: file_pages.iter().map(|&n| words::<P>(n)).collect(),
        }
    }

    fn word(&self, key: PageKey) -> &P::AtomicU32 {
        match key {
            PageKey::Anon(page) => &self.anon[page.index()],
            PageKey::File(space, index) => &self.file[space.index()][index as usize],
        }
    }

    /// lock_page: a fault waits for it. The kernel's waiter sleeps on the
    /// folio's wait queue; this one polls (contention is a fault meeting
    /// reclaim on one page, which is rare), yielding its CPU after a while
    /// where spinners must.
    pub fn lock(&self, key: PageKey) -> PageLock<'_, P> {
        let word = self.word(key);
        while word.swap(1, Ordering::Acquire) != 0 {
            spin_until::<P>(|| word.load(Ordering::Relaxed) == 0);
        }
        PageLock { word }
    }

    /// folio_trylock: reclaim skips a page someone holds
    /// (shrink_folio_list keeps it for a later pass), so reclaim never
    /// waits behind a fault. The guard is built only once the word is
    /// taken: a guard built and dropped on failure would store 0 and
    /// unlock the holder's lock.
    pub fn try_lock(&self, key: PageKey) -> Option<PageLock<'_, P>> {
        let word = self.word(key);
        (word.load(Ordering::Relaxed) == 0 && word.swap(1, Ordering::Acquire) == 0)
            .then(|| PageLock { word })
    }
}
