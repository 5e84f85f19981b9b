//! The single-threaded façade: owns every part of the world and runs whole
//! kernel operations on it, taking no locks (there is one thread): fork,
//! teardown, split and merge through [`super::compose`], with the
//! [`Unlocked`] view for their step locks. Inspect, the property tests and the
//! benches use it; an engine takes it apart (its fields are public) and runs
//! the same compositions under one lock per domain.
//!
//! Each field's doc names the lock that guards it in the kernel (and in the
//! engine). Lock-free parts (page tables, page cache, page pool) are shared by
//! `&` and changed only through atomics.

use super::anon_vma::{self, Prepare};
use super::compose;
use super::era::Era;
use super::exec::{Binary, Exec};
use super::family::Family;
use super::fault::{self, Fault, OutOfPages};
use super::ids::{FamilyId, MmId, PageId, SpaceId};
use super::lru::{self, List, Lru, SWAP_CLUSTER_MAX, Walked};
use super::mm::{Mm, Vma};
use super::mmap;
use super::page::{Mapping, PagePool};
use super::pte;
use super::pte::PageTables;
use super::slots::{IdAlloc, SlotTable};
use super::space::{AddressSpace, PageCache};
use super::split;
use super::step_locks::{Unlocked, WorkTally};
use super::vma_lock::{self, VmaLockOutcome};
use super::walk::{self, Locked, WalkResult};

/// Slots per chunk of the mm and family tables.
const TABLE_CHUNK: usize = 1024;
/// Chunks of the family table: 4 Mi families (a family needs a live vma, so
/// this bounds nothing a model can reach; the chunk-pointer array costs 96 KiB).
const FAMILY_CHUNKS: usize = 4096;

/// Fixed sizes chosen when the world is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// mm slots (live tasks at once).
    pub mms: u32,
    /// Page descriptors in the pool.
    pub pages: u32,
}

/// Every part of the model.
pub struct World {
    /// Pages per task address space (the page-table size).
    pub va_pages: u32,
    /// The kernel era the world stands for (fixed before the first fault).
    pub era: Era,
    /// The fixed sizes the tables were built with.
    pub capacity: Capacity,
    /// `mm_struct`s by id; each entry guarded by that mm's mmap_lock. None is
    /// a free slot. Entries never move (see [`SlotTable`]).
    pub mms: SlotTable<Option<Mm>>,
    /// mm slot allocation: guarded by the engine's tasklist lock.
    pub mm_ids: IdAlloc,
    /// PTEs of every mm: atomics, no lock (the PTL is a CAS).
    pub page_tables: PageTables,
    /// anon_vma families by id; each entry guarded by its root anon_vma rwsem.
    pub families: SlotTable<Option<Family>>,
    /// Family slot allocation: guarded by the engine's tasklist lock.
    pub family_ids: IdAlloc,
    /// Files' i_mmap trees; each guarded by its i_mmap_rwsem.
    pub spaces: Box<[AddressSpace]>,
    /// Files' page caches, index-aligned with `spaces`: atomics, no lock.
    pub page_cache: Box<[PageCache]>,
    /// Page descriptors (and the swap device): atomics, no lock.
    pub pages: PagePool,
    /// The zone's LRU lists: guarded by its lru_lock.
    pub lru: Lru,
    /// The work the compositions did so far (vmas, AVCs, PTEs).
    pub work: WorkTally,
}

/// What one [`World::shrink_lru`] pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shrink {
    /// Pages isolated from the inactive list (and from the active list).
    pub inactive: u32,
    pub active: u32,
    /// Pages freed.
    pub reclaimed: u32,
}

/// The mm in slot `id` (it must be live); a free function so callers can
/// borrow other tables of the world beside it.
fn mm_mut(mms: &mut SlotTable<Option<Mm>>, id: MmId) -> &mut Mm {
    mms.get_mut(id.index())
        .and_then(Option::as_mut)
        .unwrap_or_else(|| panic!("{id:?} is not a live mm"))
}

/// The family in slot `id` (it must be live).
fn family_mut(families: &mut SlotTable<Option<Family>>, id: FamilyId) -> &mut Family {
    families
        .get_mut(id.index())
        .and_then(Option::as_mut)
        .unwrap_or_else(|| panic!("{id:?} is not a live family"))
}

