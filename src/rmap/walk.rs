//! Reverse-map walks (mm/rmap.c rmap_walk_anon / rmap_walk_file) and the two
//! users the project studies: page_referenced (folio_referenced) and
//! try_to_unmap.
//!
//! Locking: the page's family root READ (anon) or the file's i_mmap READ
//! (file); [`walk_lock`] says which. PTEs are read and cleared without any mm
//! lock (atomics, see [`super::pte`]). The caller reads the page's
//! mapping, takes the lock it names, and passes the guarded part; the walk
//! re-checks the mapping under the lock (as folio_lock_anon_vma_read does) and
//! reports [`WalkResult::raced`] if the page moved or went.
//!
//! An anon walk searches the page's OWN anon_vma's tree for `[index, index]`:
//! every vma linked to that anon_vma, i.e. the vma that faulted the page and
//! every descendant forked since. A page COW-shared by an AIM7 ancestor lives in
//! the root anon_vma, whose tree holds every child's vma: the walk visits them
//! all, whether or not each child still maps the page. In the 2.6.2x list
//! layout ([`RmapLayout::List`]) there is no tree search: page_referenced_anon
//! and try_to_unmap_anon iterate the anon_vma's whole vma list, and a vma
//! whose range does not hold the page (vma_address fails) still costs its
//! visit; here that is every AVC of the anon_vma, in pgoff order and, among
//! equal ranges, in link (fork) order as on the kernel's list.
//!
//! Per vma visited that holds the page's address, the caller's `on_vma` runs
//! first (the engine's hook for the kernel's cond_resched()), then the visit
//! does what page_vma_mapped_walk does: descends the mm's page table (pgd,
//! pud, pmd: dependent loads, [`PageTables::walk`]), takes the PTE page's lock
//! and reads the PTE; then folio_referenced_one test-and-clears its young bit,
//! or try_to_unmap_one clears it (a swap entry when the page is in the swap
//! cache) and drops the mapcount.
//!
//! Early stops, as rmap_walk_control's `done` (both kernels): page_referenced
//! stops once it has found as many mappings as the page's mapcount at the
//! start (folio_referenced_one decrements `pra->mapcount` and ends the walk at
//! zero; 2.6.2x page_referenced_anon breaks the list loop the same way);
//! try_to_unmap stops once the page is no longer mapped (folio_not_mapped).
//! [`WalkResult::vmas_visited`] counts the vmas up to the stop.

use super::era::RmapLayout;
use super::family::Family;
use super::ids::{AvcId, FamilyId, MmId, PageId, SpaceId};
use super::lock_req::{LockReq, LockTarget};
use super::page::{Mapping, PagePool};
use super::pte::{self, PageTables, Pte, Young};
use super::space::AddressSpace;
use std::ops::ControlFlow;

/// One vma a walk visits: enough to find its PTE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct VmaVisit {
    pub mm: MmId,
    pub vm_start: u32,
    /// The page's address in this vma (vma_address).
    pub addr: u32,
}

/// What one walk did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkResult {
    /// vmas the tree search returned (the walk's cost).
    pub vmas_visited: u32,
    /// Of those, PTEs found mapping the page.
    pub mapped: u32,
    /// page_referenced: PTEs whose young bit was set (now cleared).
    /// try_to_unmap: PTEs cleared.
    pub hits: u32,
    /// The page was freed or re-homed before the lock was taken: nothing done.
    pub raced: bool,
}

/// The lock a walk of `page` needs (READ), from its current mapping; None if
/// the page is free.
pub fn walk_lock(pages: &PagePool, page: PageId) -> Option<LockReq> {
    Some(LockReq::read(match pages.mapping(page)? {
        Mapping::Anon { family, .. } => LockTarget::AnonVmaRoot(family),
        Mapping::File { space } => LockTarget::IMmap(space),
    }))
}

