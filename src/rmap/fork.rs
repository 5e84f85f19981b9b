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
//! | the same, list layout (2.6.2x) | [`anon_vma_link`](super::anon_vma::anon_vma_link) | root WRITE, once |
//! | anon, never faulted      | [`dup_bare_vma`]                          | none |
//! | file without anon_vma    | [`dup_file_vma`] (vma_interval_tree_insert_after) | i_mmap WRITE |
//! | private file with an anon_vma | the anon steps above, then [`dup_private_file_vma`] | root WRITE, then i_mmap WRITE |
//!
//! then [`copy_pte_range`] under the PTLs (here: atomics), for vmas with an
//! anon_vma only: file mappings without one are refaulted by the child
//! (vma_needs_copy). Swap entries are copied too (swap_duplicate).

use super::anon_vma::{self, Chain};
use super::era::RmapLayout;
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
    /// File vma without an anon_vma: linked into the file's i_mmap next to
    /// the parent's.
    File { start: u32, space: SpaceId },
    /// Private file vma with an anon_vma: anon_vma_fork under the family's
    /// root ([`locks`](ForkStep::locks)), then the i_mmap insert
    /// ([`file_locks`](ForkStep::file_locks)), as dup_mmap orders them.
    PrivateFile {
        start: u32,
        space: SpaceId,
        family: FamilyId,
    },
}

impl ForkStep {
    /// The parent vma's start.
    pub fn start(&self) -> u32 {
        match *self {
            ForkStep::Anon { start, .. }
            | ForkStep::Bare { start }
            | ForkStep::File { start, .. }
            | ForkStep::PrivateFile { start, .. } => start,
        }
    }

    /// The rmap lock of this step (taken on top of [`fork_locks`]); for a
    /// PrivateFile step, that of its anon part.
    pub fn locks(&self) -> LockSet {
        match *self {
            ForkStep::Anon { family, .. } | ForkStep::PrivateFile { family, .. } => {
                LockSet::one(LockReq::write(LockTarget::AnonVmaRoot(family)))
            }
            ForkStep::Bare { .. } => LockSet::NONE,
            ForkStep::File { space, .. } => LockSet::one(LockReq::write(LockTarget::IMmap(space))),
        }
    }

    /// A PrivateFile step's second lock hold: the i_mmap insert.
    pub fn file_locks(&self) -> LockSet {
        match *self {
            ForkStep::PrivateFile { space, .. } | ForkStep::File { space, .. } => {
                LockSet::one(LockReq::write(LockTarget::IMmap(space)))
            }
            _ => LockSet::NONE,
        }
    }
}

/// The steps of forking `parent`, one per vma in address order.
pub fn fork_plan(parent: &Mm) -> Vec<ForkStep> {
    parent
        .vmas()
        .iter()
        .map(|v| match (v.backing, v.anon) {
            (Backing::File { space, .. }, Some(link)) => ForkStep::PrivateFile {
                start: v.start,
                space,
                family: link.family,
            },
            (Backing::File { space, .. }, None) => ForkStep::File {
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
        // vma_init_lock: a new vma is not write-locked.
        vm_lock_seq: 0,
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

/// The first (or only) root WRITE hold of forking `pvma`'s anon links, in the
/// family's layout: anon_vma_fork's clone (chain), or anon_vma_link (list,
/// always complete).
pub fn anon_vma_fork_first(pvma: &Vma, child: MmId, family: &mut Family) -> ForkClone {
    match family.layout() {
        RmapLayout::Chain => anon_vma_fork_clone(pvma, child, family),
        RmapLayout::List => {
            let plink = pvma.anon.expect("fork step Anon on a vma without anon_vma");
            ForkClone::Done(anon_vma::anon_vma_link(family, pvma.key(child), &plink))
        }
    }
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

/// Copy a file vma without an anon_vma and link it into the file's i_mmap
/// (i_mmap WRITE).
pub fn dup_file_vma(pvma: &Vma, child_id: MmId, child: &mut Mm, space: &mut AddressSpace) {
    dup_private_file_vma(pvma, child_id, child, space, None);
}

/// Copy a file vma with the anon links its anon steps built (None: it has
/// none) and link it into the file's i_mmap (i_mmap WRITE).
pub fn dup_private_file_vma(
    pvma: &Vma,
    child_id: MmId,
    child: &mut Mm,
    space: &mut AddressSpace,
    anon: Option<AnonLink>,
) {
    let Backing::File {
        space: sid,
        private,
        ..
    } = pvma.backing
    else {
        panic!("dup_file_vma on an anonymous vma");
    };
    let entry = space.insert(pvma.key(child_id));
    let mut vma = vm_area_dup(
        pvma,
        Backing::File {
            space: sid,
            entry,
            private,
        },
    );
    vma.anon = anon;
    child.insert(vma);
}

/// copy_pte_range for a private (COW) vma with an anon_vma: every present
/// parent PTE is write-protected in the parent and copied write-protected and
/// old into the child (__copy_present_pte: ptep_set_wrprotect, pte_wrprotect,
/// pte_mkold), and the page gains a mapping (folio_dup_file_rmap /
/// page_dup_rmap); a swap entry is copied and its slot counts one more
/// (copy_nonpresent_pte -> swap_duplicate). Returns the PTEs copied, present
/// or swap entries: each is an atomic on a line of its own (the page's
/// mapcount, the slot's swap_map count) and costs the simulator one
/// `pte_copy_ns`, as in a storm many of a child's PTEs are swap entries.
pub fn copy_pte_range(
    pvma: &Vma,
    parent: &[AtomicU32],
    child: &[AtomicU32],
    pages: &PagePool,
) -> u32 {
    if pvma.anon.is_none() {
        return 0;
    }
    let mut copied = 0;
    for addr in pvma.start..pvma.end {
        let src = &parent[addr as usize];
        let mut old = pte::load(src);
        loop {
            // Also after a lost race below: reclaim may have swapped the
            // page out meanwhile, and the child must get that entry.
            if let Some(slot) = old.swap_slot() {
                pages.swap.dup(slot);
                child[addr as usize].store(old.0, Ordering::Release);
                copied += 1;
                break;
            }
            let Some(page) = old.page() else {
                break;
            };
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
