//! The world as an engine's threads share it: every lock domain of
//! [`crate::rmap`] behind its own lock, and whole kernel operations run by the
//! same compositions as [`World`]'s ([`crate::rmap::compose`]), but taking
//! each step's declared locks (see the lock order in [`crate::rmap`]'s doc).
//!
//! | part                         | lock (class for the stats)                     |
//! |------------------------------|------------------------------------------------|
//! | a family slot (root anon_vma)| `L`, the kind under study (`anon_vma`)         |
//! | a file's i_mmap              | `L` (`i_mmap`)                                 |
//! | an mm slot                   | [`AnyLock`] of the run's mmap_lock kind (`mmap_lock`) |
//! | an mm's vma cells (`vma_table.rs`) | atomics: anon links set under mmap_lock READ + the mm's page_table_lock (`spin.rs`, not studied); per-VMA locks (6.4+, `fault_lock = "per_vma"`) |
//! | the LRU lists (`lru.rs`)     | the zone's lru_lock (`spin.rs`, not studied)    |
//! | mm / family slot allocation  | the tasklist mutex (parking_lot, not studied)  |
//! | a page vs. a fault           | the page lock (`page_lock.rs`, not studied)     |
//! | PTEs, pages, page cache, swap | none: atomics                                 |
//!
//! Operations hold their mmap_lock(s) across all their steps, as the kernel
//! does; each step takes its rmap locks (`step_locks.rs`) and drops them before
//! the next. Walks (`walk.rs`) take one rmap lock for READ and no mmap_lock.
//! Every mmap_lock WRITE goes through [`MmWrite`] (`mm_write.rs`): at
//! mmap_write_lock it folds the anon links first faults set under READ into
//! the mm, and at mmap_write_unlock it brings the mm's vma cells up to date
//! (and ends the per-VMA write locks the operation took).
//!
//! # Concurrency hazards and how each is handled
//!
//! - **A family dies and its slot is reused before a walker locks it.** A
//!   walker reads a page's mapping (family F), then every vma of F goes, F is
//!   freed and a new family takes slot F, and only then does the walker lock
//!   slot F. The kernel pins the anon_vma (folio_get_anon_vma, RCU) and
//!   re-checks `folio_mapped` under the lock (folio_lock_anon_vma_read). Here:
//!   the walker pins the page first (PagePool::pin, reclaim's isolation
//!   reference: the page can be neither freed nor reallocated), locks the slot
//!   (slot locks are never replaced, only the data in them), and under the lock
//!   requires the slot to be live, the page's mapping to still name F, and the
//!   page to be mapped. A mapped page has a PTE in a vma linked to F, and vmas
//!   are zapped before they are unlinked, so a mapped page's family cannot have
//!   died; a dead family's pinned page stays unmapped for good (only an
//!   existing PTE or a live vma can map it again). Otherwise the walk reports
//!   `raced` and touches nothing.
//! - **Reclaim racing a fault on the same page** (page-cache lookup, or the
//!   write-protect reuse test, against try_to_unmap freeing the page): the page
//!   lock, see `page_lock.rs`.
//! - **fork copying a PTE that reclaim clears.** copy_pte_range takes the
//!   child's page reference speculatively (PagePool::try_map, as folio_try_get)
//!   and retries on the new PTE value if the page was freed under it.
//! - **exit while a walker visits its PTEs.** Page tables are fixed atomics for
//!   the table's lifetime, so reading a dying mm's PTE is memory-safe; the walk
//!   finds it cleared (zap runs before unlink, and the unlink needs the root
//!   WRITE the walker holds READ), and a reused mm slot's PTEs start at zero.
//! - **Several threads forking one parent.** dup_mmap holds the parent's
//!   mmap_lock WRITE, so they run one after another.
//! - **An mm exiting while others use its id.** Each operation locks the mm
//!   slot and finds it empty: fork returns None, touch returns `Ok(None)`,
//!   split/merge return false, exit and munmap do nothing. Slot ids are reused
//!   (LIFO), so callers that must not act on a successor keep their own
//!   reference counts (the engine's roster does).
//! - **Slot exhaustion.** fork returns None when the world's mm capacity is
//!   live; the family table has millions of slots (see World).
//!
//! Lock order: mmap_lock (parent before child in fork) -> page lock ->
//! i_mmap -> family root; the tasklist mutex is a leaf, held only to hand out
//! or take back a slot id, never while acquiring another lock.
//!
//! One acquisition no step declares: a new root anon_vma's family slot is
//! locked WRITE to publish the family (a stale walker may be reading that
//! slot; the kernel too locks its new anon_vma in __anon_vma_prepare).
//! The first fault of a vma runs as __anon_vma_prepare does: under
//! mmap_lock READ, joining a neighbour's anon_vma under its root WRITE or
//! publishing a new family, then storing the link under the mm's
//! page_table_lock, where a racing first fault of the same vma finds it
//! set and keeps it (`fault.rs`).

