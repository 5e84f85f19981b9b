//! mprotect of part of a vma: __split_vma, and the merge that undoes it when
//! the protections match again (vma_merge / commit_merge, mm/vma.c v6.x).
//!
//! Split, with the mm's mmap_lock WRITE held throughout
//! ([`mmap_write_lock`](super::mm::mmap_write_lock)):
//!
//! 1. [`split_clone`]: the new (upper) vma gets a copy of the old one's AVC
//!    chain (anon_vma_clone, root WRITE). Its AVCs are keyed by the new range.
//! 2. [`split_commit`]: vma_prepare takes i_mmap WRITE (file vma) then root
//!    WRITE (vma with an anon_vma), the old vma's AVCs and i_mmap entry are
//!    taken out of their trees, shrunk, and put back (the kernel's
//!    anon_vma_interval_tree_pre/post_update_vma), and the new vma enters i_mmap
//!    and the mm.
//!
//! Between the two steps both vmas' AVCs cover the upper range, so a walk then
//! visits the mm twice; the kernel has the same window.
//!
//! Merge of two adjacent compatible vmas (same anon_vma or none, same file,
//! contiguous pgoffs), mmap_lock WRITE throughout:
//!
//! 1. [`merge_commit`] (i_mmap WRITE then root WRITE): the next vma leaves the
//!    mm and i_mmap, the previous one grows over its range and is re-keyed.
//! 2. anon_vma_merge: [`unlink_anon_vmas`](super::anon_vma::unlink_anon_vmas)
//!    of the removed vma (root WRITE again).

use super::anon_vma::anon_vma_clone;
use super::family::{Family, VmaKey};
use super::ids::{FamilyId, MmId, SpaceId};
use super::lock_req::{LockReq, LockSet, LockTarget};
use super::mm::{AnonLink, Backing, Mm, Vma};
use super::space::AddressSpace;

/// The rmap locks of one vma, in lock order: i_mmap (file) then root (anon).
fn vma_prepare_locks(vma: &Vma) -> LockSet {
    let mut set = LockSet::NONE;
    if let Backing::File { space, .. } = vma.backing {
        set = set.with(LockReq::write(LockTarget::IMmap(space)));
    }
    if let Some(link) = vma.anon {
        set = set.with(LockReq::write(LockTarget::AnonVmaRoot(link.family)));
    }
    set
}

/// The split of the vma containing `addr` at `addr`: what each step locks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitPlan {
    /// Start of the vma being split.
    pub start: u32,
    /// The split point: the new vma is `[at, end)`.
    pub at: u32,
    /// [`split_clone`]'s lock: the root WRITE if the vma has an anon_vma.
    pub clone: LockSet,
    /// [`split_commit`]'s locks (vma_prepare).
    pub commit: LockSet,
    pub family: Option<FamilyId>,
    pub space: Option<SpaceId>,
}

/// Plan a split at `at`; None unless `at` falls strictly inside a vma.
pub fn split_plan(mm: &Mm, at: u32) -> Option<SplitPlan> {
    let vma = mm.vma(at)?;
    if vma.start == at {
        return None;
    }
    let family = vma.anon.map(|l| l.family);
    let clone = family.map_or(LockSet::NONE, |f| {
        LockSet::one(LockReq::write(LockTarget::AnonVmaRoot(f)))
    });
    let space = match vma.backing {
        Backing::File { space, .. } => Some(space),
        Backing::Anon => None,
    };
    Some(SplitPlan {
        start: vma.start,
        at,
        clone,
        commit: vma_prepare_locks(vma),
        family,
        space,
    })
}

/// The new vma between the two steps: its range and cloned anon links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingSplit {
    pub start: u32,
    pub end: u32,
    pub pgoff: u32,
    pub anon: Option<AnonLink>,
}

impl PendingSplit {
    fn key(&self, mm: MmId) -> VmaKey {
        VmaKey::new(mm, self.start, self.end, self.pgoff)
    }
}

/// Step 1 (root WRITE when `family` is given): clone the chain for `[at, end)`.
pub fn split_clone(
    mm_id: MmId,
    mm: &Mm,
    plan: &SplitPlan,
    family: Option<&mut Family>,
) -> PendingSplit {
    let vma = mm.vma(plan.start).expect("split plan is stale");
    let mut new = PendingSplit {
        start: plan.at,
        end: vma.end,
        pgoff: vma.pgoff + (plan.at - vma.start),
        anon: None,
    };
    if let Some(link) = vma.anon {
        let family = family.expect("splitting an anon-linked vma needs its family");
        let (chain, _) = anon_vma_clone(family, new.key(mm_id), &link, Some(link.anon_vma));
        new.anon = Some(AnonLink {
            chain: chain.head,
            chain_len: chain.len,
            ..link
        });
    }
    new
}

