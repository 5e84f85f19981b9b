//! Page tables: per mm, a four-level tree (pgd -> pud -> pmd -> PTE pages)
//! over one fixed-size array of atomic PTEs, and one PTE lock per PTE page.
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
//! The rmap walkers reach a PTE the way page_vma_mapped_walk does
//! ([`PageTables::walk`]): pgd entry, pud entry, pmd entry, each a load whose
//! value names the next level, then the PTE page's lock word ([`Ptl`]: the
//! split PTE lock of `struct ptdesc`, USE_SPLIT_PTE_PTLOCKS) and the PTE. So a
//! walk over many mms pays a chain of dependent cache misses per vma, as the
//! kernel's does; each level node and each lock word sits on its own cache
//! line, and each mm's nodes sit at a scrambled place ([`Scatter`]), so no
//! prefetcher can run ahead of a walk from one child's table to the next.
//! Faults, fork and zap index the PTE array directly (they hold the mm's
//! mmap_lock and are not what the project measures). The PTL is a spin
//! word taken only by walkers, not a lock under study: faults and fork change
//! PTEs by CAS, which is what the lock would order.
//!
//! Geometry (x86-64 4-level paging, 4 KiB pages): [`PTRS_PER_TABLE`] = 512
//! entries per table at every level, so a PTE page maps 512 pages, a pmd page
//! 2^18, a pud page 2^27. Level nodes here hold only the entries the mm's
//! `va_pages` can use (at least one cache line of 16 u32 entries), since the
//! model never maps above `va_pages`.
//!
//! PTE word (u32):
//!
//! | bits  | meaning                                                   |
//! |-------|-----------------------------------------------------------|
//! | 31    | PRESENT: maps the page in bits 0..28                       |
//! | 30    | YOUNG (accessed) when present: set on access, test-and-cleared by page_referenced; SWAP when not present: a swap entry for the slot in bits 0..28 |
//! | 29    | DIRTY: written since mapped                               |
//! | 28    | WRITE: writable; fork clears it on COW mappings           |
//! | 0..28 | page id (the pool holds at most [`MAX_PAGES`] pages) or swap slot |
//!
//! Invariant: a word without PRESENT is 0 (none) or SWAP | slot (a swap
//! entry, try_to_unmap_one's `swp_entry_to_pte`).

use super::ids::{MmId, PageId};
use super::slots::Chunked;
use std::sync::atomic::{AtomicU32, Ordering};

pub const PRESENT: u32 = 1 << 31;
pub const YOUNG: u32 = 1 << 30;
pub const DIRTY: u32 = 1 << 29;
pub const WRITE: u32 = 1 << 28;
/// On a non-present PTE: the word is a swap entry (bit shared with YOUNG,
/// which only present PTEs carry).
pub const SWAP: u32 = 1 << 30;
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

    /// A swap entry for `slot` (try_to_unmap_one of a swap-cache page).
    pub fn swap(slot: u32) -> Pte {
        debug_assert!(slot < MAX_PAGES);
        Pte(SWAP | slot)
    }

    /// The swap slot, if this is a swap entry.
    pub fn swap_slot(self) -> Option<u32> {
        (!self.present() && self.0 & SWAP != 0).then_some(self.0 & PAGE_MASK)
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

/// The MMU's access through a present PTE that allows it: set young, and
/// dirty on a write, as the hardware does without any lock. False if the
/// access must fault instead (no PTE, or a write to a write-protected one).
#[inline]
pub fn hardware_access(pte: &AtomicU32, write: bool) -> bool {
    let bits = if write { YOUNG | DIRTY } else { YOUNG };
    let mut old = load(pte);
    loop {
        if !old.present() || (write && !old.writable()) {
            return false;
        }
        if old.0 & bits == bits {
            return true;
        }
        match pte.compare_exchange_weak(old.0, old.0 | bits, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(now) => old = Pte(now),
        }
    }
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

/// Replace a PTE that maps `page` with `with` (none, or a swap entry:
/// try_to_unmap_one's ptep_clear_flush then set_pte_at); the old value if it
/// did.
#[inline]
pub fn replace_if_maps(pte: &AtomicU32, page: PageId, with: Pte) -> Option<Pte> {
    debug_assert!(!with.present());
    let mut old = load(pte);
    loop {
        if !old.maps(page) {
            return None;
        }
        match pte.compare_exchange_weak(old.0, with.0, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(old),
            Err(now) => old = Pte(now),
        }
    }
}

/// Entries per page-table page at every level (x86-64, 4 KiB pages).
pub const PTRS_PER_TABLE: u32 = 512;
/// u32 entries per cache line: the smallest level node and the lock word's
/// padding.
const LINE_WORDS: usize = 16;

/// The PTE lock of one PTE page: a test-and-set spin word (0 free, 1 held).
pub struct Ptl<'a>(&'a AtomicU32);

impl Ptl<'_> {
    /// spin_lock(ptl): spin until the word is taken.
    #[inline]
    pub fn lock(&self) -> PtlGuard<'_> {
        while self
            .0
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        PtlGuard(self.0)
    }
}

