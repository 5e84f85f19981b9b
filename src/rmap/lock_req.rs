//! The locks a step of a kernel operation takes, declared as data.
//!
//! The model never locks: each step function says which lock it needs
//! ([`LockReq`]: which mm's mmap_lock, which file's i_mmap_rwsem, which family's
//! root anon_vma rwsem; read or write) and takes references to exactly the parts
//! that lock guards. An engine takes the lock under test around the call; the
//! single-threaded [`World`](super::World) just calls it. Nothing here depends
//! on `crate::locks`.

use super::ids::{FamilyId, MmId, SpaceId};
pub use crate::mode::Mode;
use serde::Serialize;
use std::fmt;

/// Which lock: one per mm, one per vma, one per file, one per anon_vma
/// family (its root), one page_table_lock per mm, one lru_lock.
///
/// The first three rmap classes (mmap_lock, i_mmap, anon_vma root) are the
/// locks under study; the vma lock is a sleeping rw lock of the per-VMA-lock
/// era (6.4+); page_table_lock and lru_lock are spinlocks held for a few
/// stores, which an engine may model as plain spin words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum LockTarget {
    /// `mm->mmap_lock` (rw_semaphore): guards the mm's vma set.
    MmapLock(MmId),
    /// The per-VMA lock of the vma starting at the page (6.4+,
    /// `vma->vm_lock`, with `vm_lock_seq`): READ by a fault that skips
    /// mmap_lock (lock_vma_under_rcu), WRITE by vma_start_write under
    /// mmap_lock WRITE (fork, split, munmap). See [`super::vma_lock`].
    VmaLock(MmId, u32),
    /// `mapping->i_mmap_rwsem`: guards one file's i_mmap tree.
    IMmap(SpaceId),
    /// `anon_vma->root->rwsem`: guards every anon_vma and AVC of one family.
    AnonVmaRoot(FamilyId),
    /// `mm->page_table_lock` (spinlock): serialises the first fault's
    /// setting of `vma->anon_vma` among faults holding mmap_lock READ
    /// (__anon_vma_prepare).
    PageTableLock(MmId),
    /// `lruvec->lru_lock` (spinlock) of the model's one zone: guards its
    /// active and inactive lists and the isolated count ([`super::lru`]).
    LruLock,
}

impl LockTarget {
    /// Rank in the lock order of mm/rmap.c's header comment
    /// (mmap_lock -> [vma lock] -> i_mmap_rwsem -> anon_vma->rwsem ->
    /// mm->page_table_lock or pte_lock -> lruvec->lru_lock): a thread may only
    /// take locks of non-decreasing rank. Two locks of one rank (two mms in
    /// fork) are ordered by the caller (parent before child, as dup_mmap nests
    /// them). The vma lock sits under mmap_lock: vma_start_write is called
    /// with mmap_lock WRITE held, and a fault holding a vma lock takes no
    /// mmap_lock.
    pub fn rank(self) -> u8 {
        match self {
            LockTarget::MmapLock(_) => 0,
            LockTarget::VmaLock(..) => 1,
            LockTarget::IMmap(_) => 2,
            LockTarget::AnonVmaRoot(_) => 3,
            LockTarget::PageTableLock(_) => 4,
            LockTarget::LruLock => 5,
        }
    }
}

/// One lock a step needs, and in which mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct LockReq {
    pub target: LockTarget,
    pub mode: Mode,
}

impl LockReq {
    pub fn read(target: LockTarget) -> Self {
        LockReq {
            target,
            mode: Mode::Read,
        }
    }

    pub fn write(target: LockTarget) -> Self {
        LockReq {
            target,
            mode: Mode::Write,
        }
    }
}

impl fmt::Display for LockReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            Mode::Read => "read",
            Mode::Write => "write",
        };
        match self.target {
            LockTarget::MmapLock(m) => write!(f, "mmap_lock({m:?}) {mode}"),
            LockTarget::IMmap(s) => write!(f, "i_mmap({s:?}) {mode}"),
            LockTarget::AnonVmaRoot(fam) => write!(f, "anon_vma_root({fam:?}) {mode}"),
            LockTarget::VmaLock(m, start) => write!(f, "vma_lock({m:?}@{start}) {mode}"),
            LockTarget::PageTableLock(m) => write!(f, "page_table_lock({m:?}) {mode}"),
            LockTarget::LruLock => write!(f, "lru_lock {mode}"),
        }
    }
}

/// The locks one step holds at once, in lock order: at most two (the two rmap
/// locks `vma_prepare` nests, i_mmap then anon_vma root, mm/vma.c; or the
/// root and page_table_lock of `__anon_vma_prepare`). The mmap_locks of an
/// operation are held across all its steps and are listed by the operation,
/// not by each step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockSet {
    reqs: [Option<LockReq>; 2],
}

impl LockSet {
    /// No rmap lock (the step touches only atomics or the mm's own vma set).
    pub const NONE: LockSet = LockSet { reqs: [None, None] };

    pub fn one(req: LockReq) -> Self {
        LockSet {
            reqs: [Some(req), None],
        }
    }

    /// Add a lock; it must not rank below the ones already in the set.
    pub fn with(mut self, req: LockReq) -> Self {
        let slot = self.reqs.iter().position(Option::is_none);
        let slot = slot.expect("a step holds at most two rmap locks");
        if let Some(prev) = slot.checked_sub(1).and_then(|i| self.reqs[i]) {
            assert!(
                prev.target.rank() <= req.target.rank(),
                "lock order violated: {req} after {prev}"
            );
        }
        self.reqs[slot] = Some(req);
        self
    }

    /// The locks in the order they must be taken.
    pub fn iter(&self) -> impl Iterator<Item = LockReq> + '_ {
        self.reqs.iter().flatten().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.reqs[0].is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_keeps_lock_order() {
        let s = LockSet::one(LockReq::write(LockTarget::IMmap(SpaceId(0))))
            .with(LockReq::write(LockTarget::AnonVmaRoot(FamilyId(3))));
        let ranks: Vec<u8> = s.iter().map(|r| r.target.rank()).collect();
        assert_eq!(ranks, vec![2, 3]);
    }

    #[test]
    #[should_panic(expected = "lock order violated")]
    fn set_rejects_inverted_order() {
        let _ = LockSet::one(LockReq::write(LockTarget::AnonVmaRoot(FamilyId(0))))
            .with(LockReq::write(LockTarget::IMmap(SpaceId(0))));
    }
}