impl World {
    /// An empty world: no tasks, `file_pages.len()` files of those sizes.
    pub fn new(va_pages: u32, file_pages: &[u32], cap: Capacity) -> World {
        World {
            va_pages,
            era: Era::default(),
            capacity: cap,
            mms: SlotTable::new(TABLE_CHUNK, (cap.mms as usize).div_ceil(TABLE_CHUNK).max(1)),
            mm_ids: IdAlloc::default(),
            page_tables: PageTables::new(va_pages, cap.mms),
            families: SlotTable::new(TABLE_CHUNK, FAMILY_CHUNKS),
            family_ids: IdAlloc::default(),
            spaces: file_pages.iter().map(|&p| AddressSpace::new(p)).collect(),
            page_cache: file_pages.iter().map(|&p| PageCache::new(p)).collect(),
            pages: PagePool::new(cap.pages),
            lru: Lru::default(),
            work: WorkTally::default(),
        }
    }

    /// The live mm `id`.
    pub fn mm(&self, id: MmId) -> &Mm {
        self.mms
            .get(id.index())
            .and_then(Option::as_ref)
            .unwrap_or_else(|| panic!("{id:?} is not a live mm"))
    }

    fn mm_mut(&mut self, id: MmId) -> &mut Mm {
        mm_mut(&mut self.mms, id)
    }

    /// The live family `id`.
    pub fn family(&self, id: FamilyId) -> &Family {
        self.families
            .get(id.index())
            .and_then(Option::as_ref)
            .unwrap_or_else(|| panic!("{id:?} is not a live family"))
    }

    /// Every live mm, by id.
    pub fn live_mms(&self) -> impl Iterator<Item = (MmId, &Mm)> {
        (0..self.mm_ids.high_water()).filter_map(|i| {
            let mm = self.mms.get(i as usize)?.as_ref()?;
            Some((MmId(i), mm))
        })
    }

    /// Every live family, by id.
    pub fn live_families(&self) -> impl Iterator<Item = (FamilyId, &Family)> {
        (0..self.family_ids.high_water()).filter_map(|i| {
            let f = self.families.get(i as usize)?.as_ref()?;
            Some((FamilyId(i), f))
        })
    }

    /// A new task with an empty address space (an exec'd process). Panics
    /// if [`Capacity::mms`] tasks are live already.
    pub fn spawn(&mut self) -> MmId {
        assert!(
            self.mm_ids.live() < self.capacity.mms,
            "world built for {} mms",
            self.capacity.mms
        );
        let id = MmId(self.mm_ids.alloc());
        self.mms.get_or_grow(id.index(), || None);
        self.page_tables.table_or_grow(id);
        *self.mms.get_mut(id.index()).expect("slot just grown") = Some(Mm::default());
        id
    }

    /// mmap anonymous pages `[start, start + pages)`.
    pub fn mmap_anon_at(&mut self, mm: MmId, start: u32, pages: u32) {
        assert!(start + pages <= self.va_pages);
        mmap::mmap_anon(self.mm_mut(mm), start, pages);
    }

    /// mmap `pages` anonymous pages wherever they fit; their start.
    pub fn mmap_anon(&mut self, mm: MmId, pages: u32) -> Option<u32> {
        let start = mmap::get_unmapped_area(self.mm(mm), pages, self.va_pages)?;
        self.mmap_anon_at(mm, start, pages);
        Some(start)
    }

    /// mmap file pages `[pgoff, pgoff + pages)` shared at `start`.
    pub fn mmap_file_at(&mut self, mm: MmId, start: u32, space: SpaceId, pgoff: u32, pages: u32) {
        assert!(start + pages <= self.va_pages);
        let m = mm_mut(&mut self.mms, mm);
        let s = &mut self.spaces[space.index()];
        mmap::mmap_file(mm, m, start, pages, space, pgoff, s);
    }

    /// mmap a file range wherever it fits; its start.
    pub fn mmap_file(&mut self, mm: MmId, space: SpaceId, pgoff: u32, pages: u32) -> Option<u32> {
        let start = mmap::get_unmapped_area(self.mm(mm), pages, self.va_pages)?;
        self.mmap_file_at(mm, start, space, pgoff, pages);
        Some(start)
    }