/// A held PTE lock; dropping it is spin_unlock.
pub struct PtlGuard<'a>(&'a AtomicU32);

impl Drop for PtlGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

/// What page_vma_mapped_walk reaches for one address: the PTE and the lock of
/// its PTE page.
pub struct PteWalk<'a> {
    pub ptl: Ptl<'a>,
    pub pte: &'a AtomicU32,
}

/// Where an mm slot's page-table pages sit in each table: in the slot's own
/// chunk, at a scrambled position. The kernel's page-table pages come from
/// the page allocator, scattered over physical memory; laid out in mm order
/// they would sit at one constant stride, which the hardware prefetchers
/// follow through a walk over 10,000 children, and a walk would not pay
/// the kernel's dependent misses (measured on a cold tree with `cargo bench
/// --bench rmap -- page_referenced_10k_cold`: 77-99 ns per vma visited in
/// mm order, 478-601 ns scattered). A bijection within each chunk keeps the
/// memory footprint as it was (chunks are still allocated as mms first use
/// them).
#[derive(Clone, Copy)]
struct Scatter {
    /// log2 of the slots per chunk (every table here has the same).
    bits: u32,
}

impl Scatter {
    /// The storage slot of mm slot `slot`: chunk kept, position within it
    /// mixed by xorshift-multiply steps, each a bijection on `bits` bits.
    #[inline]
    fn place(self, slot: usize) -> usize {
        if self.bits < 2 {
            return slot;
        }
        let mask = (1usize << self.bits) - 1;
        let half = self.bits / 2 + self.bits % 2;
        let mut x = slot & mask;
        x ^= x >> half;
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as usize) & mask;
        x ^= x >> half;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9_u64 as usize) & mask;
        x ^= x >> half;
        slot & !mask | x
    }
}

/// One level of every mm's tree: per mm slot, up to `1 << shift` nodes of
/// `width` entries. A node's global id is `mm << shift | k` (shifts, not
/// divisions, on the walk); an entry is 1 + the global id of the next
/// level's node (0: none).
struct Level {
    width: usize,
    shift: u32,
    store: Chunked<AtomicU32>,
}

/// log2 of `n` rounded up to a power of two.
fn shift_for(n: u32) -> u32 {
    n.next_power_of_two().ilog2()
}

impl Level {
    fn new(nodes: u32, width: usize, chunk_slots: usize, max_chunks: usize) -> Level {
        let shift = shift_for(nodes);
        Level {
            width,
            shift,
            store: Chunked::new((1usize << shift) * width, chunk_slots, max_chunks),
        }
    }

    /// The global id of node `k` of `mm`.
    fn node_id(&self, mm: MmId, k: u32) -> u32 {
        mm.0 << self.shift | k
    }

    /// Entry `i` of node `node`, its mm's nodes placed by `scatter`.
    #[inline]
    fn entry(&self, scatter: Scatter, node: u32, i: u32) -> Option<&AtomicU32> {
        let slot = self
            .store
            .get(scatter.place((node >> self.shift) as usize))?;
        let k = (node & ((1 << self.shift) - 1)) as usize;
        slot.get(k * self.width + i as usize)
    }
}

