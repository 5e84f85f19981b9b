//! Page faults (mm/memory.c handle_mm_fault): mmap_lock READ, then the PTE
//! under the PTL (here: a CAS on the atomic PTE). No rmap lock: a new anon
//! page only records its anon_vma (folio_add_new_anon_rmap), and a file page
//! comes from the page cache. The vma must already have its anon_vma (the
//! first-fault `__anon_vma_prepare` is its own step, see
//! [`anon_vma`](super::anon_vma)).
//!
//! | PTE / vma                      | kernel                  | result |
//! |--------------------------------|-------------------------|--------|
//! | none, anon                     | do_anonymous_page       | [`Fault::NewAnon`] |
//! | none, shared file              | do_shared_fault         | [`Fault::File`], writable |
//! | none, private file, read       | do_read_fault           | [`Fault::File`], read-only |
//! | none, private file, write      | do_cow_fault            | [`Fault::CowFile`] (a copy of the page-cache page) |
//! | swap entry                     | do_swap_page            | [`Fault::SwapIn`] (see [`super::swap`]) |
//! | read-only, write, private      | do_wp_page: wp_page_reuse or wp_page_copy | [`Fault::Reuse`] / [`Fault::Cow`] |
//!
//! do_swap_page maps the page writable only for a write to an exclusive one
//! (the faulter held the slot's only entry and read it in); a write to a
//! shared one maps it read-only and then COWs it at once (do_swap_page calls
//! do_wp_page), and wp_page_reuse never reuses a page still in the swap cache
//! (other entries will map it) or a page-cache page.
//!
//! Modelling choices:
//! - The zero page is not modelled: a read fault on an untouched anonymous
//!   page allocates a private page as a write fault would.
//! - Shared file PTEs are always writable (MAP_SHARED, PROT_WRITE); private
//!   file vmas are writable (a data segment), so a write COWs.
//! - A private file vma's write fault needs its anon_vma first, like an anon
//!   vma's first fault (the caller runs `__anon_vma_prepare`).

use super::family::Family;
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
    /// do_cow_fault: a write to an unmapped page of a private file vma made
    /// an anon copy `new` of the page-cache page `file` (`read_in` if that
    /// had to be read into the cache first).
    CowFile {
        file: PageId,
        read_in: bool,
        new: PageId,
    },
    /// do_swap_page: a swap entry mapped back; `cache_hit` if another
    /// faulter had read the page into the swap cache already; `cow` the
    /// private copy a write to a shared one made at once.
    SwapIn {
        page: PageId,
        cache_hit: bool,
        cow: Option<PageId>,
    },
    /// The PTE changed under the fault (a racing walker or fault); retry.
    Retry,
}

/// The page pool is full: the engine's cue to reclaim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfPages;

/// Fault on page `addr` of `vma` (the caller holds
/// [`mmap_read_lock`](super::mm::mmap_read_lock), or the vma's lock).
/// `added` gets every page the fault allocated and kept, once, whether it
/// then maps it or must [`Retry`](Fault::Retry) (a page read into the page
/// cache or swap cache stays there): the kernel's folio_add_lru, for the
/// caller's LRU. A page-cache or swap-cache page is handed over when it is
/// published, an anon page once its PTE is set.
pub fn handle_mm_fault(
    vma: &Vma,
    addr: u32,
    write: bool,
    ptes: &[AtomicU32],
    pages: &PagePool,
    caches: &[PageCache],
    added: &mut dyn FnMut(PageId),
) -> Result<Fault, OutOfPages> {
    assert!(vma.contains(addr), "{addr} outside {vma:?}");
    let slot = &ptes[addr as usize];
    let mut at = At {
        vma,
        addr,
        slot,
        pages,
        added,
    };
    let old = pte::load(slot);
    if let Some(swap) = old.swap_slot() {
        return do_swap_page(&mut at, write, old, swap);
    }
    let Some(page) = old.page() else {
        return match vma.backing {
            Backing::Anon => do_anonymous_page(&mut at, write),
            Backing::File { private, .. } if private && write => do_cow_fault(&mut at, caches),
            Backing::File { .. } => do_file_fault(&mut at, write, caches),
        };
    };
    // Only private (COW) mappings have write-protected PTEs.
    if write && !old.writable() && vma.is_private() {
        return do_wp_page(&mut at, old, page);
    }
    let bits = if write { YOUNG | DIRTY } else { YOUNG };
    Ok(set_bits(slot, old, bits))
}

/// What every fault handler works on.
struct At<'a> {
    vma: &'a Vma,
    addr: u32,
    /// The faulting PTE.
    slot: &'a AtomicU32,
    pages: &'a PagePool,
    /// folio_add_lru: see [`handle_mm_fault`].
    added: &'a mut dyn FnMut(PageId),
}

