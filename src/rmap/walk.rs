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
//! all, whether or not each child still maps the page.
//!
//! Per vma visited the caller's `on_vma` runs first: the engine's hook for the
//! kernel's cond_resched() and per-vma cost (page_vma_mapped_walk, PTL).

use super::family::Family;
use super::ids::{FamilyId, MmId, PageId, SpaceId};
use super::lock_req::{LockReq, LockTarget};
use super::page::{Mapping, PagePool};
use super::pte::{self, PageTables, Young};
use super::space::AddressSpace;

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
/// under the held lock). Returns None if the page no longer belongs to the
/// locked part.
pub fn rmap_walk(
    locked: Locked<'_>,
    pages: &PagePool,
    page: PageId,
    mut visit: impl FnMut(VmaVisit),
) -> Option<u32> {
    let index = pages.index(page);
    let mut n = 0;
    match (locked, pages.mapping(page)?) {
        (
            Locked::Family(fid, family),
            Mapping::Anon {
                family: f,
                anon_vma,
            },
        ) if f == fid => {
            family.try_anon_vma(anon_vma)?;
            for id in family.stab(anon_vma, index, index) {
                let avc = family.avc(id);
                n += 1;
                visit(VmaVisit {
                    mm: avc.mm,
                    vm_start: avc.vm_start,
                    addr: avc.vm_start + (index - avc.pgoff()),
                });
            }
        }
        (Locked::Space(sid, space), Mapping::File { space: s }) if s == sid => {
            for id in space.stab(index, index) {
                let e = space.entry(id);
                n += 1;
                visit(VmaVisit {
                    mm: e.mm,
                    vm_start: e.vm_start,
                    addr: e.vm_start + (index - e.pgoff()),
                });
            }
        }
        _ => return None,
    }
    Some(n)
}

/// folio_referenced: test-and-clear the young bit of every PTE mapping `page`.
pub fn page_referenced(
    locked: Locked<'_>,
    ptes: &PageTables,
    pages: &PagePool,
    page: PageId,
    mut on_vma: impl FnMut(&VmaVisit),
) -> WalkResult {
    let mut r = WalkResult::default();
    let visited = rmap_walk(locked, pages, page, |v| {
        on_vma(&v);
        let Some(slot) = ptes.pte(v.mm, v.addr) else {
            return;
        };
        match pte::clear_young(slot, page) {
            Young::NotMapped => {}
            Young::Old => r.mapped += 1,
            Young::WasYoung => {
                r.mapped += 1;
                r.hits += 1;
            }
        }
    });
    finish(r, visited)
}

/// try_to_unmap: clear every PTE mapping `page` and drop its mapping each
/// time. The caller holds a pin on the page (reclaim's isolation reference),
/// so the page outlives the walk even when its mapcount reaches zero.
pub fn try_to_unmap(
    locked: Locked<'_>,
    ptes: &PageTables,
    pages: &PagePool,
    page: PageId,
    mut on_vma: impl FnMut(&VmaVisit),
) -> WalkResult {
    debug_assert!(pages.pins(page) > 0, "try_to_unmap of an unpinned page");
    let mut r = WalkResult::default();
    let visited = rmap_walk(locked, pages, page, |v| {
        on_vma(&v);
        let Some(slot) = ptes.pte(v.mm, v.addr) else {
            return;
        };
        if pte::clear_if_maps(slot, page).is_some() {
            r.mapped += 1;
            r.hits += 1;
            pages.unmap(page);
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