mod exec;
mod fault;
mod find_vma;
mod fork;
mod lru;
mod mm_write;
mod page_lock;
mod spin;
mod step_locks;
mod unmap;
mod vma;
mod vma_table;
mod walk;

pub use fault::Touched;
pub use lru::{Isolated, LruBatch};
pub use walk::WalkOutcome;

use super::costs::Costs;
use crate::locks::platform::Platform;
use crate::locks::stats::LockClass;
use crate::locks::{AnyLock, LockKind, RawRwLock, RwLock};
use crate::model::FaultLock;
use crate::rmap::era::Era;
use crate::rmap::lru::Lru;
use crate::rmap::pte::PageTables;
use crate::rmap::slots::{IdAlloc, SlotTable};
use crate::rmap::step_locks::WorkTally;
use crate::rmap::{AddressSpace, Capacity, Family, FamilyId, Mm, MmId, PageCache, PagePool, World};
use find_vma::FindVmaLines;
use mm_write::MmWrite;
use page_lock::PageLocks;
use spin::SpinLock;
use std::collections::BTreeSet;
use vma_table::VmaTable;

/// An mm slot: its mmap_lock (of the run's mmap_lock kind, on the rmap
/// locks' platform) around the mm (None when free), its page_table_lock,
/// and the cells its faults read beside the mmap_lock.
struct MmSlot<P: Platform> {
    mm: RwLock<AnyLock<P>, Option<Mm>>,
    page_table_lock: SpinLock<P, ()>,
    vmas: VmaTable<P>,
    find_vma: FindVmaLines<P>,
}

impl<P: Platform> MmSlot<P> {
    fn new(kind: LockKind, mm: Option<Mm>, va_pages: u32) -> Self {
        MmSlot {
            mm: RwLock::with_raw(AnyLock::of(kind), LockClass::MmapLock, mm),
            page_table_lock: SpinLock::new(()),
            vmas: VmaTable::new(va_pages),
            find_vma: FindVmaLines::new(),
        }
    }
}

/// A family slot: its root anon_vma lock and the family (None when free).
type FamilySlot<L> = RwLock<L, Option<Family>>;
/// A file: its i_mmap_rwsem and its i_mmap tree.
type SpaceSlot<L> = RwLock<L, AddressSpace>;

/// Slot allocation, under the tasklist mutex.
struct Tasklist {
    mm_ids: IdAlloc,
    family_ids: IdAlloc,
    /// mms whose fork completed and that have not exited.
    live: BTreeSet<MmId>,
}

