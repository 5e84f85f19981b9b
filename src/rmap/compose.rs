//! Whole kernel operations composed from the step functions, once, for every
//! holder of the world: each step runs under the rmap locks it declares,
//! taken through [`TakeStepLocks`] (none for the single-threaded
//! [`World`](super::World), real ones in an engine). The caller holds the
//! operation's mmap_lock(s) across all of it, as the kernel does.
//!
//! | operation | kernel | steps, in order |
//! |---|---|---|
//! | [`dup_mmap`] | kernel/fork.c dup_mmap | per parent vma: anon_vma_fork (root WRITE for the clone, again for the child's own anon_vma; in the 2.6.2x list layout one anon_vma_link), an i_mmap insert (i_mmap WRITE), or both for a private file vma, then copy_pte_range |
//! | [`teardown`] | exit_mmap, do_vmi_munmap | unmap_vmas (PTEs and swap entries), then free_pgtables' unlinks: unlink_anon_vmas' pass (root WRITE) and, if it emptied anon_vmas, anon_vma_free (root WRITE again); file vmas under their i_mmap, in batches of 8 (2024+) or one by one |
//! | [`split`] | __split_vma | vma_start_write (6.4+), anon_vma_clone (root WRITE), then vma_prepare/vma_complete's re-key (i_mmap WRITE, root WRITE) |
//! | [`merge`] | vma_merge | the commit (i_mmap WRITE, root WRITE), then the removed vma's unlink_anon_vmas (root WRITE) |

use super::anon_vma::{self, FamilyFate};
use super::era::FileUnlink;
use super::family::Family;
use super::fork::{self, ForkClone, ForkStep};
use super::ids::MmId;
use super::lock_req::{LockReq, LockSet, LockTarget};
use super::mm::{AnonLink, Mm, Vma};
use super::page::PagePool;
use super::split;
use super::step_locks::{StepParts, TakeStepLocks, Work};
use super::unmap::{self, UnlinkStep};
use super::vma_lock;
use std::sync::atomic::AtomicU32;

/// dup_mmap's per-vma steps: the child of `parent` (id `child_id`, page
/// tables `ppt` and `cpt`) with a copy of every vma, linked into the same
/// families and files, COW-sharing every present anon page.
pub fn dup_mmap(
    locks: &mut impl TakeStepLocks,
    parent: &Mm,
    child_id: MmId,
    ppt: &[AtomicU32],
    cpt: &[AtomicU32],
    pages: &PagePool,
) -> Mm {
    let mut child = Mm::default();
    for step in fork::fork_plan(parent) {
        let pvma = parent.vma(step.start()).expect("planned vma");
        locks.might_sleep();
        match step {
            ForkStep::Anon { .. } => {
                let link = anon_vma_fork(locks, &step, pvma, child_id);
                fork::insert_anon_vma(pvma, &mut child, link);
            }
            ForkStep::PrivateFile { .. } => {
                // The anon part first, then the i_mmap insert (dup_mmap's
                // anon_vma_fork, then vma_link's __vma_link_file).
                let link = anon_vma_fork(locks, &step, pvma, child_id);
                let mut held = locks.lock_step(step.file_locks());
                let space = held.space().expect("a PrivateFile step locks its i_mmap");
                fork::dup_private_file_vma(pvma, child_id, &mut child, space, Some(link));
            }
            ForkStep::Bare { .. } => fork::dup_bare_vma(pvma, &mut child),
            ForkStep::File { .. } => {
                let mut held = locks.lock_step(step.locks());
                let space = held.space().expect("a File step locks its i_mmap");
                fork::dup_file_vma(pvma, child_id, &mut child, space);
            }
        }
        locks.did(Work::Vmas(1));
        let copied = fork::copy_pte_range(pvma, ppt, cpt, pages);
        locks.did(Work::Ptes(copied));
    }
    child
}

/// anon_vma_fork of the anon part of `step` (Anon or PrivateFile): the root
/// WRITE for the clone (or, in the list layout, the one link), then again
/// for the child's own anon_vma if nothing was reused.
fn anon_vma_fork(
    locks: &mut impl TakeStepLocks,
    step: &ForkStep,
    pvma: &Vma,
    child_id: MmId,
) -> AnonLink {
    let clone = {
        let mut held = locks.lock_step(step.locks());
        linking(&mut held, |f| fork::anon_vma_fork_first(pvma, child_id, f))
    };
    match clone {
        ForkClone::Done(link) => link,
        ForkClone::NeedsOwn(chain) => {
            let mut held = locks.lock_step(step.locks());
            linking(&mut held, |f| {
                fork::anon_vma_fork_own(pvma, child_id, f, chain)
            })
        }
    }
}

/// Run `change` on the family `held` locked and report the chains it linked
/// or unlinked.
fn linking<R>(held: &mut impl StepParts, change: impl FnOnce(&mut Family) -> R) -> R {
    let f = family(held);
    let before = f.avc_count();
    let out = change(f);
    let delta = f.avc_count().abs_diff(before) as u32;
    held.did(Work::Avcs(delta));
    out
}

