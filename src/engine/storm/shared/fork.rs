//! fork (kernel/fork.c dup_mmap) under locks: the parent's mmap_lock WRITE,
//! with every parent vma write-locked when faults use per-VMA locks (6.4+:
//! [`crate::rmap::vma_lock::fork_vma_locks`]), then the child's, held across
//! [`crate::rmap::compose::dup_mmap`], whose steps each take the rmap lock
//! they declare.

use super::SharedWorld;
use crate::locks::RawRwLock;
use crate::rmap::MmId;
use crate::rmap::compose;

impl<L: RawRwLock> SharedWorld<L> {
    /// fork: a child with a copy of `parent`'s vmas, linked into the same
    /// anon_vma families and files, COW-sharing every present anon page.
    /// None if every mm slot is live, or `parent` is not a live mm.
    pub fn fork(&self, parent: MmId) -> Option<MmId> {
        self.mm_slot(parent)?;
        let child = self.alloc_mm()?;
        let pguard = self.mm_write(parent).expect("the parent's slot exists");
        let Some(pmm) = pguard.as_ref() else {
            drop(pguard);
            self.free_mm(child);
            return None;
        };
        pguard.vma_start_write(0, self.va_pages);
        let mut cguard = self.mm_write(child).expect("slot just grown");
        debug_assert!(cguard.is_none(), "{child:?} was handed out while live");
        let ppt = self.page_tables.table(parent).expect("parent page table");
        let cpt = self.page_tables.table(child).expect("child page table");
        *cguard = Some(compose::dup_mmap(
            &mut &*self,
            pmm,
            child,
            ppt,
            cpt,
            &self.pages,
        ));
        drop(cguard);
        drop(pguard);
        self.publish_mm(child);
        Some(child)
    }
}
