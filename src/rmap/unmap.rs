//! Tearing vmas down: exit (exit_mmap) and munmap (do_vmi_munmap), which the
//! kernel does in the same two passes (mm/mmap.c, mm/vma.c):
//!
//! 1. unmap_vmas / zap_pte_range: clear every PTE, drop each page's mapping
//!    (the last reference frees it) and each swap entry's hold on its slot
//!    (free_swap_and_cache). PTLs only: here atomics, no step lock.
//! 2. free_pgtables: per vma, unlink it from the reverse map:
//!    [`unlink_anon_vmas`](super::anon_vma::unlink_anon_vmas) under its
//!    family's root WRITE (once for all its AVCs), then for a file vma
//!    (a private one has both) unlink_file_vma_batch under the file's i_mmap
//!    WRITE, one lock hold per batch of up to [`FILE_BATCH`] vmas of one file
//!    (2024+), or one hold per vma before (`world.file_unlink = "single"`:
//!    unlink_file_vma).
//!
//! Held across both passes: the mm's mmap_lock WRITE
//! ([`mmap_write_lock`](super::mm::mmap_write_lock)).

use super::era::FileUnlink;
use super::ids::{FamilyId, SpaceId};
use super::lock_req::{LockReq, LockSet, LockTarget};
use super::mm::{Backing, Vma};
use super::page::PagePool;
use super::space::AddressSpace;
use std::sync::atomic::{AtomicU32, Ordering};

/// unlink_file_vma_batch's batch size (`struct unlink_vma_file_batch` holds
/// `vmas[8]`: mm/vma.h, mm/internal.h when it was added in 2024).
pub const FILE_BATCH: usize = 8;

/// zap_pte_range over a whole vma: clear each present PTE and drop its page's
/// mapping; clear each swap entry and drop its slot's count
/// (free_swap_and_cache). Returns the PTEs cleared, present or swap entries
/// (each costs the simulator one `pte_copy_ns`, as [`super::fork::copy_pte_range`]'s).
pub fn zap_vma(vma: &Vma, ptes: &[AtomicU32], pages: &PagePool) -> u32 {
    let mut zapped = 0;
    for slot in &ptes[vma.start as usize..vma.end as usize] {
        let old = super::pte::Pte(slot.swap(0, Ordering::AcqRel));
        if let Some(page) = old.page() {
            pages.unmap(page);
            zapped += 1;
        } else if let Some(swap) = old.swap_slot() {
            pages.swap.put(pages, swap);
            zapped += 1;
        }
    }
    zapped
}

/// One free_pgtables step: which vmas it unlinks (by index into the slice
/// given to [`free_pgtables_plan`]) under which lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnlinkStep {
    /// unlink_anon_vmas of one vma.
    Anon { vma: usize, family: FamilyId },
    /// unlink_file_vma_batch: up to [`FILE_BATCH`] vmas of one file.
    File { vmas: Vec<usize>, space: SpaceId },
}

impl UnlinkStep {
    pub fn locks(&self) -> LockSet {
        match *self {
            UnlinkStep::Anon { family, .. } => {
                LockSet::one(LockReq::write(LockTarget::AnonVmaRoot(family)))
            }
            UnlinkStep::File { space, .. } => {
                LockSet::one(LockReq::write(LockTarget::IMmap(space)))
            }
        }
    }
}

/// The free_pgtables steps for `vmas` (in address order), in the order the
/// kernel takes their locks: each anon vma's unlink as it is reached; file
/// vmas gathered into a batch that is flushed when a vma of another file
/// arrives, when it holds the era's batch size ([`FileUnlink::batch_size`]:
/// [`FILE_BATCH`] since 2024, 1 before), or at the end
/// (unlink_file_vma_batch_add / _final). Anon vmas never faulted have nothing
/// to unlink, and do not break a batch. A private file vma's anon unlink
/// comes before its file unlink, as free_pgtables calls unlink_anon_vmas
/// first.
pub fn free_pgtables_plan(unlink: FileUnlink, vmas: &[Vma]) -> Vec<UnlinkStep> {
    let most = unlink.batch_size();
    let mut steps = Vec::new();
    let mut batch: Option<(SpaceId, Vec<usize>)> = None;
    for (i, v) in vmas.iter().enumerate() {
        if let Some(link) = v.anon {
            steps.push(UnlinkStep::Anon {
                vma: i,
                family: link.family,
            });
        }
        if let Backing::File { space, .. } = v.backing {
            if let Some((s, b)) = batch.take_if(|(s, b)| *s != space || b.len() == most) {
                steps.push(UnlinkStep::File { vmas: b, space: s });
            }
            batch.get_or_insert_with(|| (space, Vec::new())).1.push(i);
        }
    }
    if let Some((space, vmas)) = batch {
        steps.push(UnlinkStep::File { vmas, space });
    }
    steps
}

/// A File step (i_mmap WRITE): unlink_file_vma for each vma of the batch.
pub fn unlink_file_step(vmas: &[&Vma], space: &mut AddressSpace) {
    for v in vmas {
        let Backing::File { entry, .. } = v.backing else {
            panic!("unlink_file_step on an anonymous vma");
        };
        space.remove(entry);
    }
}