/// unmap_vmas then free_pgtables over `vmas`, already out of their mm (page
/// table `ptes`), file vmas unlinked as `unlink` says. A family whose last
/// anon_vma goes is emptied under its root WRITE (a walker that reaches the
/// slot later finds it empty) and its slot given back after the lock is
/// released.
pub fn teardown(
    locks: &mut impl TakeStepLocks,
    unlink: FileUnlink,
    vmas: &mut [Vma],
    ptes: &[AtomicU32],
    pages: &PagePool,
) {
    for v in vmas.iter() {
        let zapped = unmap::zap_vma(v, ptes, pages);
        locks.did(Work::Ptes(zapped));
        locks.did(Work::Vmas(1));
    }
    for step in unmap::free_pgtables_plan(unlink, vmas) {
        match step {
            UnlinkStep::Anon { vma, family } => {
                let emptied = {
                    let mut held = locks.lock_step(step.locks());
                    linking(&mut held, |f| anon_vma::unlink_avcs(&mut vmas[vma], f))
                };
                if emptied.is_empty() {
                    continue;
                }
                // anon_vma_free: the root again, to serialise with a walker
                // in folio_lock_anon_vma_read.
                let mut held = locks.lock_step(anon_vma::anon_vma_free_locks(family));
                let f = held.family().expect("anon_vma_free locks its family");
                if anon_vma::anon_vma_free(f, &emptied) == FamilyFate::Gone {
                    held.clear_family();
                    drop(held);
                    locks.free_family(family);
                }
            }
            UnlinkStep::File {
                vmas: ref batch, ..
            } => {
                let mut held = locks.lock_step(step.locks());
                let batch: Vec<&Vma> = batch.iter().map(|&i| &vmas[i]).collect();
                let space = held.space().expect("a File unlink locks its i_mmap");
                unmap::unlink_file_step(&batch, space);
                held.did(Work::Vmas(batch.len() as u32));
            }
        }
    }
}

/// __split_vma of `mm` (id `mm_id`) at `at`; false if `at` is not strictly
/// inside a vma.
pub fn split(locks: &mut impl TakeStepLocks, mm_id: MmId, mm: &mut Mm, at: u32) -> bool {
    let Some(plan) = split::split_plan(mm, at) else {
        return false;
    };
    vma_lock::vma_start_write(mm, plan.start);
    locks.might_sleep();
    let pending = {
        let mut held = locks.lock_step(plan.clone);
        let avcs = held.family().map_or(0, |f| f.avc_count());
        let pending = split::split_clone(mm_id, mm, &plan, held.family());
        let linked = held.family().map_or(0, |f| f.avc_count()) - avcs;
        held.did(Work::Avcs(linked as u32));
        pending
    };
    let mut held = locks.lock_step(plan.commit);
    let (family, space) = held.parts();
    split::split_commit(mm_id, mm, &plan, pending, family, space);
    // vma_prepare/vma_complete re-key both halves in the trees.
    held.did(Work::Vmas(2));
    vma_lock::vma_end_write_all(mm);
    true
}

/// vma_merge of the vmas of `mm` (id `mm_id`) meeting at `at`; false if they
/// are not mergeable.
pub fn merge(locks: &mut impl TakeStepLocks, mm_id: MmId, mm: &mut Mm, at: u32) -> bool {
    let Some(plan) = split::merge_plan(mm, at) else {
        return false;
    };
    let mut gone = {
        let mut held = locks.lock_step(plan.commit);
        let (family, space) = held.parts();
        split::merge_commit(mm_id, mm, &plan, family, space)
    };
    if let Some(f) = plan.unlink {
        let unlink = LockSet::one(LockReq::write(LockTarget::AnonVmaRoot(f)));
        let mut held = locks.lock_step(unlink);
        let family = held.family().expect("unlink locks its family");
        let fate = anon_vma::unlink_anon_vmas(&mut gone, family);
        assert_eq!(
            fate,
            FamilyFate::Alive,
            "the surviving vma keeps its family"
        );
    }
    true
}

