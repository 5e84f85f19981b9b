//! Pages (`struct folio`, order 0): a fixed-capacity pool of descriptors.
//!
//! Locking: none; every field is an atomic, as the kernel's `_mapcount` is and
//! as `folio->mapping` is read by walkers (folio_lock_anon_vma_read reads it
//! under RCU before taking the anon_vma lock, then re-checks). Allocation takes
//! a free bit from a bitmap by CAS, so the pool needs no lock either.
//!
//! Lifetime: a page is freed when its reference word drops to zero: mapcount
//! (PTEs mapping it) plus pins (the kernel's other folio references: the page
//! cache's, or reclaim's isolation reference that keeps a page alive while
//! try_to_unmap walks it). Whoever drops the last one frees it, as
//! folio_put does.
//!
//! Capacity is fixed when the world is built (from the model, see
//! `Capacity`): allocation failing is the model's "out of memory", which the
//! engine turns into reclaim.
//!
//! Mapping word (`mapping`, u64), the kernel's `folio->mapping` with its
//! PAGE_MAPPING_ANON bit:
//!
//! | value / bits             | meaning                                   |
//! |--------------------------|-------------------------------------------|
//! | `u64::MAX`               | free page                                 |
//! | bit 63 set, 32..63, 0..32| anon: family id (31 bits), anon_vma id    |
//! | bit 63 clear, 0..32      | file page: the address space id           |

use super::ids::{AnonVmaId, FamilyId, PageId, SpaceId};
use super::slots::BitAlloc;
use super::swap::SwapSpace;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const FREE: u64 = u64::MAX;
const ANON: u64 = 1 << 63;

/// What a page belongs to (`folio->mapping` decoded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// An anonymous page of `anon_vma` in `family`: rmap_walk_anon searches
    /// that anon_vma's own tree.
    Anon {
        family: FamilyId,
        anon_vma: AnonVmaId,
    },
    /// A page-cache page of a file: rmap_walk_file searches its i_mmap.
    File { space: SpaceId },
}

impl Mapping {
    fn encode(self) -> u64 {
        match self {
            Mapping::Anon { family, anon_vma } => {
                // All-ones would read as FREE.
                assert!(
                    family.0 < (1 << 31) - 1,
                    "family id {} needs 31 bits",
                    family.0
                );
                ANON | u64::from(family.0) << 32 | u64::from(anon_vma.0)
            }
            Mapping::File { space } => u64::from(space.0),
        }
    }

    fn decode(word: u64) -> Option<Mapping> {
        match word {
            FREE => None,
            w if w & ANON != 0 => Some(Mapping::Anon {
                family: FamilyId(((w & !ANON) >> 32) as u32),
                anon_vma: AnonVmaId(w as u32),
            }),
            w => Some(Mapping::File {
                space: SpaceId(w as u32),
            }),
        }
    }
}

/// Reference word: PTEs mapping the page (the kernel's `_mapcount` + 1) in
/// bits 0..24, pins in bits 24..32.
const MAP_ONE: u32 = 1;
const PIN_ONE: u32 = 1 << 24;
const MAPCOUNT_MASK: u32 = PIN_ONE - 1;

/// One page descriptor: 24 bytes.
#[derive(Debug)]
pub struct PageDesc {
    /// `folio->mapping` (see the module doc's table). Atomic.
    mapping: AtomicU64,
    /// The page's pgoff in its anon_vma's or file's space (`folio->index`).
    /// Atomic.
    index: AtomicU32,
    /// Mapcount and pins (see [`MAP_ONE`], [`PIN_ONE`]). Atomic.
    refs: AtomicU32,
    /// `folio->swap`: the swap slot while the page is in the swap cache, or
    /// [`NOT_SWAPPED`]. Atomic; set and cleared with the swap cache entry
    /// (see [`super::swap`]).
    swap: AtomicU32,
    /// Allocations of this descriptor so far: tells a stale LRU entry of an
    /// earlier page in the same slot from the page there now. Atomic.
    generation: AtomicU32,
}

/// `PageDesc::swap` of a page not in the swap cache.
pub const NOT_SWAPPED: u32 = u32::MAX;

/// The pool.
/// Every field is atomic: no lock.
pub struct PagePool {
    /// The descriptors, by page id.
    descs: Box<[PageDesc]>,
    /// Which pages are allocated.
    used: BitAlloc,
    /// The swap device and its swap cache, where reclaimed anon pages go.
    pub swap: SwapSpace,
}

