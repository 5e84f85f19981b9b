//! fork of a whole mm (kernel/fork.c dup_mmap), decomposed into the steps the
//! kernel takes under one rmap lock each.
//!
//! Held across the whole operation: the parent's mmap_lock WRITE, then the
//! child's (dup_mmap nests them; nobody else can see the child yet). Then, per
//! parent vma in address order:
//!
//! | vma                      | step                                      | lock |
//! |--------------------------|-------------------------------------------|------|
//! | anon, has an anon_vma    | [`anon_vma_clone`](super::anon_vma::anon_vma_clone), then, unless it reused one, [`anon_vma_fork_own`](super::anon_vma::anon_vma_fork_own) | root WRITE, twice |
//! | anon, never faulted      | [`dup_bare_vma`]                          | none |
//! | shared file              | [`dup_file_vma`] (vma_interval_tree_insert_after) | i_mmap WRITE |
//!
//! then [`copy_pte_range`] under the PTLs (here: atomics), for anon vmas only:
//! shared file mappings without an anon_vma are refaulted by the child
//! (vma_needs_copy).

use super::anon_vma::{self, Chain};
use super::family::Family;
use super::ids::{FamilyId, MmId, SpaceId};
use super::lock_req::{LockReq, LockSet, LockTarget};
use super::mm::{AnonLink, Backing, Mm, Vma};
use super::page::PagePool;
use super::pte::{self, DIRTY, Pte, WRITE};
use super::space::AddressSpace;
use std::sync::atomic::{AtomicU32, Ordering};

/// The mmap_locks held across a fork, in the order to take them.
pub fn fork_locks(parent: MmId, child: MmId) -> [LockReq; 2] {
    [
        LockReq::write(LockTarget::MmapLock(parent)),
        LockReq::write(LockTarget::MmapLock(child)),
    ]
}

/// What the fork does for one parent vma.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForkStep {
    /// Anon vma with an anon_vma: clone its chain under the family's root.
    Anon { start: u32, family: FamilyId },
    /// Anon vma never faulted: copied with no rmap work.
    Bare { start: u32 },
    /// Shared file vma: linked into the file's i_mmap next to the parent's.
    File { start: u32, space: SpaceId },
}

impl ForkStep {
    /// The parent vma's start.
    pub fn start(&self) -> u32 {
        match *self {
            ForkStep::Anon { start, .. }
            | ForkStep::Bare { start }
            | ForkStep::File { start, .. } => start,
        }
    }

    /// The rmap lock of this step (taken on top of [`fork_locks`]).
    pub fn locks(&self) -> LockSet {
        match *self {
            ForkStep::Anon { family, .. } => {
                LockSet::one(LockReq::write(LockTarget::AnonVmaRoot(family)))
            }
            ForkStep::Bare { .. } => LockSet::NONE,
            ForkStep::File { space, .. } => LockSet::one(LockReq::write(LockTarget::IMmap(space))),
        }
    }
}

/// The steps of forking `parent`, one per vma in address order.
pub fn fork_plan(parent: &Mm) -> Vec<ForkStep> {
    parent
        .vmas()
        .iter()
        .map(|v| match (v.backing, v.anon) {
            (Backing::File { space, .. }, _) => ForkStep::File {
                start: v.start,
                space,
            },
            (Backing::Anon, Some(link)) => ForkStep::Anon {
                start: v.start,
                family: link.family,
            },
            (Backing::Anon, None) => ForkStep::Bare { start: v.start },
        })
        .collect()
}

/// The child's copy of a vma, before its rmap links (vm_area_dup).
fn vm_area_dup(pvma: &Vma, backing: Backing) -> Vma {
    Vma {
        backing,
        anon: None,
        ..pvma.clone()
    }
}

/// Outcome of the first (clone) half of anon_vma_fork.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForkClone {
    /// The clone reused an anon_vma: the child vma is complete.
    Done(AnonLink),
    /// No reusable anon_vma: [`anon_vma_fork_own`] must link a new one.
    NeedsOwn(Chain),
}