/// Every mm's page table: slot `mm` holds `va_pages` PTEs, contiguous, and the
/// tree above them (see the module doc).
pub struct PageTables {
    /// PTEs per mm. Fixed.
    va_pages: u32,
    /// The PTEs, `va_pages` per mm slot. Atomics (no lock; see module doc).
    store: Chunked<AtomicU32>,
    /// pgd, pud and pmd levels, top first. Written once when an mm slot is
    /// first allocated, read by walkers.
    levels: [Level; 3],
    /// One lock word per PTE page, a cache line each (the ptdesc's ptl).
    ptls: Chunked<AtomicU32>,
    /// PTE pages per mm.
    pte_pages: u32,
    /// A PTE page's global id is `mm << pte_shift | k`.
    pte_shift: u32,
    /// Where each mm slot's pages sit in every table above.
    scatter: Scatter,
}

/// PTEs per allocation chunk: 2^20 (4 MiB of PTEs), so a chunk holds many
/// small page tables or one large one.
const CHUNK_PTES: usize = 1 << 20;

/// Entries the only node of a level needs: those the mm can reach, rounded
/// up to a cache line.
fn node_width(used: u32) -> usize {
    (used as usize).next_multiple_of(LINE_WORDS)
}

impl PageTables {
    /// Room for `max_mms` page tables of `va_pages` PTEs each.
    pub fn new(va_pages: u32, max_mms: u32) -> Self {
        let chunk_slots = (CHUNK_PTES / va_pages as usize).max(1);
        let max_chunks = (max_mms as usize).div_ceil(chunk_slots).max(1);
        let pte_pages = va_pages.div_ceil(PTRS_PER_TABLE);
        let pmd_pages = pte_pages.div_ceil(PTRS_PER_TABLE);
        let pud_pages = pmd_pages.div_ceil(PTRS_PER_TABLE);
        // Nodes per mm at each level, and the entries each node uses.
        let shape = [
            (1, pud_pages),
            (pud_pages, pmd_pages),
            (pmd_pages, pte_pages),
        ];
        let levels = shape.map(|(nodes, used)| {
            // Several nodes: each is a whole table (entry = table index).
            let width = if nodes > 1 {
                PTRS_PER_TABLE as usize
            } else {
                node_width(used)
            };
            Level::new(nodes, width, chunk_slots, max_chunks)
        });
        PageTables {
            va_pages,
            store: Chunked::new(va_pages as usize, chunk_slots, max_chunks),
            levels,
            ptls: Chunked::new(pte_pages as usize * LINE_WORDS, chunk_slots, max_chunks),
            pte_pages,
            pte_shift: shift_for(pte_pages),
            scatter: Scatter {
                bits: chunk_slots.ilog2(),
            },
        }
    }

    pub fn va_pages(&self) -> u32 {
        self.va_pages
    }

    /// The storage slot of `mm`'s pages in every table ([`Scatter`]).
    #[inline]
    fn slot(&self, mm: usize) -> usize {
        self.scatter.place(mm)
    }

    /// The page table of `mm`, if its slot was ever allocated.
    #[inline]
    pub fn table(&self, mm: MmId) -> Option<&[AtomicU32]> {
        self.store.get(self.slot(mm.index()))
    }

    /// The page table of `mm`, allocating its chunk (all PTEs clear) if
    /// needed, and linking the levels above it (pgd_alloc, then the pud, pmd
    /// and PTE pages: all at once, as the model's address space is fixed).
    pub fn table_or_grow(&self, mm: MmId) -> &[AtomicU32] {
        let slot = self.slot(mm.index());
        let table = self.store.get_or_grow(slot, || AtomicU32::new(0));
        // Children of the lowest level: the PTE pages; of each level above:
        // the nodes of the level below. Child k sits in node k / width at
        // entry k % width: element k of the mm's slot.
        let mut below: Vec<u32> = (0..self.pte_pages)
            .map(|k| mm.0 << self.pte_shift | k)
            .collect();
        for level in self.levels.iter().rev() {
            let entries = level.store.get_or_grow(slot, || AtomicU32::new(0));
            for (k, &child) in below.iter().enumerate() {
                entries[k].store(child + 1, Ordering::Release);
            }
            let nodes = below.len().div_ceil(level.width) as u32;
            below = (0..nodes).map(|k| level.node_id(mm, k)).collect();
        }
        self.ptls.get_or_grow(slot, || AtomicU32::new(0));
        table
    }

    /// One PTE of `mm` (walkers: no lock needed, see module doc).
    #[inline]
    pub fn pte(&self, mm: MmId, addr: u32) -> Option<&AtomicU32> {
        self.table(mm).and_then(|t| t.get(addr as usize))
    }

