//! A task touching one of its pages: the MMU's access when the PTE allows it
//! (no lock at all), otherwise a page fault (mm/memory.c handle_mm_fault,
//! arch do_user_addr_fault): under the vma's own lock first when faults use
//! per-VMA locks (6.4+, lock_vma_under_rcu), else or on its failure under
//! mmap_lock READ, preceded on a vma's first anon fault by
//! __anon_vma_prepare (mmap_lock READ, the neighbour's root WRITE when
//! joining it, then the mm's page_table_lock).

use super::page_lock::{PageKey, PageLock};
use super::{MmSlot, SharedWorld};
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::rmap::anon_vma::{self, Prepare};
use crate::rmap::fault::{self, Fault, OutOfPages};
use crate::rmap::pte;
use crate::rmap::step_locks::StepParts;
use crate::rmap::vma_lock::{self, VmaLockOutcome, VmaLockStats};
use crate::rmap::{Backing, Mapping, Mm, MmId, Vma};
use std::sync::atomic::AtomicU32;

/// What one touch did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touched {
    pub fault: Fault,
    /// The per-VMA lock attempts it made (vma_lock_* events; none in
    /// mmap_lock mode or for an access that did not fault).
    pub vma_lock: VmaLockStats,
    /// ns spent waiting for the lru_lock to add the pages it allocated.
    pub lru_wait_ns: u64,
}

impl Touched {
    fn of(fault: Fault, vma_lock: VmaLockStats, lru_wait_ns: u64) -> Touched {
        Touched {
            fault,
            vma_lock,
            lru_wait_ns,
        }
    }
}