/// The shared world; see the module doc.
pub struct SharedWorld<L: RawRwLock> {
    /// Pages per task address space.
    va_pages: u32,
    /// The kernel era the world stands for (fixed).
    era: Era,
    capacity: Capacity,
    /// What the kernel work of each step costs (see `costs.rs`).
    pub costs: Costs,
    /// CPUs other than a flusher's that an mm runs on (its TLB flushes' IPIs).
    mm_remote_cpus: u64,
    /// The kind of every mmap_lock (new mm slots get one too).
    mmap_kind: LockKind,
    /// What faults lock: mmap_lock READ, or the vma's lock first (6.4+).
    fault_lock: FaultLock,
    mms: SlotTable<MmSlot<L::Platform>>,
    /// PTEs of every mm: atomics.
    page_tables: PageTables,
    families: SlotTable<FamilySlot<L>>,
    spaces: Box<[SpaceSlot<L>]>,
    /// Each file's size in pages (fixed), readable without its lock.
    file_pages: Box<[u32]>,
    /// Page caches, index-aligned with `spaces`: atomics.
    page_cache: Box<[PageCache]>,
    pages: PagePool,
    /// The zone's LRU lists under its lru_lock.
    lru: SpinLock<L::Platform, Lru>,
    page_locks: PageLocks<L::Platform>,
    tasklist: parking_lot::Mutex<Tasklist>,
    ancestor: MmId,
}

impl<L: RawRwLock> SharedWorld<L> {
    /// Take a built world apart: one `L` per family slot (the root anon_vma
    /// rwsem) and per address space (i_mmap_rwsem), one [`AnyLock`] of kind
    /// `mmap_lock` per mm slot, the lru_lock around the world's LRU, and the
    /// tasklist mutex for slot allocation. `costs` is what the kernel work of
    /// each step costs, and an mm runs on `mm_remote_cpus` CPUs besides one
    /// that flushes its TLB. Faults lock mmap_lock (see
    /// [`with_fault_lock`](Self::with_fault_lock)). Panics if the world has
    /// no task.
    pub fn new(world: World, mmap_lock: LockKind, costs: Costs, mm_remote_cpus: u64) -> Self {
        let World {
            va_pages,
            era,
            lru,
            capacity,
            mms,
            mm_ids,
            page_tables,
            families,
            family_ids,
            spaces,
            page_cache,
            pages,
            // The engine charges or spends work as it goes; it keeps no tally.
            work: _,
        } = world;
        let live: BTreeSet<MmId> = (0..mm_ids.high_water())
            .map(MmId)
            .filter(|id| mms.get(id.index()).is_some_and(Option::is_some))
            .collect();
        let ancestor = *live.first().expect("a world with at least one task");
        let file_pages: Box<[u32]> = spaces.iter().map(AddressSpace::pages).collect();
        let mut mms = mms.map(|m| MmSlot::new(mmap_lock, m, va_pages));
        for id in &live {
            let slot = mms.get_mut(id.index()).expect("a live mm's slot");
            slot.vmas.sync(slot.mm.get_mut().as_ref(), false);
        }
        SharedWorld {
            va_pages,
            era,
            capacity,
            costs,
            mm_remote_cpus,
            mmap_kind: mmap_lock,
            fault_lock: FaultLock::default(),
            mms,
            page_tables,
            families: families.map(|f| new_family_slot(f)),
            spaces: spaces
                .into_vec()
                .into_iter()
                .map(|s| RwLock::with_raw(<L as RawRwLock>::new(), LockClass::IMmap, s))
                .collect(),
            lru: SpinLock::new(lru),
            page_locks: PageLocks::new(pages.capacity(), &file_pages),
            file_pages,
            page_cache,
            pages,
            tasklist: parking_lot::Mutex::new(Tasklist {
                mm_ids,
                family_ids,
                live,
            }),
            ancestor,
        }
    }

    /// Faults lock `fault_lock` (`workload.fault_lock`): mmap_lock READ, or
    /// first the vma's own lock (6.4+).
    pub fn with_fault_lock(mut self, fault_lock: FaultLock) -> Self {
        self.fault_lock = fault_lock;
        self
    }

    /// Whether faults try per-VMA locks, so writers must write-lock vmas.
    fn per_vma(&self) -> bool {
        self.fault_lock == FaultLock::PerVma
    }

