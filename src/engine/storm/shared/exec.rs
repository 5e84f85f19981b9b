//! exec of a binary under locks, as [`crate::rmap::World::exec`] runs it
//! single-threaded (see [`crate::rmap::exec`] for the kernel steps): a new
//! mm, its text and RW segments mapped MAP_PRIVATE from the file (mmap_lock
//! WRITE and i_mmap WRITE each), the text read and the RW segment written
//! (faults under mmap_lock READ or the vma lock; the first write prepares
//! the anon_vma under the page_table_lock), then ld.so's RELRO mprotect,
//! which splits the RW file vma (mmap_lock WRITE; root WRITE for the clone,
//! then i_mmap WRITE and root WRITE for the commit).
//!
//! The new task is the caller's alone: it is not listed among the live mms,
//! so no other operation picks it, and the caller exits it. A caller that
//! kept the id of a task since exited can still reach the reused slot (the
//! shared-world stress test picks ids that way); if such an operation has
//! changed the RW vma before the RELRO mprotect, exec gives up on it as on
//! an address space that cannot hold the segments.

use super::{SharedWorld, Touched};
use crate::locks::RawRwLock;
use crate::rmap::exec::{Binary, Exec};
use crate::rmap::fault::OutOfPages;
use crate::rmap::{Mm, MmId, compose, split};

impl<L: RawRwLock> SharedWorld<L> {
    /// exec of `bin` in a new task, up to the RELRO mprotect; `on_touch`
    /// sees each of its faults. Ok(None) if no mm slot is free, the address
    /// space cannot hold the segments or a stale id changed them; Err if a
    /// fault found no free page. On either failure the task is exited
    /// before returning.
    pub fn exec(
        &self,
        bin: Binary,
        on_touch: &mut dyn FnMut(&Touched),
    ) -> Result<Option<Exec>, OutOfPages> {
        let Some(mm) = self.spawn() else {
            return Ok(None);
        };
        let done = self.exec_in(mm, bin, on_touch);
        if !matches!(done, Ok(Some(_))) {
            self.exit(mm);
        }
        done
    }

    fn exec_in(
        &self,
        mm: MmId,
        bin: Binary,
        on_touch: &mut dyn FnMut(&Touched),
    ) -> Result<Option<Exec>, OutOfPages> {
        let text = self.mmap_file_private(mm, bin.space, 0, bin.text);
        let rw = self.mmap_file_private(mm, bin.space, bin.text, bin.rw_pages());
        let (Some(text_start), Some(rw_start)) = (text, rw) else {
            return Ok(None);
        };
        let reads = (text_start..text_start + bin.text).map(|a| (a, false));
        let writes = (rw_start..rw_start + bin.rw_pages()).map(|a| (a, true));
        for (addr, write) in reads.chain(writes) {
            if let Some(t) = self.touch(mm, addr, write, None)? {
                on_touch(&t);
            }
        }
        let at = rw_start + bin.relro;
        let mut guard = self.mm_write(mm).expect("the new task's slot");
        guard.vma_start_write(at, at + 1);
        let Some(m) = guard.as_mut() else {
            return Ok(None);
        };
        let Some(relro_split) = split::split_plan(m, at) else {
            return Ok(None);
        };
        assert!(compose::split(&mut &*self, mm, m, at));
        Ok(Some(Exec {
            mm,
            text_start,
            rw_start,
            relro_split,
        }))
    }

    /// A new task with an empty address space (bprm_mm_init's mm), not
    /// listed among the live mms; None if every mm slot is live.
    fn spawn(&self) -> Option<MmId> {
        let id = self.alloc_mm()?;
        *self.mm_write(id).expect("slot just grown") = Some(Mm::default());
        Some(id)
    }
}