impl<L: RawRwLock> SharedWorld<L> {
    /// Touch page `addr` of `mm`, reading or writing.
    ///
    /// A present PTE that allows the access takes no lock: the hardware sets
    /// young (and dirty) on it. Anything else faults: in per-VMA mode first
    /// under the vma's lock READ, counting its vma_lock_* outcome; on an
    /// abort or retry (or in mmap_lock mode) under mmap_lock READ, where
    /// `disk`, if given, runs while that is held (seed 002's reader blocked
    /// on disk). The first anon fault of a vma (or first write to a private
    /// file vma) first prepares its anon_vma. Pages the fault allocated join
    /// the LRU (folio_add_lru), the fault's lock still held.
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
    ) -> Result<Option<Touched>, OutOfPages> {
        let Some(ptes) = self.page_tables.table(mm) else {
            return Ok(None);
        };
        let Some(slot) = ptes.get(addr as usize) else {
            return Ok(None);
        };
        if pte::hardware_access(slot, write) {
            L::Platform::charge_user(self.costs.touch);
            return Ok(Some(Touched::of(Fault::Hit, VmaLockStats::default(), 0)));
        }
        let Some(mslot) = self.mm_slot(mm) else {
            return Ok(None);
        };
        let mut vma_lock = VmaLockStats::default();
        if self.per_vma()
            && let Some(done) = self.fault_per_vma(mm, mslot, addr, write, &mut vma_lock)?
        {
            return Ok(Some(Touched::of(done.0, vma_lock, done.1)));
        }
        let guard = mslot.mm.read();
        let Some(m) = guard.as_ref() else {
            return Ok(None);
        };
        let Some(found) = m.vma(addr) else {
            return Ok(None);
        };
        mslot.find_vma.lookup(self.era.find_vma_cache, found.start);
        let mut vma = found.clone();
        vma.anon = mslot.vmas.anon_of(found);
        if vma.anon.is_none() && (vma.is_anon() || (write && vma.is_private())) {
            self.anon_vma_prepare(mm, mslot, m, &mut vma);
        }
        if let Some(disk) = disk {
            disk();
        }
        let (fault, waited) = self.fault_locked(ptes, &vma, addr, write)?;
        Ok(Some(Touched::of(fault, vma_lock, waited)))
    }

    /// The fault under the vma's lock (do_user_addr_fault's first try,
    /// 6.4): the fault and its lru_lock wait, or None (after counting why)
    /// when it must fall back to mmap_lock. A swap entry makes it retry
    /// there, as 6.4's do_swap_page returns VM_FAULT_RETRY under a vma lock.
    fn fault_per_vma(
        &self,
        mm: MmId,
        mslot: &MmSlot<L::Platform>,
        addr: u32,
        write: bool,
        counts: &mut VmaLockStats,
    ) -> Result<Option<(Fault, u64)>, OutOfPages> {
        let ptes = self.page_tables.table(mm).expect("a live mm's page table");
        loop {
            let read = match mslot.vmas.lock_vma_under_rcu(addr) {
                Ok(read) => read,
                Err(VmaLockOutcome::Miss) => {
                    counts.count(VmaLockOutcome::Miss);
                    continue;
                }
                Err(other) => {
                    counts.count(other);
                    return Ok(None);
                }
            };
            if vma_lock::needs_retry(pte::load(&ptes[addr as usize])) {
                counts.count(VmaLockOutcome::Retry);
                return Ok(None);
            }
            let done = self.fault_locked(ptes, &read.vma, addr, write)?;
            counts.count(VmaLockOutcome::Success);
            return Ok(Some(done));
        }
    }

    /// handle_mm_fault on `vma` (the caller holds its mmap_lock READ or its
    /// vma lock), retried until the PTE stops changing under it, with the
    /// page lock it needs; then the pages it allocated join the LRU. The
    /// fault and the ns waited for the lru_lock.
    fn fault_locked(
        &self,
        ptes: &[AtomicU32],
        vma: &Vma,
        addr: u32,
        write: bool,
    ) -> Result<(Fault, u64), OutOfPages> {
        let slot = &ptes[addr as usize];
        let mut waited = 0;
        loop {
            let page_lock = self.lock_fault_page(vma, addr, write, slot);
            let mut added = |p| waited += self.lru_add(p);
            let done = fault::handle_mm_fault(
                vma,
                addr,
                write,
                ptes,
                &self.pages,
                &self.page_cache,
                &mut added,
            );
            match done? {
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
                    drop(page_lock);
                    return Ok((done, waited));
                }
            }
        }
    }

    /// __anon_vma_prepare for `vma` (a copy of `mm`'s vma, mmap_lock READ
    /// held): join a neighbour's anon_vma under its root WRITE, or publish a
    /// new family in a fresh slot; then, under the mm's page_table_lock,
    /// store the link in the vma's cell unless a racing first fault of the
    /// same vma got there first, whose link `vma` then takes (the kernel's
    /// loser frees the anon_vma it allocated).
    fn anon_vma_prepare(&self, mm_id: MmId, mslot: &MmSlot<L::Platform>, mm: &Mm, vma: &mut Vma) {
        // anon_vma_chain_alloc and anon_vma_alloc are GFP_KERNEL.
        L::Platform::might_sleep();
        let cells = &mslot.vmas;
        let prepare = anon_vma::find_mergeable_anon_vma_by(mm, vma.start, |v| cells.anon_of(v));
        match prepare {
            Prepare::Join { family, anon_vma } => {
                let mut held = self.lock_step(prepare.locks(mm_id));
                if let Some(won) = cells.anon_of(vma) {
                    vma.anon = Some(won);
                    return;
                }
                let f = held.family().expect("Join locks the neighbour's family");
                anon_vma::anon_vma_prepare_join(mm_id, vma, family, f, anon_vma);
                cells.set_anon(vma.start, vma.anon.expect("just joined"));
            }
            Prepare::NewRoot => {
                let fid = self.alloc_family();
                let family = anon_vma::anon_vma_prepare_new(self.era.rmap, mm_id, vma, fid);
                let mine = vma.anon.expect("just prepared");
                // A walker holding a stale id may be reading this slot: store
                // under its lock (the kernel locks its new anon_vma too).
                let mut slot = self.family_slot(fid).write();
                debug_assert!(slot.is_none(), "{fid:?} was handed out while live");
                *slot = Some(family);
                let won = {
                    let _ptl = mslot.page_table_lock.lock();
                    cells.set_anon(vma.start, mine)
                };
                if won != mine {
                    *slot = None;
                    drop(slot);
                    self.free_family(fid);
                    vma.anon = Some(won);
                }
            }
        }
    }

    /// The page lock a fault needs (see `page_lock.rs`): for a swap entry
    /// whose page is in the swap cache, that page (do_swap_page's
    /// folio_lock, so reclaim cannot be unmapping it meanwhile), held once
    /// the PTE and the cache are seen unchanged after locking; a file page's
    /// page-cache slot; for a write to a write-protected anon page, that
    /// page, held once the PTE is seen still mapping it.
    fn lock_fault_page(
        &self,
        vma: &Vma,
        addr: u32,
        write: bool,
        slot: &AtomicU32,
    ) -> Option<PageLock<'_, L::Platform>> {
        loop {
            let old = pte::load(slot);
            let page = match (old.swap_slot(), old.page()) {
                // Not cached: the faulter reads a new page in, which reclaim
                // cannot see before the fault puts it on the LRU.
                (Some(swap), _) => self.pages.swap.lookup(swap)?,
                (None, page) => {
                    let anon = page
                        .filter(|&p| matches!(self.pages.mapping(p), Some(Mapping::Anon { .. })));
                    if let (Backing::File { space, .. }, None) = (vma.backing, anon) {
                        let key = PageKey::File(space, vma.pgoff_of(addr));
                        return Some(self.page_locks.lock(key));
                    }
                    anon.filter(|_| write && !old.writable())?
                }
            };
            let lock = self.page_locks.lock(PageKey::Anon(page));
            let still = match old.swap_slot() {
                Some(swap) => pte::load(slot) == old && self.pages.swap.lookup(swap) == Some(page),
                None => pte::load(slot).maps(page),
            };
            if still {
                return Some(lock);
            }
        }
    }
}