    /// Put the world back together (after every thread has joined), e.g. for
    /// [`World::check`] and [`World::check_lru`]; anon links first faults
    /// set under mmap_lock READ are folded into their mms.
    pub fn into_world(self) -> World {
        let Tasklist {
            mm_ids, family_ids, ..
        } = self.tasklist.into_inner();
        World {
            va_pages: self.va_pages,
            era: self.era,
            lru: self.lru.into_inner(),
            work: WorkTally::default(),
            capacity: self.capacity,
            mms: self.mms.map(|slot| {
                let mut mm = slot.mm.into_inner();
                if let Some(m) = mm.as_mut() {
                    slot.vmas.fold(m);
                }
                mm
            }),
            mm_ids,
            page_tables: self.page_tables,
            families: self.families.map(RwLock::into_inner),
            family_ids,
            spaces: self
                .spaces
                .into_vec()
                .into_iter()
                .map(RwLock::into_inner)
                .collect(),
            page_cache: self.page_cache,
            pages: self.pages,
        }
    }

    /// Pages per task address space.
    pub fn va_pages(&self) -> u32 {
        self.va_pages
    }

    /// The page pool.
    pub fn pages(&self) -> &PagePool {
        &self.pages
    }

    pub fn page_capacity(&self) -> u32 {
        self.pages.capacity()
    }

    /// Pages not allocated now (one relaxed load).
    pub fn free_pages(&self) -> u64 {
        u64::from(self.pages.capacity() - self.pages.live())
    }

    /// A snapshot of the live mms (forked to completion, not exited), by id.
    pub fn live_mms(&self) -> Vec<MmId> {
        self.tasklist.lock().live.iter().copied().collect()
    }

    /// The first ancestor: the lowest live mm id when the world was taken apart.
    pub fn ancestor(&self) -> MmId {
        self.ancestor
    }

    /// Nanoseconds on the platform's clock (virtual time in the simulator).
    fn now_ns(&self) -> u64 {
        L::Platform::now_ns()
    }

    /// The mm slot `mm`, if its chunk exists.
    fn mm_slot(&self, mm: MmId) -> Option<&MmSlot<L::Platform>> {
        self.mms.get(mm.index())
    }

    /// mmap_write_lock of `mm` (None if its slot was never grown).
    fn mm_write(&self, mm: MmId) -> Option<MmWrite<'_, L::Platform>> {
        Some(MmWrite::lock(
            self.mm_slot(mm)?,
            self.per_vma(),
            self.era.find_vma_cache,
        ))
    }

    /// The slot of a family some live object names (its chunk exists).
    fn family_slot(&self, family: FamilyId) -> &FamilySlot<L> {
        self.families
            .get(family.index())
            .unwrap_or_else(|| panic!("{family:?} was never allocated"))
    }

    /// A free mm slot, grown and with its page table, or None if the world's
    /// mm capacity is live.
    fn alloc_mm(&self) -> Option<MmId> {
        let id = {
            let mut t = self.tasklist.lock();
            if t.mm_ids.live() >= self.capacity.mms {
                return None;
            }
            MmId(t.mm_ids.alloc())
        };
        let (kind, va_pages) = (self.mmap_kind, self.va_pages);
        self.mms
            .get_or_grow(id.index(), || MmSlot::new(kind, None, va_pages));
        self.page_tables.table_or_grow(id);
        Some(id)
    }

    /// A forked mm is complete: list it.
    fn publish_mm(&self, mm: MmId) {
        self.tasklist.lock().live.insert(mm);
    }

    /// Release an mm slot whose data is already gone.
    fn free_mm(&self, mm: MmId) {
        let mut t = self.tasklist.lock();
        t.live.remove(&mm);
        t.mm_ids.free(mm.0);
    }

    /// A free family slot, grown.
    fn alloc_family(&self) -> FamilyId {
        let id = FamilyId(self.tasklist.lock().family_ids.alloc());
        self.families
            .get_or_grow(id.index(), || new_family_slot(None));
        id
    }

    /// Release a family slot whose data is already gone.
    fn free_family(&self, family: FamilyId) {
        self.tasklist.lock().family_ids.free(family.0);
    }
}

fn new_family_slot<L: RawRwLock>(family: Option<Family>) -> FamilySlot<L> {
    RwLock::with_raw(<L as RawRwLock>::new(), LockClass::AnonVma, family)
}