    /// mmap a file range MAP_PRIVATE wherever it fits (a binary's segment);
    /// its start.
    pub fn mmap_file_private(
        &mut self,
        mm: MmId,
        space: SpaceId,
        pgoff: u32,
        pages: u32,
    ) -> Option<u32> {
        let start = mmap::get_unmapped_area(self.mm(mm), pages, self.va_pages)?;
        let m = mm_mut(&mut self.mms, mm);
        let s = &mut self.spaces[space.index()];
        mmap::mmap_file_in(mm, m, start, pages, space, pgoff, s, true);
        Some(start)
    }

    /// Touch page `addr` of `mm` (a read or write access that faults if the
    /// PTE does not allow it): the first fault in an anon vma, or the first
    /// write to a private file vma, first runs __anon_vma_prepare.
    pub fn touch(&mut self, mm: MmId, addr: u32, write: bool) -> Result<Fault, OutOfPages> {
        let vma = self.mm(mm).vma(addr).expect("touch outside any vma");
        if vma.anon.is_none() && (vma.is_anon() || (write && vma.is_private())) {
            self.anon_vma_prepare(mm, addr);
        }
        let m = self.mms.get(mm.index()).and_then(Option::as_ref);
        let vma = m.and_then(|m| m.vma(addr)).expect("vma still there");
        let ptes = self.page_tables.table(mm).expect("mm has a page table");
        let (lru, pages, caches) = (&mut self.lru, &self.pages, &self.page_cache);
        loop {
            // folio_add_lru of each page the fault allocates.
            let mut added = |p| lru.add(pages, p);
            match fault::handle_mm_fault(vma, addr, write, ptes, pages, caches, &mut added)? {
                Fault::Retry => continue,
                done => return Ok(done),
            }
        }
    }

    /// One reclaim pass over the LRU (shrink_lruvec): refill the inactive
    /// list from the active one by a batch if it is low (shrink_active_list:
    /// every page walked and deactivated), then isolate up to
    /// [`SWAP_CLUSTER_MAX`] inactive pages, walk each (page_referenced) and
    /// reclaim the old ones (try_to_unmap to swap, free), and put the rest
    /// back. `contended(page)` says whether the walk's rmap try_lock would
    /// fail (the 2022 folio_referenced try_lock: such a page is kept on the
    /// inactive list, unwalked); the single-threaded world has no contention
    /// of its own, so callers pass `|_| false` or simulate some.
    pub fn shrink_lru(&mut self, mut contended: impl FnMut(PageId) -> bool) -> Shrink {
        let mut done = Shrink::default();
        let before = self.lru.stats.reclaimed;
        if self.lru.inactive_is_low() {
            done.active = self.shrink_list(List::Active, &mut contended);
        }
        done.inactive = self.shrink_list(List::Inactive, &mut contended);
        done.reclaimed = (self.lru.stats.reclaimed - before) as u32;
        done
    }

    /// One batch of `from` ([`lru::verdict`] for each page); the pages
    /// isolated.
    fn shrink_list(&mut self, from: List, contended: &mut impl FnMut(PageId) -> bool) -> u32 {
        let batch = self.lru.isolate(&self.pages, from, SWAP_CLUSTER_MAX);
        let n = batch.len() as u32;
        for page in batch {
            let walked = if contended(page) {
                Walked::Contended
            } else if self.page_referenced(page).hits > 0 {
                Walked::Referenced
            } else {
                Walked::Old
            };
            let v = lru::verdict(from, walked, || {
                self.reclaim(page);
                self.pages.mapping(page).is_none()
            });
            self.lru.putback_from(&self.pages, page, from, v);
        }
        n
    }

    /// __anon_vma_prepare for the vma containing `addr`.
    fn anon_vma_prepare(&mut self, mm: MmId, addr: u32) {
        match anon_vma::find_mergeable_anon_vma(self.mm(mm), addr) {
            Prepare::Join { family, anon_vma } => {
                let m = self.mms.get_mut(mm.index()).and_then(Option::as_mut);
                let vma = m.and_then(|m| m.vma_mut(addr)).expect("live vma");
                let f = family_mut(&mut self.families, family);
                anon_vma::anon_vma_prepare_join(mm, vma, family, f, anon_vma);
            }
            Prepare::NewRoot => {
                let fid = FamilyId(self.family_ids.alloc());
                self.families.get_or_grow(fid.index(), || None);
                let layout = self.era.rmap;
                let vma = self.mm_mut(mm).vma_mut(addr).expect("live vma");
                let family = anon_vma::anon_vma_prepare_new(layout, mm, vma, fid);
                *self.families.get_mut(fid.index()).expect("slot grown") = Some(family);
            }
        }
    }