/// anon_vma_fork, first half (root WRITE): clone the parent vma's chain.
pub fn anon_vma_fork_clone(pvma: &Vma, child: MmId, family: &mut Family) -> ForkClone {
    let plink = pvma.anon.expect("fork step Anon on a vma without anon_vma");
    let (chain, reused) = anon_vma::anon_vma_clone(family, pvma.key(child), &plink, None);
    match reused {
        Some(anon_vma) => ForkClone::Done(AnonLink {
            family: plink.family,
            anon_vma,
            chain: chain.head,
            chain_len: chain.len,
        }),
        None => ForkClone::NeedsOwn(chain),
    }
}

/// anon_vma_fork, second half (root WRITE again): the child's own anon_vma.
pub fn anon_vma_fork_own(pvma: &Vma, child: MmId, family: &mut Family, chain: Chain) -> AnonLink {
    let plink = pvma.anon.expect("fork step Anon on a vma without anon_vma");
    anon_vma::anon_vma_fork_own(family, plink.family, pvma.key(child), plink.anon_vma, chain)
}

/// Insert the child's anon vma once its link is complete (child mmap_lock).
pub fn insert_anon_vma(pvma: &Vma, child: &mut Mm, link: AnonLink) {
    let mut vma = vm_area_dup(pvma, Backing::Anon);
    vma.anon = Some(link);
    child.insert(vma);
}

/// Copy a never-faulted anon vma (no lock beyond the mmap_locks).
pub fn dup_bare_vma(pvma: &Vma, child: &mut Mm) {
    child.insert(vm_area_dup(pvma, Backing::Anon));
}

/// Copy a shared file vma and link it into the file's i_mmap (i_mmap WRITE).
pub fn dup_file_vma(pvma: &Vma, child_id: MmId, child: &mut Mm, space: &mut AddressSpace) {
    let Backing::File { space: sid, .. } = pvma.backing else {
        panic!("dup_file_vma on an anonymous vma");
    };
    let entry = space.insert(pvma.key(child_id));
    child.insert(vm_area_dup(pvma, Backing::File { space: sid, entry }));
}

/// copy_pte_range for a private (COW) vma: every present parent PTE is
/// write-protected in the parent and copied write-protected and old into the
/// child (__copy_present_pte: ptep_set_wrprotect, pte_wrprotect, pte_mkold),
/// and the page gains a mapping (folio_dup_file_rmap / page_dup_rmap).
/// Returns the PTEs copied.
pub fn copy_pte_range(
    pvma: &Vma,
    parent: &[AtomicU32],
    child: &[AtomicU32],
    pages: &PagePool,
) -> u32 {
    if !pvma.is_anon() || pvma.anon.is_none() {
        return 0;
    }
    let mut copied = 0;
    for addr in pvma.start..pvma.end {
        let src = &parent[addr as usize];
        let mut old = pte::load(src);
        while let Some(page) = old.page() {
            // Take the child's mapping first: the page cannot be freed between
            // the parent's PTE going read-only and the child's appearing. Take
            // it only while the page is live (folio_try_get): a concurrent
            // try_to_unmap may have cleared the PTE and dropped the page's
            // last reference since the load (the kernel's PTL excludes that).
            // If the page was freed and reused meanwhile, the CAS below fails
            // on the changed PTE and the reference is given back.
            if !pages.try_map(page) {
                old = pte::load(src);
                continue;
            }
            let ro = old.0 & !WRITE;
            match src.compare_exchange(old.0, ro, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    let flags = old.0 & DIRTY;
                    child[addr as usize].store(Pte::new(page, flags).0, Ordering::Release);
                    copied += 1;
                    break;
                }
                Err(now) => {
                    // A walker aged or unmapped it meanwhile: retry on the new value.
                    pages.unmap(page);
                    old = Pte(now);
                }
            }
        }
    }
    copied
}