    /// page_vma_mapped_walk's descent to the PTE of `addr` in `mm`: pgd,
    /// pud and pmd entries loaded in turn (each load's value is the next
    /// node), then the PTE page's lock and the PTE. None if `mm` never had a
    /// table or `addr` is beyond it.
    #[inline]
    pub fn walk(&self, mm: MmId, addr: u32) -> Option<PteWalk<'_>> {
        if addr >= self.va_pages {
            return None;
        }
        let per_table = PTRS_PER_TABLE;
        // Table indices of addr at pgd, pud, pmd (PTE index last).
        let index = [
            addr / (per_table * per_table * per_table),
            addr / (per_table * per_table) % per_table,
            addr / per_table % per_table,
        ];
        let mut node = self.levels[0].node_id(mm, 0);
        for (level, i) in self.levels.iter().zip(index) {
            let e = level.entry(self.scatter, node, i)?.load(Ordering::Acquire);
            node = e.checked_sub(1)?;
        }
        let owner = self.slot((node >> self.pte_shift) as usize);
        let k = node & ((1 << self.pte_shift) - 1);
        let ptl = &self.ptls.get(owner)?[k as usize * LINE_WORDS];
        let pte = self
            .store
            .get(owner)?
            .get((k * per_table + addr % per_table) as usize)?;
        Some(PteWalk { ptl: Ptl(ptl), pte })
    }

    pub fn bytes(&self) -> usize {
        self.store.bytes()
            + self.levels.iter().map(|l| l.store.bytes()).sum::<usize>()
            + self.ptls.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_reaches_the_same_pte_as_the_flat_index() {
        // Up to 2^19 + 5 pages: several pmd pages, a partial last PTE page.
        for va in [1, 256, 512, 513, (1 << 19) + 5] {
            let t = PageTables::new(va, 3);
            for mm in [MmId(0), MmId(2)] {
                t.table_or_grow(mm);
                for addr in [0, va / 2, va - 1] {
                    let w = t.walk(mm, addr).expect("mapped address");
                    assert!(
                        std::ptr::eq(w.pte, t.pte(mm, addr).unwrap()),
                        "va {va} {mm:?} @{addr}"
                    );
                }
                assert!(t.walk(mm, va).is_none());
            }
            assert!(t.walk(MmId(1), 0).is_none(), "slot 1 has no tree");
        }
    }

    #[test]
    fn scatter_is_a_bijection_within_each_chunk() {
        for bits in [0, 1, 2, 5, 12] {
            let s = Scatter { bits };
            let n = 1usize << bits;
            for chunk in [0, 3] {
                let mut seen: Vec<usize> = (0..n).map(|i| s.place(chunk * n + i)).collect();
                assert!(
                    seen.iter().all(|&p| p / n == chunk),
                    "bits {bits}: left its chunk"
                );
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), n, "bits {bits}: two slots share a place");
            }
        }
        // And it scatters: neighbours are not neighbours.
        let s = Scatter { bits: 12 };
        let near = (0..4095)
            .filter(|&i| s.place(i + 1).abs_diff(s.place(i)) <= 4)
            .count();
        assert!(near < 64, "{near} of 4095 neighbours stay within 4 slots");
    }

    #[test]
    fn one_lock_word_per_pte_page() {
        let t = PageTables::new(1024, 1);
        t.table_or_grow(MmId(0));
        let a = t.walk(MmId(0), 3).unwrap().ptl.0 as *const AtomicU32;
        let b = t.walk(MmId(0), 511).unwrap().ptl.0 as *const AtomicU32;
        let c = t.walk(MmId(0), 512).unwrap().ptl.0 as *const AtomicU32;
        assert_eq!(a, b);
        assert_ne!(a, c);
        let w = t.walk(MmId(0), 3).unwrap();
        let g = w.ptl.lock();
        assert_eq!(w.ptl.0.load(Ordering::Relaxed), 1);
        drop(g);
        assert_eq!(w.ptl.0.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn swap_entries_are_not_present() {
        let e = Pte::swap(12345);
        assert_eq!(
            (e.present(), e.page(), e.swap_slot()),
            (false, None, Some(12345))
        );
        assert_eq!(Pte::new(PageId(7), YOUNG).swap_slot(), None);
        assert_eq!(Pte::NONE.swap_slot(), None);
    }
}