/// The part a walk holds the lock of.
#[derive(Clone, Copy)]
pub enum Locked<'a> {
    Family(FamilyId, &'a Family),
    Space(SpaceId, &'a AddressSpace),
}

/// rmap_walk: call `visit` for every vma that may map `page` (the tree search
/// under the held lock; the whole list in the list layout) until it breaks.
/// Returns the vmas visited (list vmas not holding the page included), or
/// None if the page no longer belongs to the locked part.
pub fn rmap_walk(
    locked: Locked<'_>,
    pages: &PagePool,
    page: PageId,
    mut visit: impl FnMut(VmaVisit) -> ControlFlow<()>,
) -> Option<u32> {
    let index = pages.index(page);
    let mut n = 0;
    // One vma (start, pgoff range): visit it if it holds the page.
    let mut one = |mm: MmId, vm_start: u32, pgoff: u32, last: u32| {
        n += 1;
        if !(pgoff..=last).contains(&index) {
            return ControlFlow::Continue(());
        }
        visit(VmaVisit {
            mm,
            vm_start,
            addr: vm_start + (index - pgoff),
        })
    };
    match (locked, pages.mapping(page)?) {
        (
            Locked::Family(fid, family),
            Mapping::Anon {
                family: f,
                anon_vma,
            },
        ) if f == fid => {
            let av = family.try_anon_vma(anon_vma)?;
            let mut avc = |id: u32| {
                let a = family.avc(AvcId(id));
                one(a.mm, a.vm_start, a.pgoff(), a.last_pgoff())
            };
            // Either walk stops at the first Break (the early stops).
            let _ = match family.layout() {
                RmapLayout::Chain => family
                    .stab(anon_vma, index, index)
                    .try_for_each(|a| avc(a.0)),
                RmapLayout::List => av.tree.iter(&family.avcs).try_for_each(avc),
            };
        }
        (Locked::Space(sid, space), Mapping::File { space: s }) if s == sid => {
            let _ = space.stab(index, index).try_for_each(|id| {
                let e = space.entry(id);
                one(e.mm, e.vm_start, e.pgoff(), e.last_pgoff())
            });
        }
        _ => return None,
    }
    Some(n)
}

/// folio_referenced: test-and-clear the young bit of every PTE mapping `page`,
/// stopping once the page's mapcount (read at the start) mappings were found.
pub fn page_referenced(
    locked: Locked<'_>,
    ptes: &PageTables,
    pages: &PagePool,
    page: PageId,
    mut on_vma: impl FnMut(&VmaVisit),
) -> WalkResult {
    let mut r = WalkResult::default();
    let mut left = pages.mapcount(page);
    let visited = rmap_walk(locked, pages, page, |v| {
        on_vma(&v);
        let Some(w) = ptes.walk(v.mm, v.addr) else {
            return ControlFlow::Continue(());
        };
        let _ptl = w.ptl.lock();
        match pte::clear_young(w.pte, page) {
            Young::NotMapped => return ControlFlow::Continue(()),
            Young::Old => {}
            Young::WasYoung => r.hits += 1,
        }
        r.mapped += 1;
        left = left.saturating_sub(1);
        if left == 0 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    finish(r, visited)
}

/// try_to_unmap: clear every PTE mapping `page` and drop its mapping each
/// time, stopping once it is mapped nowhere. A page in the swap cache leaves
/// a swap entry for its slot in each PTE instead of an empty one. The caller
/// holds a pin on the page (reclaim's isolation reference), so the page
/// outlives the walk even when its mapcount reaches zero.
pub fn try_to_unmap(
    locked: Locked<'_>,
    ptes: &PageTables,
    pages: &PagePool,
    page: PageId,
    mut on_vma: impl FnMut(&VmaVisit),
) -> WalkResult {
    debug_assert!(pages.pins(page) > 0, "try_to_unmap of an unpinned page");
    let mut r = WalkResult::default();
    let swap = pages.swap_slot(page);
    let leave = swap.map_or(Pte::NONE, Pte::swap);
    let visited = rmap_walk(locked, pages, page, |v| {
        on_vma(&v);
        let Some(w) = ptes.walk(v.mm, v.addr) else {
            return ControlFlow::Continue(());
        };
        let _ptl = w.ptl.lock();
        // try_to_unmap_one takes the entry's swap count (swap_duplicate)
        // before set_pte_at writes it, under the PTL that zap_pte_range
        // also takes: no zap or fork can meet an entry not yet counted and
        // put the slot's last count (freeing it) while entries still name it.
        // A PTE that maps the page only after this load (a fork's child
        // copy) is left mapped, as if the walk had passed it first.
        if pte::load(w.pte).maps(page) {
            if let Some(slot) = swap {
                pages.swap.dup(slot);
            }
            if pte::replace_if_maps(w.pte, page, leave).is_some() {
                r.mapped += 1;
                r.hits += 1;
                pages.unmap(page);
            } else if let Some(slot) = swap {
                // The PTE changed meanwhile: no entry written.
                pages.swap.undup(slot);
            }
        }
        if pages.mapcount(page) == 0 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    finish(r, visited)
}

fn finish(mut r: WalkResult, visited: Option<u32>) -> WalkResult {
    match visited {
        Some(n) => r.vmas_visited = n,
        None => r.raced = true,
    }
    r
}