    /// What the compositions of [`compose`] take: the family and file
    /// tables behind the lock-free [`Unlocked`] view, and beside them the mm
    /// table, page tables and pages (disjoint borrows of one world).
    fn compose_parts(
        &mut self,
    ) -> (
        Unlocked<'_>,
        &mut SlotTable<Option<Mm>>,
        &PageTables,
        &PagePool,
    ) {
        let locks = Unlocked {
            families: &mut self.families,
            family_ids: &mut self.family_ids,
            spaces: &mut self.spaces,
            work: &mut self.work,
        };
        (locks, &mut self.mms, &self.page_tables, &self.pages)
    }

    /// fork: a child with a copy of `parent`'s vmas, linked into the same
    /// anon_vma families and files, COW-sharing every present anon page.
    pub fn fork(&mut self, parent: MmId) -> MmId {
        let child_id = self.spawn();
        let (mut locks, mms, tables, pages) = self.compose_parts();
        let pmm = mms
            .get(parent.index())
            .and_then(Option::as_ref)
            .expect("live parent");
        let ppt = tables.table(parent).expect("parent page table");
        let cpt = tables.table(child_id).expect("child page table");
        let child = compose::dup_mmap(&mut locks, pmm, child_id, ppt, cpt, pages);
        *mm_mut(mms, child_id) = child;
        // dup_mmap write-locked every parent vma (6.4+); mmap_write_unlock
        // ends them all.
        let p = mm_mut(mms, parent);
        let starts: Vec<u32> = p.vmas().iter().map(|v| v.start).collect();
        for start in starts {
            vma_lock::vma_start_write(p, start);
        }
        vma_lock::vma_end_write_all(p);
        child_id
    }

    /// exit_mmap and release of the mm slot.
    pub fn exit(&mut self, mm: MmId) {
        let mut vmas = std::mem::take(&mut self.mm_mut(mm).vmas);
        self.teardown(mm, &mut vmas);
        *self.mms.get_mut(mm.index()).expect("live mm") = None;
        self.mm_ids.free(mm.0);
    }

    /// munmap of `[start, end)`: split at both ends, then tear down the vmas
    /// inside.
    pub fn munmap(&mut self, mm: MmId, start: u32, end: u32) {
        self.split(mm, start);
        self.split(mm, end);
        let m = self.mm_mut(mm);
        let (mut inside, kept): (Vec<Vma>, Vec<Vma>) = std::mem::take(&mut m.vmas)
            .into_iter()
            .partition(|v| start <= v.start && v.end <= end);
        m.vmas = kept;
        self.teardown(mm, &mut inside);
    }

    /// unmap_vmas then free_pgtables over vmas already out of the mm.
    fn teardown(&mut self, mm: MmId, vmas: &mut [Vma]) {
        let unlink = self.era.file_unlink;
        let (mut locks, _, tables, pages) = self.compose_parts();
        let ptes = tables.table(mm).expect("mm page table");
        compose::teardown(&mut locks, unlink, vmas, ptes, pages);
    }

    /// __split_vma at `at` (mprotect of part of a vma); false if `at` is not
    /// strictly inside a vma.
    pub fn split(&mut self, mm: MmId, at: u32) -> bool {
        let (mut locks, mms, _, _) = self.compose_parts();
        compose::split(&mut locks, mm, mm_mut(mms, mm), at)
    }

    /// A page fault that first tries the per-VMA lock (6.4+,
    /// do_user_addr_fault): under the vma's lock READ if lock_vma_under_rcu
    /// succeeds and the fault needs no retry, otherwise (after counting the
    /// abort or retry) the mmap_lock path, [`touch`](Self::touch).
    pub fn touch_per_vma(
        &mut self,
        mm: MmId,
        addr: u32,
        write: bool,
    ) -> Result<(VmaLockOutcome, Fault), OutOfPages> {
        let outcome = match vma_lock::lock_vma_under_rcu(mm, self.mm(mm), addr) {
            Err(why) => VmaLockOutcome::Abort(why),
            Ok(_) => {
                let pte = pte::load(
                    self.page_tables
                        .pte(mm, addr)
                        .expect("address in the table"),
                );
                if vma_lock::needs_retry(pte) {
                    VmaLockOutcome::Retry
                } else {
                    VmaLockOutcome::Success
                }
            }
        };
        Ok((outcome, self.touch(mm, addr, write)?))
    }

