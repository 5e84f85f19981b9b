//! Per-VMA locks (6.4, Suren Baghdasaryan; mm/memory.c lock_vma_under_rcu,
//! include/linux/mm.h vma_start_read / vma_start_write): a page fault may
//! lock only the vma it faults in, for READ, instead of the mm's mmap_lock;
//! anything that changes a vma (fork's dup_mmap, split, merge, munmap)
//! write-locks it first, under mmap_lock WRITE.
//!
//! State (per mm and per vma, as in 6.4):
//!
//! | field | where | meaning |
//! |-------|-------|---------|
//! | `mm_lock_seq` | [`Mm`] | bumped by every mmap_write_unlock (vma_end_write_all): ends every vma's write lock at once |
//! | `vm_lock_seq` | [`Vma`] | equal to `mm_lock_seq`: the vma is write-locked for the current mmap_lock WRITE hold |
//! | `vma->vm_lock` | the engine's | the rw_semaphore behind it: [`LockTarget::VmaLock`] |
//!
//! Invariant: `vm_lock_seq <= mm_lock_seq`; a write lock is taken only under
//! mmap_lock WRITE and lasts until that is dropped.
//!
//! A fault (do_user_addr_fault, 6.4):
//!
//! 1. [`lock_vma_under_rcu`]: find the vma; it must be anonymous with an
//!    anon_vma (6.4 handles only those; find_mergeable_anon_vma would need
//!    the neighbours), and not write-locked (`vm_lock_seq != mm_lock_seq`),
//!    and its lock's down_read_trylock must succeed; else ABORT and fall back
//!    to mmap_lock. A vma detached between lookup and lock: MISS, look again.
//! 2. handle_mm_fault under the vma lock READ. In 6.4 a fault that would
//!    block for IO (do_swap_page) returns VM_FAULT_RETRY under the vma lock:
//!    RETRY, and the fault runs again under mmap_lock ([`needs_retry`]).
//!    Otherwise SUCCESS.
//!
//! Counters (CONFIG_PER_VMA_LOCK_STATS, /proc/vmstat vma_lock_*):
//! [`VmaLockStats`].
//!
//! fork (dup_mmap, 6.4) write-locks every vma of the parent before copying
//! it ([`fork_vma_locks`]): with hundreds of vmas that is hundreds of
//! vma_start_write calls, each of which waits for that vma's readers (the
//! 2026 linux-mm thread: apps with over 1000 vmas; 41% of the top 200
//! Android apps fork at run time).

use super::ids::MmId;
use super::lock_req::{LockReq, LockTarget};
use super::mm::{Backing, Mm, Vma};
use super::pte::Pte;

/// How one attempt to fault under a vma lock ended (the vmstat events).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmaLockOutcome {
    /// VMA_LOCK_SUCCESS: the fault completed under the vma lock.
    Success,
    /// VMA_LOCK_ABORT: the vma could not be locked; fall back to mmap_lock.
    Abort(AbortReason),
    /// VMA_LOCK_RETRY: the fault returned VM_FAULT_RETRY under the vma lock;
    /// it runs again under mmap_lock.
    Retry,
    /// VMA_LOCK_MISS: the vma was detached after it was found; look again.
    Miss,
}

/// Why lock_vma_under_rcu gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortReason {
    /// No vma at the address.
    NoVma,
    /// Not anonymous (6.4 handles anonymous vmas only).
    NotAnon,
    /// No anon_vma yet: __anon_vma_prepare looks at the neighbours.
    NoAnonVma,
    /// Write-locked (`vm_lock_seq == mm_lock_seq`) or the trylock failed.
    Locked,
}

/// vma_lock_* counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VmaLockStats {
    pub success: u64,
    pub abort: u64,
    pub retry: u64,
    pub miss: u64,
}

impl VmaLockStats {
    /// Count one outcome.
    pub fn count(&mut self, o: VmaLockOutcome) {
        match o {
            VmaLockOutcome::Success => self.success += 1,
            VmaLockOutcome::Abort(_) => self.abort += 1,
            VmaLockOutcome::Retry => self.retry += 1,
            VmaLockOutcome::Miss => self.miss += 1,
        }
    }

    /// Add another set of counters (another fault's, another thread's).
    pub fn add(&mut self, other: &VmaLockStats) {
        self.success += other.success;
        self.abort += other.abort;
        self.retry += other.retry;
        self.miss += other.miss;
    }
}

/// The lock of the vma starting at `start` in `mm`.
pub fn vma_lock(mm: MmId, vma: &Vma) -> LockTarget {
    LockTarget::VmaLock(mm, vma.start)
}

/// vma_start_write on every parent vma, in address order, as dup_mmap does
/// under the parent's mmap_lock WRITE (6.4+): the locks fork declares on
/// top of [`fork_locks`](super::fork::fork_locks).
pub fn fork_vma_locks(parent: MmId, pmm: &Mm) -> Vec<LockReq> {
    pmm.vmas()
        .iter()
        .map(|v| LockReq::write(vma_lock(parent, v)))
        .collect()
}

/// vma_start_write (mmap_lock WRITE held): mark the vma write-locked until
/// the mm's next mmap_write_unlock. True if it was not already.
pub fn vma_start_write(mm: &mut Mm, start: u32) -> bool {
    let seq = mm.mm_lock_seq;
    let v = mm.vma_mut(start).expect("vma_start_write of no vma");
    let was = v.vm_lock_seq == seq;
    v.vm_lock_seq = seq;
    !was
}

/// vma_end_write_all (mmap_write_unlock): every write-locked vma of the mm
/// is unlocked at once.
pub fn vma_end_write_all(mm: &mut Mm) {
    mm.mm_lock_seq += 1;
}

/// lock_vma_under_rcu's checks for a fault at `addr` in `mm` (read without
/// mmap_lock: the maple tree under RCU). Ok: the vma lock to take for READ
/// (its down_read_trylock failing is an [`AbortReason::Locked`] too).
pub fn lock_vma_under_rcu(mm_id: MmId, mm: &Mm, addr: u32) -> Result<LockReq, AbortReason> {
    let v = mm.vma(addr).ok_or(AbortReason::NoVma)?;
    if v.backing != Backing::Anon {
        return Err(AbortReason::NotAnon);
    }
    if v.anon.is_none() {
        return Err(AbortReason::NoAnonVma);
    }
    if v.vm_lock_seq == mm.mm_lock_seq {
        return Err(AbortReason::Locked);
    }
    Ok(LockReq::read(vma_lock(mm_id, v)))
}

/// Whether a fault on `pte` under the vma lock returns VM_FAULT_RETRY in
/// 6.4: a swap entry (do_swap_page bails out under FAULT_FLAG_VMA_LOCK).
pub fn needs_retry(pte: Pte) -> bool {
    pte.swap_slot().is_some()
}