impl At<'_> {
    /// The page's pgoff in the vma.
    fn pgoff(&self) -> u32 {
        self.vma.pgoff_of(self.addr)
    }

    /// Install `new` in place of `expect`; on a lost race undo the mapping.
    fn install(&self, expect: Pte, new: Pte, page: PageId) -> bool {
        let ok = self
            .slot
            .compare_exchange(expect.0, new.0, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if !ok {
            self.pages.unmap(page);
        }
        ok
    }

    /// A new private page for the vma, mapped once, installed in place of
    /// `expect` with `flags` (a writable PTE: nobody else can see it until
    /// it joins the LRU); the caller's allocation pin dropped. Some(page) if
    /// installed, None if the PTE changed (the page is freed again).
    fn new_anon(&mut self, expect: Pte, flags: u32) -> Result<Option<PageId>, OutOfPages> {
        let page = self
            .pages
            .alloc(anon_mapping(self.vma), self.pgoff())
            .ok_or(OutOfPages)?;
        self.pages.map(page);
        let done = self.install(expect, Pte::new(page, flags), page);
        if done {
            (self.added)(page);
        }
        self.pages.unpin(page);
        Ok(done.then_some(page))
    }
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

fn do_anonymous_page(at: &mut At<'_>, write: bool) -> Result<Fault, OutOfPages> {
    let flags = YOUNG | WRITE | if write { DIRTY } else { 0 };
    Ok(match at.new_anon(Pte::NONE, flags)? {
        Some(page) => Fault::NewAnon(page),
        None => Fault::Retry,
    })
}

/// The page-cache page of a file vma's page, read in if missing (and then
/// handed to `added`), and whether it was; the page cache holds a reference
/// on it.
fn file_page(at: &mut At<'_>, caches: &[PageCache]) -> Result<(PageId, bool), OutOfPages> {
    let Backing::File { space, .. } = at.vma.backing else {
        unreachable!("file fault on an anonymous vma")
    };
    let cache = &caches[space.index()];
    let index = at.pgoff();
    if let Some(p) = cache.get(index) {
        return Ok((p, false));
    }
    // The allocation's pin becomes the page cache's reference.
    let p = at
        .pages
        .alloc(Mapping::File { space }, index)
        .ok_or(OutOfPages)?;
    match cache.insert(index, p) {
        Ok(()) => {
            (at.added)(p);
            Ok((p, true))
        }
        Err(winner) => {
            at.pages.unpin(p);
            Ok((winner, false))
        }
    }
}

/// do_shared_fault, or do_read_fault of a private file vma (read-only PTE).
fn do_file_fault(at: &mut At<'_>, write: bool, caches: &[PageCache]) -> Result<Fault, OutOfPages> {
    let (page, read_in) = file_page(at, caches)?;
    at.pages.map(page);
    let flags = if at.vma.is_private() {
        YOUNG
    } else {
        YOUNG | WRITE | if write { DIRTY } else { 0 }
    };
    Ok(if at.install(Pte::NONE, Pte::new(page, flags), page) {
        Fault::File { page, read_in }
    } else {
        Fault::Retry
    })
}

/// do_cow_fault: a write to an unmapped page of a private file vma copies
/// the page-cache page into a new anon page of the vma's anon_vma.
fn do_cow_fault(at: &mut At<'_>, caches: &[PageCache]) -> Result<Fault, OutOfPages> {
    let (file, read_in) = file_page(at, caches)?;
    Ok(match at.new_anon(Pte::NONE, YOUNG | DIRTY | WRITE)? {
        Some(new) => Fault::CowFile { file, read_in, new },
        None => Fault::Retry,
    })
}

/// do_swap_page on a swap entry for `swap` (see [`super::swap`]).
fn do_swap_page(at: &mut At<'_>, write: bool, old: Pte, swap: u32) -> Result<Fault, OutOfPages> {
    let link = at.vma.anon.expect("a swap entry in a vma without anon_vma");
    let pages = at.pages;
    let (page, cache_hit) = match pages.swap.lookup(swap) {
        Some(p) => {
            // swap_cache_get_folio: folio_try_get, then the folio must still
            // be this entry's (reclaim may have dropped it from the cache,
            // and it been freed and reused, since the lookup).
            if !pages.pin(p) {
                return Ok(Fault::Retry);
            }
            if pages.swap_slot(p) != Some(swap) {
                pages.unpin(p);
                return Ok(Fault::Retry);
            }
            (p, true)
        }
        None => {
            // __folio_set_anon: exclusive to this vma, or the family's root.
            let exclusive = pages.swap.count(swap) == 1;
            let anon_vma = if exclusive {
                link.anon_vma
            } else {
                Family::ROOT
            };
            let mapping = Mapping::Anon {
                family: link.family,
                anon_vma,
            };
            let Some(p) = pages.swap.read_in(pages, swap, mapping, at.pgoff())? else {
                // Another faulter's page is cached now: retry to map it.
                return Ok(Fault::Retry);
            };
            // The swap cache holds it now, mapped or not.
            (at.added)(p);
            (p, false)
        }
    };
    let exclusive = !cache_hit && pages.swap.count(swap) == 1;
    let flags = YOUNG | if exclusive && write { WRITE | DIRTY } else { 0 };
    pages.map(page);
    let new = Pte::new(page, flags);
    if !at.install(old, new, page) {
        pages.unpin(page);
        return Ok(Fault::Retry);
    }
    pages.swap.put(pages, swap);
    pages.unpin(page);
    let cow = match write && !exclusive {
        true => match do_wp_page(at, new, page)? {
            Fault::Cow { new, .. } => Some(new),
            _ => None,
        },
        false => None,
    };
    Ok(Fault::SwapIn {
        page,
        cache_hit,
        cow,
    })
}

/// do_wp_page on a write-protected PTE of a private vma.
fn do_wp_page(at: &mut At<'_>, old: Pte, page: PageId) -> Result<Fault, OutOfPages> {
    let pages = at.pages;
    let reusable = matches!(pages.mapping(page), Some(Mapping::Anon { .. }))
        && pages.mapcount(page) == 1
        && pages.swap_slot(page).is_none();
    if reusable {
        // Only this PTE maps it: reuse in place; the page now belongs to this
        // vma's anon_vma, so later walks search the narrowest tree.
        pages.set_mapping(page, anon_mapping(at.vma));
        return Ok(match set_bits(at.slot, old, YOUNG | DIRTY | WRITE) {
            Fault::Hit => Fault::Reuse(page),
            other => other,
        });
    }
    let Some(new) = at.new_anon(old, YOUNG | DIRTY | WRITE)? else {
        return Ok(Fault::Retry);
    };
    pages.unmap(page);
    Ok(Fault::Cow { old: page, new })
}
