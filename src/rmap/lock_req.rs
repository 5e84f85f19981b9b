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

/// Which lock: one per mm, one per file, one per anon_vma family (its root).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum LockTarget {
    /// `mm->mmap_lock` (rw_semaphore): guards the mm's vma set.
    MmapLock(MmId),
    /// `mapping->i_mmap_rwsem`: guards one file's i_mmap tree.
    IMmap(SpaceId),
    /// `anon_vma->root->rwsem`: guards every anon_vma and AVC of one family.
    AnonVmaRoot(FamilyId),
}

impl LockTarget {
    /// Rank in the lock order of mm/rmap.c's header comment
    /// (mmap_lock -> i_mmap_rwsem -> anon_vma->rwsem): a thread may only take
    /// locks of non-decreasing rank. Two locks of one rank (two mms in fork) are
    /// ordered by the caller (parent before child, as dup_mmap nests them).
    pub fn rank(self) -> u8 {
        match self {
            LockTarget::MmapLock(_) => 0,
            LockTarget::IMmap(_) => 1,
            LockTarget::AnonVmaRoot(_) => 2,
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
        }
    }
}

/// The locks one step holds at once, in lock order: at most the two rmap locks
/// `vma_prepare` nests (i_mmap then anon_vma root, mm/vma.c). The mmap_locks of
/// an operation are held across all its steps and are listed by the operation,
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
        assert_eq!(ranks, vec![1, 2]);
    }

    #[test]
    #[should_panic(expected = "lock order violated")]
    fn set_rejects_inverted_order() {
        let _ = LockSet::one(LockReq::write(LockTarget::AnonVmaRoot(FamilyId(0))))
            .with(LockReq::write(LockTarget::IMmap(SpaceId(0))));
    }
}
