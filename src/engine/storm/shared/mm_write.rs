//! mmap_write_lock / mmap_write_unlock of one mm slot, with what the kernel
//! does at each beside taking the rw_semaphore: the model's fold of anon
//! links set under READ at the lock, and at the unlock the update of the
//! vma cells faults read without the mmap_lock, then vma_end_write_all
//! (6.4+: every vma the holder write-locked is unlocked at once).

use super::MmSlot;
use crate::locks::AnyLock;
use crate::locks::guard::{ReadGuard, WriteGuard};
use crate::locks::platform::Platform;
use crate::rmap::Mm;
use crate::rmap::era::FindVmaCache;
use std::ops::{Deref, DerefMut};

/// A held mmap_lock WRITE; mmap_write_unlock on drop.
pub(super) struct MmWrite<'a, P: Platform> {
    slot: &'a MmSlot<P>,
    /// Some until drop or [`downgrade`](Self::downgrade) takes it.
    guard: Option<WriteGuard<'a, AnyLock<P>, Option<Mm>>>,
    per_vma: bool,
    find_vma_cache: FindVmaCache,
}

impl<'a, P: Platform> MmWrite<'a, P> {
    /// mmap_write_lock, then fold the vma cells' anon links into the mm.
    pub(super) fn lock(slot: &'a MmSlot<P>, per_vma: bool, find_vma_cache: FindVmaCache) -> Self {
        let mut guard = slot.mm.write();
        if let Some(m) = guard.as_mut() {
            slot.vmas.fold(m);
        }
        MmWrite {
            slot,
            guard: Some(guard),
            per_vma,
            find_vma_cache,
        }
    }

    /// vma_start_write of every vma overlapping `[start, end)`: before a
    /// writer changes them, so no per-VMA fault runs on a vma mid-change.
    /// Nothing when faults take only mmap_lock (kernels before 6.4).
    pub(super) fn vma_start_write(&self, start: u32, end: u32) {
        if self.per_vma {
            self.slot.vmas.start_write(start, end);
        }
    }

    /// mmap_write_downgrade: the cells are brought up to date and the vma
    /// write locks end (vma_end_write_all), then mmap_lock becomes READ.
    pub(super) fn downgrade(mut self) -> ReadGuard<'a, AnyLock<P>, Option<Mm>> {
        self.sync();
        let guard = self.guard.take().expect("held until drop");
        guard.downgrade()
    }

    /// What mmap_write_unlock (or the downgrade) publishes: the vma cells,
    /// and find_vma's cache invalidated (vmacache_invalidate).
    fn sync(&self) {
        if let Some(g) = &self.guard {
            self.slot.vmas.sync(g.as_ref(), self.per_vma);
            self.slot.find_vma.invalidate(self.find_vma_cache);
        }
    }
}

impl<P: Platform> Deref for MmWrite<'_, P> {
    type Target = Option<Mm>;
    fn deref(&self) -> &Option<Mm> {
        self.guard.as_ref().expect("held until drop")
    }
}

impl<P: Platform> DerefMut for MmWrite<'_, P> {
    fn deref_mut(&mut self) -> &mut Option<Mm> {
        self.guard.as_mut().expect("held until drop")
    }
}

impl<P: Platform> Drop for MmWrite<'_, P> {
    /// mmap_write_unlock: the cells first, while the lock is still held.
    fn drop(&mut self) {
        self.sync();
    }
}
