//! Page tables: one fixed-size array of atomic PTEs per mm.
//!
//! Locking: none. In the kernel a PTE is read and cleared under the PTE lock
//! (PTL, a spinlock per page-table page) at the bottom of the lock order, and
//! the hardware sets young/dirty without any lock; a walker reaches another
//! mm's PTEs holding only the anon_vma (or i_mmap) lock. Here each PTE is an
//! `AtomicU32` changed by load/CAS, which is what the PTL's exclusion buys for
//! one entry, and every mm's array exists for the table's lifetime (slots are
//! reused, never freed), so reading any mm's PTE is memory-safe by
//! construction even while that mm exits.
//!
//! PTE word (u32):
//!
//! | bits  | meaning                                                   |
//! |-------|-----------------------------------------------------------|
//! | 31    | PRESENT: maps the page in bits 0..28                       |
//! | 30    | YOUNG (accessed): set on access, test-and-cleared by page_referenced |
//! | 29    | DIRTY: written since mapped                               |
//! | 28    | WRITE: writable; fork clears it on COW mappings           |
//! | 0..28 | page id (the pool holds at most [`MAX_PAGES`] pages)      |
//!
//! Invariant: a word without PRESENT is 0.

use super::ids::{MmId, PageId};
use super::slots::Chunked;
use std::sync::atomic::{AtomicU32, Ordering};

pub const PRESENT: u32 = 1 << 31;
pub const YOUNG: u32 = 1 << 30;
pub const DIRTY: u32 = 1 << 29;
pub const WRITE: u32 = 1 << 28;
const PAGE_MASK: u32 = WRITE - 1;
/// Page ids must fit below the flag bits.
pub const MAX_PAGES: u32 = WRITE;

/// A decoded PTE value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pte(pub u32);

impl Pte {
    pub const NONE: Pte = Pte(0);

    /// A present PTE for `page` with the given flag bits (YOUNG | DIRTY | WRITE).
    pub fn new(page: PageId, flags: u32) -> Pte {
        debug_assert!(page.0 < MAX_PAGES && flags & !(YOUNG | DIRTY | WRITE) == 0);
        Pte(PRESENT | flags | page.0)
    }

    pub fn present(self) -> bool {
        self.0 & PRESENT != 0
    }
    pub fn young(self) -> bool {
        self.0 & YOUNG != 0
    }
    pub fn dirty(self) -> bool {
        self.0 & DIRTY != 0
    }
    pub fn writable(self) -> bool {
        self.0 & WRITE != 0
    }

    /// The mapped page, if present.
    pub fn page(self) -> Option<PageId> {
        self.present().then_some(PageId(self.0 & PAGE_MASK))
    }

    /// True if this PTE maps `page`.
    pub fn maps(self, page: PageId) -> bool {
        self.page() == Some(page)
    }
}

/// Load a PTE.
#[inline]
pub fn load(pte: &AtomicU32) -> Pte {
    Pte(pte.load(Ordering::Acquire))
}

/// What a test-and-clear found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Young {
    /// The PTE does not map the page (COW'd away, unmapped, never faulted).
    NotMapped,
    /// Mapped; the accessed bit was clear.
    Old,
    /// Mapped; the accessed bit was set and is now clear.
    WasYoung,
}

/// ptep_clear_flush_young on a PTE that should map `page`.
#[inline]
pub fn clear_young(pte: &AtomicU32, page: PageId) -> Young {
    let mut old = load(pte);
    loop {
        if !old.maps(page) {
            return Young::NotMapped;
        }
        if !old.young() {
            return Young::Old;
        }
        match pte.compare_exchange_weak(old.0, old.0 & !YOUNG, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return Young::WasYoung,
            Err(now) => old = Pte(now),
        }
    }
}

/// Clear a PTE if it maps `page` (try_to_unmap_one's ptep_clear_flush); the
/// old value if it did.
#[inline]
pub fn clear_if_maps(pte: &AtomicU32, page: PageId) -> Option<Pte> {
    let mut old = load(pte);
    loop {
        if !old.maps(page) {
            return None;
        }
        match pte.compare_exchange_weak(old.0, 0, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(old),
            Err(now) => old = Pte(now),
        }
    }
}

/// Every mm's page table: slot `mm` holds `va_pages` PTEs, contiguous.
pub struct PageTables {
    /// PTEs per mm. Fixed.
    va_pages: u32,
    /// The PTEs, `va_pages` per mm slot. Atomics (no lock; see module doc).
    store: Chunked<AtomicU32>,
}

/// PTEs per allocation chunk: 2^20 (4 MiB of PTEs), so a chunk holds many
/// small page tables or one large one.
const CHUNK_PTES: usize = 1 << 20;

impl PageTables {
    /// Room for `max_mms` page tables of `va_pages` PTEs each.
    pub fn new(va_pages: u32, max_mms: u32) -> Self {
        let chunk_slots = (CHUNK_PTES / va_pages as usize).max(1);
        let max_chunks = (max_mms as usize).div_ceil(chunk_slots).max(1);
        PageTables {
            va_pages,
            store: Chunked::new(va_pages as usize, chunk_slots, max_chunks),
        }
    }

    pub fn va_pages(&self) -> u32 {
        self.va_pages
    }

    /// The page table of `mm`, if its slot was ever allocated.
    #[inline]
    pub fn table(&self, mm: MmId) -> Option<&[AtomicU32]> {
        self.store.get(mm.index())
    }

    /// The page table of `mm`, allocating its chunk (all PTEs clear) if needed.
    pub fn table_or_grow(&self, mm: MmId) -> &[AtomicU32] {
        self.store.get_or_grow(mm.index(), || AtomicU32::new(0))
    }

    /// One PTE of `mm` (walkers: no lock needed, see module doc).
    #[inline]
    pub fn pte(&self, mm: MmId, addr: u32) -> Option<&AtomicU32> {
        self.table(mm).and_then(|t| t.get(addr as usize))
    }

    pub fn bytes(&self) -> usize {
        self.store.bytes()
    }
}
