//! The mmap_lock WRITE operations on one mm's vma set (mprotect's split and
//! merge, mmap of a file) and the /proc/pid/maps reader.

use super::SharedWorld;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::rmap::step_locks::StepParts;
use crate::rmap::{Mm, MmId, SpaceId, compose, mmap};

impl<L: RawRwLock> SharedWorld<L> {
    /// __split_vma at `at` (mprotect of part of a vma): mmap_lock WRITE, then
    /// split's clone step (root WRITE) and commit step (i_mmap WRITE, root
    /// WRITE). False if `at` is not strictly inside a vma or `mm` is not live.
    pub fn split(&self, mm: MmId, at: u32) -> bool {
        let Some(mut guard) = self.mm_write(mm) else {
            return false;
        };
        guard.vma_start_write(at, at + 1);
        guard.as_mut().is_some_and(|m| self.split_locked(mm, m, at))
    }

    /// The split steps ([`compose::split`]), the caller holding `mm`'s
    /// mmap_lock WRITE.
    pub(super) fn split_locked(&self, mm_id: MmId, mm: &mut Mm, at: u32) -> bool {
        compose::split(&mut &*self, mm_id, mm, at)
    }

    /// Merge the vmas meeting at `at` if compatible (vma_merge): mmap_lock
    /// WRITE, the commit step (i_mmap WRITE, root WRITE), then the removed
    /// vma's unlink_anon_vmas (root WRITE again). False if they are not
    /// mergeable or `mm` is not live.
    pub fn merge(&self, mm: MmId, at: u32) -> bool {
        let Some(mut guard) = self.mm_write(mm) else {
            return false;
        };
        guard.vma_start_write(at.saturating_sub(1), at + 1);
        guard
            .as_mut()
            .is_some_and(|m| compose::merge(&mut &*self, mm, m, at))
    }

    /// mmap file pages `[pgoff, pgoff + pages)` shared, wherever they fit
    /// (mmap_lock WRITE, then vma_link_file's i_mmap WRITE); their start. None
    /// if the range is empty or beyond the file, nothing fits, or `mm` is not
    /// live.
    pub fn mmap_file(&self, mm: MmId, space: SpaceId, pgoff: u32, pages: u32) -> Option<u32> {
        self.mmap_file_in(mm, space, pgoff, pages, false)
    }

    /// [`mmap_file`](Self::mmap_file) MAP_PRIVATE, as the ELF loader maps a
    /// binary's segments: the pages are shared with the page cache until a
    /// write copies one into the vma's anon_vma.
    pub fn mmap_file_private(
        &self,
        mm: MmId,
        space: SpaceId,
        pgoff: u32,
        pages: u32,
    ) -> Option<u32> {
        self.mmap_file_in(mm, space, pgoff, pages, true)
    }

    fn mmap_file_in(
        &self,
        mm: MmId,
        space: SpaceId,
        pgoff: u32,
        pages: u32,
        private: bool,
    ) -> Option<u32> {
        let size = *self.file_pages.get(space.index())?;
        if pages == 0 || pgoff.checked_add(pages)? > size {
            return None;
        }
        let mut guard = self.mm_write(mm)?;
        let m = guard.as_mut()?;
        let start = mmap::get_unmapped_area(m, pages, self.va_pages)?;
        // vm_area_alloc (GFP_KERNEL) for the new vma.
        L::Platform::might_sleep();
        let mut held = self.lock_step(mmap::mmap_file_locks(space));
        let s = held.space().expect("mmap_file locks its i_mmap");
        mmap::mmap_file_in(mm, m, start, pages, space, pgoff, s, private);
        Some(start)
    }

    /// mprotect of exactly the vma `[start, end)` (mprotect_fixup with no
    /// split to do, and no neighbour to merge with: the model's vmas differ
    /// only in access bits it does not keep): mmap_lock WRITE and, in the
    /// per-VMA era, vma_start_write; no rmap lock. Seed 000's second write
    /// per iteration. False if no vma is exactly that range or `mm` is not
    /// live.
    pub fn mprotect(&self, mm: MmId, start: u32, end: u32) -> bool {
        let Some(guard) = self.mm_write(mm) else {
            return false;
        };
        let whole = guard
            .as_ref()
            .and_then(|m| m.vma(start))
            .is_some_and(|v| v.start == start && v.end == end);
        if whole {
            guard.vma_start_write(start, end);
        }
        whole
    }

    /// A /proc/pid/maps read (show_map under mmap_read_lock, or
    /// down_read_critical, seed 002): count the vmas and run `hold` while the
    /// lock is held. 0 if `mm` is not live.
    pub fn read_maps(&self, mm: MmId, critical: bool, hold: &dyn Fn()) -> usize {
        let Some(slot) = self.mm_slot(mm) else {
            return 0;
        };
        let guard = if critical {
            slot.mm.read_critical()
        } else {
            slot.mm.read()
        };
        let n = guard.as_ref().map_or(0, |m| m.vmas().len());
        hold();
        n
    }
}
