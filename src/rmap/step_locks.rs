//! Taking the rmap locks a step declares ([`LockSet`]) and handing the step
//! the parts they guard: the one seam between the kernel operations composed
//! in [`super::compose`] and whoever holds the world.
//!
//! The single-threaded [`World`](super::World) takes no lock: its
//! [`Unlocked`] view hands out the parts directly. An engine implements
//! [`TakeStepLocks`] with its real locks, so the same composition runs the
//! same steps in the same order under each step's declared locks.

use super::family::Family;
use super::ids::FamilyId;
use super::lock_req::{LockSet, LockTarget, Mode};
use super::slots::{IdAlloc, SlotTable};
use super::space::AddressSpace;

/// Work a composed operation did besides taking locks, reported to whoever
/// holds the world so it can account for its time: real threads spent it
/// already; the simulator charges each piece the machine profile's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// vm_area_structs copied (vm_area_dup) or freed.
    Vmas(u32),
    /// anon_vma_chains linked or unlinked (slab and interval tree).
    Avcs(u32),
    /// PTEs copied (copy_pte_range) or zapped (zap_pte_range).
    Ptes(u32),
}

/// The [`Work`] a single-threaded world's compositions did, by kind: what
/// `calibrate` divides the native time of a fork and exit by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkTally {
    pub vmas: u64,
    pub avcs: u64,
    pub ptes: u64,
}

impl WorkTally {
    pub fn add(&mut self, work: Work) {
        match work {
            Work::Vmas(n) => self.vmas += u64::from(n),
            Work::Avcs(n) => self.avcs += u64::from(n),
            Work::Ptes(n) => self.ptes += u64::from(n),
        }
    }
}

/// Whoever can take a step's locks.
pub trait TakeStepLocks {
    /// One step's held locks; dropping it releases them.
    type Held<'a>: StepParts
    where
        Self: 'a;

    /// Take `set`'s locks in its order. Every writer step locks for WRITE.
    fn lock_step(&mut self, set: LockSet) -> Self::Held<'_>;

    /// Give back the slot of a family whose root anon_vma went away
    /// (unlink_anon_vmas returned Gone), once its lock is released.
    fn free_family(&mut self, family: FamilyId);

    /// `work` done outside any step's locks (under the caller's mmap_lock).
    #[inline]
    fn did(&mut self, work: Work) {
        let _ = work;
    }

    /// A sleeping allocation is next (vm_area_dup, GFP_KERNEL, whose slab
    /// hook calls might_sleep()), under the caller's mmap_lock and no rmap
    /// lock: where a voluntarily preemptible kernel may switch tasks.
    #[inline]
    fn might_sleep(&mut self) {}
}

/// The parts a step's locks guard: at most a family (root anon_vma) and an
/// address space (i_mmap), vma_prepare's pair.
pub trait StepParts {
    /// Both parts at once (split and merge commits need both). A locked
    /// family's slot is never empty: a writer reaches a family through a vma
    /// it holds the mmap_lock of, and a family lives as long as a vma links it.
    fn parts(&mut self) -> (Option<&mut Family>, Option<&mut AddressSpace>);

    /// Empty the locked family's slot: its root anon_vma was just freed.
    fn clear_family(&mut self);

    /// The locked family, if the step locked one.
    fn family(&mut self) -> Option<&mut Family> {
        self.parts().0
    }

    /// The locked address space, if the step locked one.
    fn space(&mut self) -> Option<&mut AddressSpace> {
        self.parts().1
    }

    /// `work` done while this step's locks are held.
    #[inline]
    fn did(&mut self, work: Work) {
        let _ = work;
    }
}

/// The families, their slot allocator and the files of a
/// [`World`](super::World), for a composition on one thread: no locks.
pub struct Unlocked<'w> {
    pub families: &'w mut SlotTable<Option<Family>>,
    pub family_ids: &'w mut IdAlloc,
    pub spaces: &'w mut [AddressSpace],
    /// Where the work done is counted.
    pub work: &'w mut WorkTally,
}

/// The parts a step's locks would guard, borrowed from an [`Unlocked`].
pub struct UnlockedParts<'a> {
    family: Option<&'a mut Option<Family>>,
    space: Option<&'a mut AddressSpace>,
    work: &'a mut WorkTally,
}

impl TakeStepLocks for Unlocked<'_> {
    type Held<'a>
        = UnlockedParts<'a>
    where
        Self: 'a;

    fn lock_step(&mut self, set: LockSet) -> UnlockedParts<'_> {
        let (mut family, mut space) = (None, None);
        for req in set.iter() {
            assert_eq!(req.mode, Mode::Write, "{req}: steps lock for write");
            match req.target {
                LockTarget::IMmap(s) => space = Some(s),
                LockTarget::AnonVmaRoot(f) => family = Some(f),
                LockTarget::MmapLock(_)
                | LockTarget::VmaLock(..)
                | LockTarget::PageTableLock(_)
                | LockTarget::LruLock => {
                    unreachable!("{req}: a step's set holds rmap locks only")
                }
            }
        }
        UnlockedParts {
            family: family.map(|f| {
                self.families
                    .get_mut(f.index())
                    .unwrap_or_else(|| panic!("{f:?} was never allocated"))
            }),
            space: space.map(|s| &mut self.spaces[s.index()]),
            work: self.work,
        }
    }

    fn free_family(&mut self, family: FamilyId) {
        self.family_ids.free(family.0);
    }

    fn did(&mut self, work: Work) {
        self.work.add(work);
    }
}

impl StepParts for UnlockedParts<'_> {
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

    fn did(&mut self, work: Work) {
        self.work.add(work);
    }
}