    /// Merge the vmas meeting at `at` if compatible; false if not.
    pub fn merge(&mut self, mm: MmId, at: u32) -> bool {
        let (mut locks, mms, _, _) = self.compose_parts();
        compose::merge(&mut locks, mm, mm_mut(mms, mm), at)
    }

    /// The locked part a walk of `page` needs, if the page is live.
    fn locked(&self, page: PageId) -> Option<Locked<'_>> {
        Some(match self.pages.mapping(page)? {
            Mapping::Anon { family, .. } => Locked::Family(family, self.family(family)),
            Mapping::File { space } => Locked::Space(space, &self.spaces[space.index()]),
        })
    }

    /// page_referenced of `page` (raced if the page is free).
    pub fn page_referenced(&self, page: PageId) -> WalkResult {
        let Some(locked) = self.locked(page) else {
            return WalkResult {
                raced: true,
                ..WalkResult::default()
            };
        };
        walk::page_referenced(locked, &self.page_tables, &self.pages, page, |_| {})
    }

    /// Reclaim `page`: pin it (isolation), put an anon page in the swap cache
    /// (add_to_swap), try_to_unmap (swap entries for an anon page), drop it
    /// from the page cache or swap cache, unpin; the page is free afterwards
    /// unless it was still mapped.
    pub fn reclaim(&self, page: PageId) -> WalkResult {
        let Some(locked) = self.locked(page) else {
            return WalkResult {
                raced: true,
                ..WalkResult::default()
            };
        };
        if !self.pages.pin(page) {
            return WalkResult {
                raced: true,
                ..WalkResult::default()
            };
        }
        let anon = matches!(self.pages.mapping(page), Some(Mapping::Anon { .. }));
        if anon {
            self.pages.swap.add_to_swap(&self.pages, page);
        }
        let r = walk::try_to_unmap(locked, &self.page_tables, &self.pages, page, |_| {});
        match self.pages.mapping(page) {
            Some(Mapping::File { space }) => {
                let index = self.pages.index(page);
                if self.pages.mapcount(page) == 0
                    && self.page_cache[space.index()].remove(index, page)
                {
                    self.pages.unpin(page);
                }
            }
            Some(Mapping::Anon { .. }) if self.pages.mapcount(page) == 0 => {
                self.pages.swap.delete_from_swap_cache(&self.pages, page);
            }
            _ => {}
        }
        self.pages.unpin(page);
        r
    }

    /// exec of `bin` in a new task, up to the RELRO mprotect (see
    /// [`super::exec`]): map the segments, read the text, write the RW
    /// segment (the relocations COW every page of it), split off RELRO. The
    /// task stays until [`exit`](Self::exit). Panics if the address space
    /// cannot hold the segments.
    pub fn exec(&mut self, bin: Binary) -> Result<Exec, OutOfPages> {
        let mm = self.spawn();
        let text_start = self
            .mmap_file_private(mm, bin.space, 0, bin.text)
            .expect("room for the text segment");
        let rw_start = self
            .mmap_file_private(mm, bin.space, bin.text, bin.rw_pages())
            .expect("room for the RW segment");
        for addr in text_start..text_start + bin.text {
            self.touch(mm, addr, false)?;
        }
        for addr in rw_start..rw_start + bin.rw_pages() {
            self.touch(mm, addr, true)?;
        }
        let at = rw_start + bin.relro;
        let relro_split = split::split_plan(self.mm(mm), at).expect("RELRO ends inside the RW vma");
        assert!(self.split(mm, at));
        Ok(Exec {
            mm,
            text_start,
            rw_start,
            relro_split,
        })
    }

    /// Drop spare arena capacity after building, so memory figures count
    /// what the world holds, not growth slack.
    pub fn shrink_to_fit(&mut self) {
        for i in 0..self.family_ids.high_water() {
            if let Some(Some(f)) = self.families.get_mut(i as usize) {
                f.shrink_to_fit();
            }
        }
        for i in 0..self.mm_ids.high_water() {
            if let Some(Some(m)) = self.mms.get_mut(i as usize) {
                m.vmas.shrink_to_fit();
            }
        }
    }
}
