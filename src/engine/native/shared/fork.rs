//! fork (kernel/fork.c dup_mmap) under locks: the parent's mmap_lock WRITE,
//! then the child's, held across every step of [`crate::rmap::fork`], each
//! step under the rmap lock it declares.

use super::SharedWorld;
use super::step_locks::StepLocks;
use crate::locks::RawRwLock;
use crate::rmap::fork::{self, ForkClone, ForkStep};
use crate::rmap::{Family, Mm, MmId};

impl<L: RawRwLock> SharedWorld<L> {
    /// fork: a child with a copy of `parent`'s vmas, linked into the same
    /// anon_vma families and files, COW-sharing every present anon page.
    /// None if every mm slot is live, or `parent` is not a live mm.
    pub fn fork(&self, parent: MmId) -> Option<MmId> {
        let pslot = self.mm_slot(parent)?;
        let child = self.alloc_mm()?;
        let pguard = pslot.write();
        let Some(pmm) = pguard.as_ref() else {
            drop(pguard);
            self.free_mm(child);
            return None;
        };
        let mut cguard = self.mm_slot(child).expect("slot just grown").write();
        debug_assert!(cguard.is_none(), "{child:?} was handed out while live");
        *cguard = Some(self.dup_mmap(parent, pmm, child));
        drop(cguard);
        drop(pguard);
        self.publish_mm(child);
        Some(child)
    }

    /// dup_mmap's per-vma steps (both mmap_locks held by the caller).
    fn dup_mmap(&self, parent: MmId, pmm: &Mm, child_id: MmId) -> Mm {
        let mut child = Mm::default();
        let ppt = self.page_tables.table(parent).expect("parent page table");
        let cpt = self.page_tables.table(child_id).expect("child page table");
        for step in fork::fork_plan(pmm) {
            let pvma = pmm.vma(step.start()).expect("planned vma");
            match step {
                ForkStep::Anon { .. } => {
                    // anon_vma_fork: the root WRITE for the clone, then again
                    // for the child's own anon_vma if nothing was reused.
                    let clone = {
                        let mut held = self.lock_step(step.locks());
                        fork::anon_vma_fork_first(pvma, child_id, family(&mut held))
                    };
                    let link = match clone {
                        ForkClone::Done(link) => link,
                        ForkClone::NeedsOwn(chain) => {
                            let mut held = self.lock_step(step.locks());
                            fork::anon_vma_fork_own(pvma, child_id, family(&mut held), chain)
                        }
                    };
                    fork::insert_anon_vma(pvma, &mut child, link);
                }
                ForkStep::Bare { .. } => fork::dup_bare_vma(pvma, &mut child),
                ForkStep::PrivateFile { .. } => {
                    unreachable!("the native engine maps no private file vmas (no exec role yet)")
                }
                ForkStep::File { .. } => {
                    let mut held = self.lock_step(step.locks());
                    let space = held.space().expect("a File step locks its i_mmap");
                    fork::dup_file_vma(pvma, child_id, &mut child, space);
                }
            }
            fork::copy_pte_range(pvma, ppt, cpt, &self.pages);
        }
        child
    }
}

/// The family an Anon step locked.
fn family<'a, L: RawRwLock>(held: &'a mut StepLocks<'_, L>) -> &'a mut Family {
    held.family().expect("an Anon step locks its family")
}