/// The family an Anon fork step locked.
fn family(held: &mut impl StepParts) -> &mut Family {
    held.family().expect("an Anon step locks its family")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rmap::ids::{FamilyId, SpaceId};
    use crate::rmap::step_locks::{Unlocked, UnlockedParts};
    use crate::rmap::world::{Capacity, World};

    /// The lock-free view, recording every set a composition asks for.
    struct Recording<'w> {
        inner: Unlocked<'w>,
        seen: Vec<String>,
    }

    impl TakeStepLocks for Recording<'_> {
        type Held<'a>
            = UnlockedParts<'a>
        where
            Self: 'a;

        fn lock_step(&mut self, set: LockSet) -> UnlockedParts<'_> {
            let names: Vec<String> = set.iter().map(|r| r.to_string()).collect();
            self.seen.push(names.join(" + "));
            self.inner.lock_step(set)
        }

        fn free_family(&mut self, family: FamilyId) {
            self.seen.push(format!("free {family:?}"));
            self.inner.free_family(family);
        }
    }

    /// A task with one faulted anon vma and one shared file vma.
    fn world() -> (World, MmId) {
        let mut w = World::new(64, &[8], Capacity { mms: 4, pages: 64 });
        let a = w.spawn();
        let start = w.mmap_anon(a, 4).unwrap();
        w.touch(a, start, true).unwrap();
        w.mmap_file(a, SpaceId(0), 0, 8).unwrap();
        (w, a)
    }

    #[test]
    fn a_fork_and_exit_tally_the_vmas_avcs_and_ptes_both_ways() {
        let (mut w, parent) = world();
        let child = w.fork(parent);
        let forked = w.work;
        w.exit(child);
        let exited = w.work;
        // vm_area_dup of both vmas; the anon one's AVC to the parent's
        // anon_vma and to its own; its one present PTE.
        assert_eq!((forked.vmas, forked.avcs, forked.ptes), (2, 2, 1));
        // The exit frees both vmas and unlinks the file one from i_mmap
        // (priced as a vma too), unlinks both AVCs and zaps the PTE.
        assert_eq!((exited.vmas, exited.avcs, exited.ptes), (5, 4, 2));
    }

    #[test]
    fn a_swap_entry_is_tallied_as_a_pte_at_fork_and_at_exit() {
        let (mut w, parent) = world();
        let page = crate::rmap::pte::load(w.page_tables.pte(parent, 0).unwrap())
            .page()
            .expect("the faulted page");
        w.reclaim(page);
        let before = w.work;
        let child = w.fork(parent);
        // copy_nonpresent_pte's swap_duplicate is a PTE's work as a present
        // PTE's copy is.
        assert_eq!(w.work.ptes - before.ptes, 1);
        let before = w.work;
        w.exit(child);
        // free_swap_and_cache in zap_pte_range, likewise.
        assert_eq!(w.work.ptes - before.ptes, 1);
    }

    #[test]
    fn fork_then_exit_take_each_step_s_declared_locks_in_kernel_order() {
        let (mut w, parent) = world();
        let child = w.spawn();
        let mut rec = Recording {
            inner: Unlocked {
                families: &mut w.families,
                family_ids: &mut w.family_ids,
                spaces: &mut w.spaces,
                work: &mut w.work,
            },
            seen: Vec::new(),
        };
        let pmm = w.mms.get(parent.index()).and_then(Option::as_ref).unwrap();
        let ppt = w.page_tables.table(parent).unwrap();
        let cpt = w.page_tables.table(child).unwrap();
        let mut forked = dup_mmap(&mut rec, pmm, child, ppt, cpt, &w.pages);
        // The parent's anon_vma has a vma of its own, so nothing is reused:
        // the clone, then the child's own anon_vma, each under the root.
        assert_eq!(
            rec.seen,
            [
                "anon_vma_root(fam0) write",
                "anon_vma_root(fam0) write",
                "i_mmap(file0) write",
            ]
        );
        assert_eq!(forked.vmas().len(), 2);
        rec.seen.clear();
        teardown(&mut rec, FileUnlink::Batch, &mut forked.vmas, cpt, &w.pages);
        // unlink_anon_vmas' pass, then anon_vma_free of the child's own
        // (now empty) anon_vma under the root again; the parent keeps the
        // family, so its slot is not freed.
        assert_eq!(
            rec.seen,
            [
                "anon_vma_root(fam0) write",
                "anon_vma_root(fam0) write",
                "i_mmap(file0) write"
            ],
        );
    }

    #[test]
    fn the_last_unlink_empties_the_family_then_frees_its_slot() {
        let (mut w, a) = world();
        let mut vmas =
            std::mem::take(&mut w.mms.get_mut(a.index()).unwrap().as_mut().unwrap().vmas);
        let mut rec = Recording {
            inner: Unlocked {
                families: &mut w.families,
                family_ids: &mut w.family_ids,
                spaces: &mut w.spaces,
                work: &mut w.work,
            },
            seen: Vec::new(),
        };
        let ptes = w.page_tables.table(a).unwrap();
        teardown(&mut rec, FileUnlink::Batch, &mut vmas, ptes, &w.pages);
        assert_eq!(
            rec.seen,
            [
                "anon_vma_root(fam0) write",
                "anon_vma_root(fam0) write",
                "free fam0",
                "i_mmap(file0) write",
            ]
        );
        assert!(
            w.families.get(0).unwrap().is_none(),
            "emptied under its lock"
        );
        assert_eq!(w.family_ids.live(), 0);
        assert_eq!(w.pages.live(), 0, "every page zapped and freed");
    }
}