/// Step 2 (vma_prepare's locks): shrink the old vma, re-key its rmap entries,
/// link the new one.
pub fn split_commit(
    mm_id: MmId,
    mm: &mut Mm,
    plan: &SplitPlan,
    new: PendingSplit,
    family: Option<&mut Family>,
    space: Option<&mut AddressSpace>,
) {
    let vma = mm.vma_mut(plan.start).expect("split plan is stale");
    vma.end = plan.at;
    let key = vma.key(mm_id);
    if let Some(link) = vma.anon {
        let family = family.expect("splitting an anon-linked vma needs its family");
        family.rekey_chain(Some(link.chain), key);
    }
    let backing = match vma.backing {
        Backing::Anon => Backing::Anon,
        Backing::File {
            space: sid,
            entry,
            private,
        } => {
            let space = space.expect("splitting a file vma needs its i_mmap");
            space.rekey(entry, key);
            Backing::File {
                space: sid,
                entry: space.insert(new.key(mm_id)),
                private,
            }
        }
    };
    mm.insert(Vma {
        start: new.start,
        end: new.end,
        pgoff: new.pgoff,
        backing,
        anon: new.anon,
        vm_lock_seq: mm.mm_lock_seq(),
    });
}

/// A merge of the vma ending at `at` with the one starting there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergePlan {
    pub prev_start: u32,
    pub next_start: u32,
    /// [`merge_commit`]'s locks (vma_prepare).
    pub commit: LockSet,
    /// The family whose root the removed vma's unlink takes, if it has AVCs.
    pub unlink: Option<FamilyId>,
    pub space: Option<SpaceId>,
}

/// Plan merging across `at`; None unless the two vmas meeting there are
/// compatible (is_mergeable_vma + is_mergeable_anon_vma, restricted to the
/// equal-anon_vma case: the model does not merge a faulted vma with a
/// never-faulted one).
pub fn merge_plan(mm: &Mm, at: u32) -> Option<MergePlan> {
    let i = mm.find(at)?;
    let (prev, next) = (mm.vmas().get(i.checked_sub(1)?)?, &mm.vmas()[i]);
    let same_backing = match (prev.backing, next.backing) {
        (Backing::Anon, Backing::Anon) => true,
        (
            Backing::File {
                space: a,
                private: pa,
                ..
            },
            Backing::File {
                space: b,
                private: pb,
                ..
            },
        ) => a == b && pa == pb,
        _ => false,
    };
    let same_anon = prev.anon.map(|l| l.anon_vma) == next.anon.map(|l| l.anon_vma)
        && prev.anon.map(|l| l.family) == next.anon.map(|l| l.family);
    let ok = prev.end == next.start
        && next.start == at
        && same_backing
        && same_anon
        && next.pgoff == prev.pgoff + prev.pages();
    ok.then(|| MergePlan {
        prev_start: prev.start,
        next_start: next.start,
        commit: vma_prepare_locks(prev),
        unlink: next.anon.map(|l| l.family),
        space: match prev.backing {
            Backing::File { space, .. } => Some(space),
            Backing::Anon => None,
        },
    })
}

/// Step 1 (vma_prepare's locks): grow the previous vma over the next one and
/// take the next out of the mm and i_mmap. Returns the removed vma, whose AVCs
/// the caller unlinks next (step 2) if it has any.
pub fn merge_commit(
    mm_id: MmId,
    mm: &mut Mm,
    plan: &MergePlan,
    family: Option<&mut Family>,
    space: Option<&mut AddressSpace>,
) -> Vma {
    let next = mm.take(plan.next_start);
    let prev = mm.vma_mut(plan.prev_start).expect("merge plan is stale");
    prev.end = next.end;
    let key = prev.key(mm_id);
    if let Some(link) = prev.anon {
        let family = family.expect("merging anon-linked vmas needs their family");
        family.rekey_chain(Some(link.chain), key);
    }
    if let (Backing::File { entry, .. }, Backing::File { entry: gone, .. }) =
        (prev.backing, next.backing)
    {
        let space = space.expect("merging file vmas needs their i_mmap");
        space.rekey(entry, key);
        space.remove(gone);
    }
    next
}
