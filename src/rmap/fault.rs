//! Page faults (mm/memory.c handle_mm_fault): mmap_lock READ, then the PTE
//! under the PTL (here: a CAS on the atomic PTE). No rmap lock: a new anon
//! page only records its anon_vma (folio_add_new_anon_rmap), and a file page
//! comes from the page cache. The vma must already have its anon_vma (the
//! first-fault `__anon_vma_prepare` is its own step, see
//! [`anon_vma`](super::anon_vma)).
//!
//! Modelling choices:
//! - The zero page is not modelled: a read fault on an untouched anonymous
//!   page allocates a private page as a write fault would.
//! - Shared file PTEs are always writable (MAP_SHARED, PROT_WRITE).

use super::ids::PageId;
use super::mm::{Backing, Vma};
use super::page::{Mapping, PagePool};
use super::pte::{self, DIRTY, Pte, WRITE, YOUNG};
use super::space::PageCache;
use std::sync::atomic::{AtomicU32, Ordering};

/// What a fault did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The PTE allowed the access: the hardware set young (and dirty).
    Hit,
    /// do_anonymous_page: a new private page in the vma's anon_vma.
    NewAnon(PageId),
    /// do_shared_fault / filemap_map_pages: a page-cache page mapped;
    /// `read_in` if it had to be allocated into the cache first.
    File { page: PageId, read_in: bool },
    /// wp_page_copy: a write to a COW-shared page made a private copy in the
    /// vma's own anon_vma.
    Cow { old: PageId, new: PageId },
    /// wp_page_reuse: a write to a write-protected page only this PTE maps;
    /// the page moves to the vma's anon_vma (folio_move_anon_rmap).
    Reuse(PageId),
    /// The PTE changed under the fault (a racing walker or fault); retry.
    Retry,
}

/// The page pool is full: the engine's cue to reclaim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfPages;

/// Fault on page `addr` of `vma` (the caller holds
/// [`mmap_read_lock`](super::mm::mmap_read_lock)).
pub fn handle_mm_fault(
    vma: &Vma,
    addr: u32,
    write: bool,
    ptes: &[AtomicU32],
    pages: &PagePool,
    caches: &[PageCache],
) -> Result<Fault, OutOfPages> {
    assert!(vma.contains(addr), "{addr} outside {vma:?}");
    let slot = &ptes[addr as usize];
    let old = pte::load(slot);
    let Some(page) = old.page() else {
        return match vma.backing {
            Backing::Anon => do_anonymous_page(vma, addr, write, slot, pages),
            Backing::File { space, .. } => {
                do_shared_fault(vma, addr, write, slot, pages, &caches[space.index()])
            }
        };
    };
    // Only private (COW) mappings have write-protected PTEs.
    if write && !old.writable() && vma.is_anon() {
        return do_wp_page(vma, addr, old, page, slot, pages);
    }
    let bits = if write { YOUNG | DIRTY } else { YOUNG };
    Ok(set_bits(slot, old, bits))
}

/// The hardware setting accessed/dirty on a present PTE.
fn set_bits(slot: &AtomicU32, old: Pte, bits: u32) -> Fault {
    match slot.compare_exchange(old.0, old.0 | bits, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Fault::Hit,
        Err(_) => Fault::Retry,
    }
}

/// The vma's anon mapping for new pages.
fn anon_mapping(vma: &Vma) -> Mapping {
    let link = vma
        .anon
        .expect("anon fault before __anon_vma_prepare gave the vma an anon_vma");
    Mapping::Anon {
        family: link.family,
        anon_vma: link.anon_vma,
    }
}

/// Install `new` in an empty PTE; on a lost race undo the mapping.
fn install(slot: &AtomicU32, expect: Pte, new: Pte, page: PageId, pages: &PagePool) -> bool {
    let ok = slot
        .compare_exchange(expect.0, new.0, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if !ok {
        pages.unmap(page);
    }
    ok
}

fn do_anonymous_page(
    vma: &Vma,
    addr: u32,
    write: bool,
    slot: &AtomicU32,
    pages: &PagePool,
) -> Result<Fault, OutOfPages> {
    let page = pages
        .alloc(anon_mapping(vma), vma.pgoff_of(addr))
        .ok_or(OutOfPages)?;
    pages.map(page);
    let flags = YOUNG | WRITE | if write { DIRTY } else { 0 };
    let done = install(slot, Pte::NONE, Pte::new(page, flags), page, pages);
    pages.unpin(page);
    Ok(if done {
        Fault::NewAnon(page)
    } else {
        Fault::Retry
    })
}

fn do_shared_fault(
    vma: &Vma,
    addr: u32,
    write: bool,
    slot: &AtomicU32,
    pages: &PagePool,
    cache: &PageCache,
) -> Result<Fault, OutOfPages> {
    let Backing::File { space, .. } = vma.backing else {
        unreachable!("shared fault on an anonymous vma")
    };
    let index = vma.pgoff_of(addr);
    let (page, read_in) = match cache.get(index) {
        Some(p) => (p, false),
        None => {
            // The allocation's pin becomes the page cache's reference.
            let p = pages
                .alloc(Mapping::File { space }, index)
                .ok_or(OutOfPages)?;
            match cache.insert(index, p) {
                Ok(()) => (p, true),
                Err(winner) => {
                    pages.unpin(p);
                    (winner, false)
                }
            }
        }
    };
    pages.map(page);
    let flags = YOUNG | WRITE | if write { DIRTY } else { 0 };
    let done = install(slot, Pte::NONE, Pte::new(page, flags), page, pages);
    Ok(if done {
        Fault::File { page, read_in }
    } else {
        Fault::Retry
    })
}

/// do_wp_page on a write-protected anon PTE.
fn do_wp_page(
    vma: &Vma,
    addr: u32,
    old: Pte,
    page: PageId,
    slot: &AtomicU32,
    pages: &PagePool,
) -> Result<Fault, OutOfPages> {
    let mapping = anon_mapping(vma);
    if pages.mapcount(page) == 1 {
        // Only this PTE maps it: reuse in place; the page now belongs to this
        // vma's anon_vma, so later walks search the narrowest tree.
        pages.set_mapping(page, mapping);
        return Ok(match set_bits(slot, old, YOUNG | DIRTY | WRITE) {
            Fault::Hit => Fault::Reuse(page),
            other => other,
        });
    }
    let new = pages.alloc(mapping, vma.pgoff_of(addr)).ok_or(OutOfPages)?;
    pages.map(new);
    let done = install(slot, old, Pte::new(new, YOUNG | DIRTY | WRITE), new, pages);
    pages.unpin(new);
    if !done {
        return Ok(Fault::Retry);
    }
    pages.unmap(page);
    Ok(Fault::Cow { old: page, new })
}