impl PagePool {
    /// `capacity` pages, and as many swap slots (a page can be in at most
    /// one slot, and every slot in use holds one page's data).
    pub fn new(capacity: u32) -> Self {
        assert!(capacity <= super::pte::MAX_PAGES);
        PagePool {
            descs: (0..capacity)
                .map(|_| PageDesc {
                    mapping: AtomicU64::new(FREE),
                    index: AtomicU32::new(0),
                    refs: AtomicU32::new(0),
                    swap: AtomicU32::new(NOT_SWAPPED),
                    generation: AtomicU32::new(0),
                })
                .collect(),
            used: BitAlloc::new(capacity),
            swap: SwapSpace::new(capacity),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.descs.len() as u32
    }

    /// Pages allocated now.
    pub fn live(&self) -> u32 {
        self.used.live()
    }

    /// Allocate a page for `mapping` at `index` with one pin (the caller's
    /// reference: drop it with [`unpin`](Self::unpin) once mapped, or hand it
    /// to the page cache); None if the pool is full.
    pub fn alloc(&self, mapping: Mapping, index: u32) -> Option<PageId> {
        let id = PageId(self.used.alloc()?);
        let d = &self.descs[id.index()];
        d.index.store(index, Ordering::Relaxed);
        d.refs.store(PIN_ONE, Ordering::Relaxed);
        d.swap.store(NOT_SWAPPED, Ordering::Relaxed);
        d.generation.fetch_add(1, Ordering::Relaxed);
        d.mapping.store(mapping.encode(), Ordering::Release);
        Some(id)
    }

    /// Return a page whose last reference went.
    fn free(&self, page: PageId) {
        let d = &self.descs[page.index()];
        debug_assert_eq!(
            d.swap.load(Ordering::Relaxed),
            NOT_SWAPPED,
            "{page:?} freed in the swap cache"
        );
        d.mapping.store(FREE, Ordering::Release);
        self.used.free(page.0);
    }

    /// How many times the descriptor was allocated (see the field).
    pub fn generation(&self, page: PageId) -> u32 {
        self.descs[page.index()].generation.load(Ordering::Acquire)
    }

    /// The swap slot of a page in the swap cache (`folio->swap`).
    pub fn swap_slot(&self, page: PageId) -> Option<u32> {
        let s = self.descs[page.index()].swap.load(Ordering::Acquire);
        (s != NOT_SWAPPED).then_some(s)
    }

    /// Set or clear `folio->swap` (the swap cache does, see [`super::swap`]).
    pub(crate) fn set_swap_slot(&self, page: PageId, slot: Option<u32>) {
        self.descs[page.index()]
            .swap
            .store(slot.unwrap_or(NOT_SWAPPED), Ordering::Release);
    }

    pub fn mapping(&self, page: PageId) -> Option<Mapping> {
        Mapping::decode(self.descs[page.index()].mapping.load(Ordering::Acquire))
    }

    /// folio_move_anon_rmap: an exclusively mapped anon page changes anon_vma.
    pub fn set_mapping(&self, page: PageId, mapping: Mapping) {
        self.descs[page.index()]
            .mapping
            .store(mapping.encode(), Ordering::Release);
    }

    pub fn index(&self, page: PageId) -> u32 {
        self.descs[page.index()].index.load(Ordering::Relaxed)
    }

    /// PTEs mapping the page (folio_mapcount).
    pub fn mapcount(&self, page: PageId) -> u32 {
        self.descs[page.index()].refs.load(Ordering::Acquire) & MAPCOUNT_MASK
    }

    /// Pins held on the page (references other than mappings).
    pub fn pins(&self, page: PageId) -> u32 {
        self.descs[page.index()].refs.load(Ordering::Acquire) / PIN_ONE
    }

    /// One more PTE maps the page (folio_add_*_rmap, page_dup_rmap). The
    /// caller holds a reference already (a pin or a PTE mapping it).
    pub fn map(&self, page: PageId) {
        let prev = self.descs[page.index()]
            .refs
            .fetch_add(MAP_ONE, Ordering::AcqRel);
        debug_assert!(prev != 0 && prev & MAPCOUNT_MASK != MAPCOUNT_MASK);
    }

    /// One PTE fewer (folio_remove_rmap_pte + the PTE's folio_put). True if
    /// that was the last reference and the page is now free.
    pub fn unmap(&self, page: PageId) -> bool {
        self.put(page, MAP_ONE)
    }

    /// Take a reference on a live page (folio_try_get, as reclaim isolates a
    /// page before walking it). False if the page is free.
    pub fn pin(&self, page: PageId) -> bool {
        self.try_get(page, PIN_ONE)
    }

    /// [`map`](Self::map) for a caller that found the page through a PTE it
    /// does not own, which a walker may clear (and the page be freed) under
    /// it: the reference is taken only if the page is live (folio_try_get).
    /// False if the page is free.
    pub fn try_map(&self, page: PageId) -> bool {
        self.try_get(page, MAP_ONE)
    }

    /// Add `one` to a live page's references; false if it is free.
    fn try_get(&self, page: PageId, one: u32) -> bool {
        let refs = &self.descs[page.index()].refs;
        let mut cur = refs.load(Ordering::Acquire);
        loop {
            if cur == 0 {
                return false;
            }
            match refs.compare_exchange_weak(cur, cur + one, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Drop a pin; true if the page is now free.
    pub fn unpin(&self, page: PageId) -> bool {
        self.put(page, PIN_ONE)
    }

    fn put(&self, page: PageId, one: u32) -> bool {
        let prev = self.descs[page.index()]
            .refs
            .fetch_sub(one, Ordering::AcqRel);
        debug_assert!(prev >= one, "reference underflow on {page:?}");
        let last = prev == one;
        if last {
            self.free(page);
        }
        last
    }

    /// The first allocated page at or after `from`, wrapping around once: the
    /// reclaim scan's next LRU page. Searches the allocation bitmap 64 pages
    /// a word, so a sparse pool costs a word per 64 free pages, not a load per
    /// free page. None if no page is allocated.
    pub fn next_allocated(&self, from: PageId) -> Option<PageId> {
        self.used.next_used(from.0).map(PageId)
    }

    /// Every allocated page, in id order.
    pub fn iter_live(&self) -> impl Iterator<Item = PageId> + '_ {
        (0..self.capacity())
            .map(PageId)
            .filter(|&p| self.mapping(p).is_some())
    }

    pub fn bytes(&self) -> usize {
        self.descs.len() * size_of::<PageDesc>() + self.used.bytes() + self.swap.bytes()
    }
}

#[cfg(test)]
mod next_allocated_tests {
    use super::*;

    #[test]
    fn finds_the_next_page_wrapping_and_skips_the_padding_bits() {
        let pool = PagePool::new(130);
        assert_eq!(pool.next_allocated(PageId(0)), None);
        let a = pool
            .alloc(
                Mapping::File {
                    space: crate::rmap::ids::SpaceId(0),
                },
                0,
            )
            .unwrap();
        let b = pool
            .alloc(
                Mapping::File {
                    space: crate::rmap::ids::SpaceId(0),
                },
                1,
            )
            .unwrap();
        assert_eq!((a, b), (PageId(0), PageId(1)));
        assert_eq!(pool.next_allocated(PageId(0)), Some(a));
        assert_eq!(pool.next_allocated(PageId(1)), Some(b));
        // From past the last page (and past the capacity): wraps to the first.
        assert_eq!(pool.next_allocated(PageId(2)), Some(a));
        assert_eq!(pool.next_allocated(PageId(129)), Some(a));
        assert_eq!(pool.next_allocated(PageId(500)), Some(a));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_round_trips() {
        for m in [
            Mapping::Anon {
                family: FamilyId((1 << 31) - 2),
                anon_vma: AnonVmaId(u32::MAX),
            },
            Mapping::Anon {
                family: FamilyId(0),
                anon_vma: AnonVmaId(0),
            },
            Mapping::File {
                space: SpaceId(u32::MAX),
            },
        ] {
            assert_eq!(Mapping::decode(m.encode()), Some(m));
        }
        assert_eq!(Mapping::decode(FREE), None);
    }

    #[test]
    fn pool_hands_out_every_page_once_then_fails() {
        let pool = PagePool::new(70);
        let file = Mapping::File { space: SpaceId(0) };
        let mut got: Vec<u32> = (0..70).map(|i| pool.alloc(file, i).unwrap().0).collect();
        assert_eq!(pool.alloc(file, 0), None);
        got.sort();
        assert_eq!(got, (0..70).collect::<Vec<_>>());
        assert!(pool.unpin(PageId(65)));
        assert_eq!(pool.alloc(file, 9), Some(PageId(65)));
        assert_eq!((pool.index(PageId(65)), pool.live()), (9, 70));
    }

    #[test]
    fn the_last_reference_frees_whichever_it_is() {
        let pool = PagePool::new(1);
        let p = pool.alloc(Mapping::File { space: SpaceId(0) }, 0).unwrap();
        pool.map(p);
        pool.map(p);
        assert!(!pool.unpin(p)); // mapped twice: stays
        assert!(pool.pin(p)); // reclaim isolates it
        assert!(!pool.unmap(p) && !pool.unmap(p)); // unmapped, still pinned
        assert_eq!((pool.mapcount(p), pool.pins(p)), (0, 1));
        assert!(pool.unpin(p)); // the isolation reference was the last
        assert!(!pool.pin(p) && pool.mapping(p).is_none());
    }

    #[test]
    fn try_map_takes_a_mapping_only_on_a_live_page() {
        let pool = PagePool::new(1);
        let p = pool.alloc(Mapping::File { space: SpaceId(0) }, 0).unwrap();
        assert!(pool.try_map(p));
        assert_eq!((pool.mapcount(p), pool.pins(p)), (1, 1));
        assert!(!pool.unpin(p) && pool.unmap(p)); // the mapping was the last
        assert!(!pool.try_map(p));
        assert_eq!(pool.mapcount(p), 0, "a freed page gains no mapping");
    }
}
