//! exit (exit_mmap) and munmap (__do_munmap / do_vmi_munmap) under locks: the
//! mm's mmap_lock WRITE across both passes of [`crate::rmap::unmap`] (zap,
//! then free_pgtables' unlink steps, each under its declared rmap lock), as
//! [`compose::teardown`] runs them.

use super::SharedWorld;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::rmap::compose;
use crate::rmap::{MmId, Vma};

impl<L: RawRwLock> SharedWorld<L> {
    /// exit_mmap and release of the mm slot; nothing if `mm` is not live.
    pub fn exit(&self, mm: MmId) {
        let Some(mut guard) = self.mm_write(mm) else {
            return;
        };
        guard.vma_start_write(0, self.va_pages);
        let Some(old) = guard.take() else {
            return;
        };
        let mut vmas = old.vmas;
        self.teardown(mm, &mut vmas);
        drop(guard);
        self.free_mm(mm);
    }

    /// munmap of `[start, end)`: split at both ends, take the vmas inside out
    /// of the mm, then tear them down. With `downgrade`, mmap_lock is
    /// downgraded to READ once the vmas are detached, before the teardown, as
    /// __do_munmap has done since v4.20 ("mm: mmap: zap pages with read
    /// mmap_sem in munmap", Yang Shi; do_vmi_align_munmap's `unlock` still
    /// zaps under the read lock), so faults and /proc readers of the mm run
    /// alongside the zap and the unlinks.
    pub fn munmap(&self, mm: MmId, start: u32, end: u32, downgrade: bool) {
        let Some(mut guard) = self.mm_write(mm) else {
            return;
        };
        guard.vma_start_write(start, end);
        let Some(m) = guard.as_mut() else {
            return;
        };
        self.split_locked(mm, m, start);
        self.split_locked(mm, m, end);
        let (mut inside, kept): (Vec<Vma>, Vec<Vma>) = std::mem::take(&mut m.vmas)
            .into_iter()
            .partition(|v| start <= v.start && v.end <= end);
        m.vmas = kept;
        if downgrade {
            let _read = guard.downgrade();
            self.teardown(mm, &mut inside);
        } else {
            self.teardown(mm, &mut inside);
        }
    }

    /// mmap(MAP_ANONYMOUS | MAP_FIXED) over `[start, start + pages)`, as glibc
    /// trims an arena (seed 000): mmap_lock WRITE, unmap whatever is there
    /// (split, zap, unlink under each rmap lock), then a fresh anon vma with no
    /// anon_vma yet, so the next touch faults and prepares one. False if the
    /// range leaves the address space or `mm` is not live.
    pub fn mmap_anon_fixed(&self, mm: MmId, start: u32, pages: u32) -> bool {
        let end = match start.checked_add(pages) {
            Some(end) if pages > 0 && end <= self.va_pages => end,
            _ => return false,
        };
        let Some(mut guard) = self.mm_write(mm) else {
            return false;
        };
        guard.vma_start_write(start, end);
        let Some(m) = guard.as_mut() else {
            return false;
        };
        self.split_locked(mm, m, start);
        self.split_locked(mm, m, end);
        let (mut inside, kept): (Vec<Vma>, Vec<Vma>) = std::mem::take(&mut m.vmas)
            .into_iter()
            .partition(|v| start <= v.start && v.end <= end);
        m.vmas = kept;
        self.teardown(mm, &mut inside);
        // vm_area_alloc (GFP_KERNEL) for the new vma.
        L::Platform::might_sleep();
        crate::rmap::mmap::mmap_anon(m, start, pages);
        true
    }

    /// unmap_vmas then free_pgtables over vmas already out of the mm (the
    /// caller holds its mmap_lock): [`compose::teardown`] under this world's
    /// locks. A family emptied under its root WRITE leaves an empty slot that
    /// a later walker finds empty (or holding a successor, see the module doc).
    fn teardown(&self, mm: MmId, vmas: &mut [Vma]) {
        let ptes = self
            .page_tables
            .table(mm)
            .expect("a live mm has a page table");
        compose::teardown(&mut &*self, self.era.file_unlink, vmas, ptes, &self.pages);
    }
}
