//! A task touching one of its pages: the MMU's access when the PTE allows it
//! (no lock at all), otherwise a page fault under mmap_lock READ (mm/memory.c
//! handle_mm_fault), preceded on a vma's first fault by __anon_vma_prepare.

use super::SharedWorld;
use super::page_lock::{PageKey, PageLock};
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::rmap::anon_vma::{self, Prepare};
use crate::rmap::fault::{self, Fault, OutOfPages};
use crate::rmap::pte::{self, DIRTY, Pte, YOUNG};
use crate::rmap::step_locks::StepParts;
use crate::rmap::{Backing, Mm, MmId, Vma};
use std::sync::atomic::{AtomicU32, Ordering};

impl<L: RawRwLock> SharedWorld<L> {
    /// Touch page `addr` of `mm`, reading or writing.
    ///
    /// A present PTE that allows the access takes no lock: the hardware sets
    /// young (and dirty) on it. Anything else faults under mmap_lock READ;
    /// `disk`, if given, runs while that is held (seed 002's reader blocked
    /// on disk). The first fault of an anon vma takes mmap_lock WRITE for
    /// __anon_vma_prepare (the model's deviation, see [`crate::rmap`]) and
    /// downgrades it to READ for the fault itself.
    ///
    /// `Ok(None)`: `mm` is not live or `addr` is in no vma (the access would
    /// be a SIGSEGV). `Err(OutOfPages)`: the fault needed a page and the pool
    /// is full.
    pub fn touch(
        &self,
        mm: MmId,
        addr: u32,
        write: bool,
        disk: Option<&dyn Fn()>,
    ) -> Result<Option<Fault>, OutOfPages> {
        let Some(ptes) = self.page_tables.table(mm) else {
            return Ok(None);
        };
        let Some(slot) = ptes.get(addr as usize) else {
            return Ok(None);
        };
        if hardware_access(slot, write) {
            L::Platform::charge_user(self.costs.touch);
            return Ok(Some(Fault::Hit));
        }
        let Some(mslot) = self.mm_slot(mm) else {
            return Ok(None);
        };
        let mut guard = mslot.read();
        let first_fault = match guard.as_ref().and_then(|m| m.vma(addr)) {
            None => return Ok(None),
            Some(v) => v.is_anon() && v.anon.is_none(),
        };
        if first_fault {
            drop(guard);
            let mut w = mslot.write();
            // Re-check: the vma may have changed while no lock was held.
            let Some(m) = w.as_mut() else {
                return Ok(None);
            };
            match m.vma(addr) {
                None => return Ok(None),
                Some(v) if v.is_anon() && v.anon.is_none() => self.anon_vma_prepare(mm, m, addr),
                Some(_) => {}
            }
            guard = w.downgrade();
        }
        if let Some(disk) = disk {
            disk();
        }
        let m = guard.as_ref().expect("live under its mmap_lock");
        let vma = m.vma(addr).expect("vma stable under mmap_lock");
        loop {
            let _page = self.lock_fault_page(vma, addr, write, slot);
            match fault::handle_mm_fault(vma, addr, write, ptes, &self.pages, &self.page_cache)? {
                Fault::Retry => continue,
                done => {
                    // The exception's entry and exit and (but for a swap-cache
                    // hit) a page allocated and cleared or read in: work the
                    // engine only stands for.
                    let cost = match done {
                        Fault::SwapIn { .. } => self.costs.swapin,
                        _ => self.costs.fault,
                    };
                    // The page allocation (or lock_page) may sleep.
                    L::Platform::might_sleep();
                    L::Platform::udelay(cost);
                    return Ok(Some(done));
                }
            }
        }
    }

    /// __anon_vma_prepare for the vma containing `addr` (mmap_lock WRITE held):
    /// join a neighbour's anon_vma under its root WRITE, or publish a new
    /// family in a fresh slot.
    fn anon_vma_prepare(&self, mm_id: MmId, mm: &mut Mm, addr: u32) {
        // anon_vma_chain_alloc and anon_vma_alloc are GFP_KERNEL.
        L::Platform::might_sleep();
        let prepare = anon_vma::find_mergeable_anon_vma(mm, addr);
        let vma = mm.vma_mut(addr).expect("caller checked the vma");
        match prepare {
            Prepare::Join { family, anon_vma } => {
                let mut held = self.lock_step(prepare.locks(mm_id));
                let f = held.family().expect("Join locks the neighbour's family");
                anon_vma::anon_vma_prepare_join(mm_id, vma, family, f, anon_vma);
            }
            Prepare::NewRoot => {
                let fid = self.alloc_family();
                let family = anon_vma::anon_vma_prepare_new(self.era.rmap, mm_id, vma, fid);
                // A walker holding a stale id may be reading this slot: store
                // under its lock (the kernel locks its new anon_vma too).
                let mut slot = self.family_slot(fid).write();
                debug_assert!(slot.is_none(), "{fid:?} was handed out while live");
                *slot = Some(family);
            }
        }
    }

    /// The page lock a fault needs (see `page_lock.rs`): a file page's
    /// page-cache slot; for a write to a write-protected anon PTE, the page it
    /// maps, held only once the PTE is seen still mapping it after locking.
    fn lock_fault_page(
        &self,
        vma: &Vma,
        addr: u32,
        write: bool,
        slot: &AtomicU32,
    ) -> Option<PageLock<'_, L::Platform>> {
        if let Backing::File { space, .. } = vma.backing {
            return Some(
                self.page_locks
                    .lock(PageKey::File(space, vma.pgoff_of(addr))),
            );
        }
        loop {
            let old = pte::load(slot);
            let page = old.page().filter(|_| write && !old.writable())?;
            let lock = self.page_locks.lock(PageKey::Anon(page));
            if pte::load(slot).maps(page) {
                return Some(lock);
            }
        }
    }
}

/// The MMU's access through a present PTE that allows it: set young, and
/// dirty on a write, as the hardware does without any lock. False if the
/// access must fault instead (no PTE, or a write to a write-protected one).
fn hardware_access(slot: &AtomicU32, write: bool) -> bool {
    let bits = if write { YOUNG | DIRTY } else { YOUNG };
    let mut old = pte::load(slot);
    loop {
        if !old.present() || (write && !old.writable()) {
            return false;
        }
        if old.0 & bits == bits {
            return true;
        }
        match slot.compare_exchange_weak(old.0, old.0 | bits, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(now) => old = Pte(now),
        }
    }
}
