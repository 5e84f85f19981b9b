//! Taking exactly the rmap locks a step declares ([`LockSet`]), in its order,
//! and handing the step the parts they guard: this world's side of
//! [`TakeStepLocks`], so [`crate::rmap::compose`] runs fork, teardown, split
//! and merge here under the real locks.
//!
//! Every writer step of src/rmap (fork's clone and own halves, an i_mmap
//! insert, unlink_anon_vmas, unlink_file_vma_batch, split's clone and
//! commit, merge's commit, __anon_vma_prepare joining a neighbour with its
//! page_table_lock, mmap of a file) declares its locks as data; the engine never picks locks by hand, so
//! what runs is what the step functions say the kernel takes.

use super::SharedWorld;
use super::spin::SpinGuard;
use crate::engine::storm::costs::Costs;
use crate::locks::RawRwLock;
use crate::locks::guard::WriteGuard;
use crate::locks::platform::Platform;
use crate::rmap::step_locks::{StepParts, TakeStepLocks, Work};
use crate::rmap::{AddressSpace, Family, FamilyId, LockSet, LockTarget, Mode};

/// The WRITE holds of one step: at most an i_mmap and a family root
/// (vma_prepare's pair), or a root and an mm's page_table_lock
/// (__anon_vma_prepare's). Fields drop in declaration order: the spinlock
/// first, then the root, then i_mmap, the reverse of acquisition, as
/// vma_complete releases them.
pub struct StepLocks<'a, L: RawRwLock> {
    page_table_lock: Option<SpinGuard<'a, L::Platform, ()>>,
    family: Option<WriteGuard<'a, L, Option<Family>>>,
    space: Option<WriteGuard<'a, L, AddressSpace>>,
    costs: &'a Costs,
}

/// What `work` costs: each piece at the profile's price.
fn cost(costs: &Costs, work: Work) -> u64 {
    match work {
        Work::Vmas(n) => u64::from(n) * costs.vma,
        Work::Avcs(n) => u64::from(n) * costs.avc,
        Work::Ptes(n) => u64::from(n) * costs.pte_copy,
    }
}

impl<L: RawRwLock> StepParts for StepLocks<'_, L> {
    fn parts(&mut self) -> (Option<&mut Family>, Option<&mut AddressSpace>) {
        let family = self.family.as_deref_mut().map(|slot| {
            slot.as_mut()
                .expect("a family linked from a locked vma is live")
        });
        (family, self.space.as_deref_mut())
    }

    fn clear_family(&mut self) {
        let slot = self.family.as_deref_mut();
        *slot.expect("the step locked a family") = None;
    }

    /// Work done for real under this step's locks: charged.
    fn did(&mut self, work: Work) {
        L::Platform::charge(cost(self.costs, work));
    }
}

/// A shared reference to the world takes the real locks; the guards live as
/// long as the reference, so a step's held locks borrow nothing else.
impl<'w, L: RawRwLock> TakeStepLocks for &'w SharedWorld<L> {
    type Held<'a>
        = StepLocks<'w, L>
    where
        Self: 'a;

    fn lock_step(&mut self, set: LockSet) -> StepLocks<'w, L> {
        SharedWorld::lock_step(*self, set)
    }

    fn free_family(&mut self, family: FamilyId) {
        SharedWorld::free_family(*self, family)
    }

    /// Work done for real under the caller's mmap_lock: charged.
    fn did(&mut self, work: Work) {
        L::Platform::charge(cost(&self.costs, work));
    }

    fn might_sleep(&mut self) {
        L::Platform::might_sleep();
    }
}

impl<L: RawRwLock> SharedWorld<L> {
    /// Take `set`'s locks in its order (all WRITE: every writer step's set).
    pub(super) fn lock_step(&self, set: LockSet) -> StepLocks<'_, L> {
        let mut held = StepLocks {
            page_table_lock: None,
            family: None,
            space: None,
            costs: &self.costs,
        };
        for req in set.iter() {
            assert_eq!(req.mode, Mode::Write, "{req}: steps lock for write");
            match req.target {
                LockTarget::IMmap(s) => held.space = Some(self.spaces[s.index()].write()),
                LockTarget::AnonVmaRoot(f) => held.family = Some(self.family_slot(f).write()),
                LockTarget::PageTableLock(mm) => {
                    let slot = self.mm_slot(mm).expect("a faulting mm's slot");
                    held.page_table_lock = Some(slot.page_table_lock.lock());
                }
                LockTarget::MmapLock(_) | LockTarget::VmaLock(..) | LockTarget::LruLock => {
                    unreachable!("{req}: no step this engine runs declares it")
                }
            }
        }
        held
    }
}
