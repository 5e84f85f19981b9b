//! Taking exactly the rmap locks a step declares ([`LockSet`]), in its order,
//! and handing the step the parts they guard.
//!
//! Every writer step of src/rmap (fork's clone and own halves, an i_mmap
//! insert, unlink_anon_vmas, unlink_file_vma_batch, split's clone and
//! commit, merge's commit, __anon_vma_prepare joining a neighbour, mmap of a
//! file) declares its locks as data; the engine never picks locks by hand, so
//! what runs is what the step functions say the kernel takes.

use super::SharedWorld;
use super::domain::Exclusive;
use crate::locks::RawRwLock;
use crate::rmap::{AddressSpace, Family, LockSet, LockTarget, Mode};

/// The WRITE holds of one step: at most an i_mmap and a family root
/// (vma_prepare's pair). Fields drop in declaration order: the root first,
/// then i_mmap, the reverse of acquisition, as vma_complete releases them.
pub struct StepLocks<'a, L: RawRwLock> {
    family: Option<Exclusive<'a, L, Option<Family>>>,
    space: Option<Exclusive<'a, L, AddressSpace>>,
}

impl<L: RawRwLock> StepLocks<'_, L> {
    /// The locked family, if the step locked one. Panics if its slot is empty:
    /// a writer reaches a family through a vma it holds the mmap_lock of, and a
    /// family lives as long as any vma links to it.
    pub fn family(&mut self) -> Option<&mut Family> {
        self.parts().0
    }

    /// The locked address space, if the step locked one.
    pub fn space(&mut self) -> Option<&mut AddressSpace> {
        self.space.as_deref_mut()
    }

    /// Empty the locked family's slot: its root anon_vma was just freed
    /// (unlink_anon_vmas returned Gone).
    pub fn clear_family(&mut self) {
        let slot = self.family.as_deref_mut();
        *slot.expect("the step locked a family") = None;
    }

    /// Both parts at once (split and merge commits need both).
    pub fn parts(&mut self) -> (Option<&mut Family>, Option<&mut AddressSpace>) {
        let family = self.family.as_deref_mut().map(|slot| {
            slot.as_mut()
                .expect("a family linked from a locked vma is live")
        });
        (family, self.space.as_deref_mut())
    }
}

impl<L: RawRwLock> SharedWorld<L> {
    /// Take `set`'s locks in its order (all WRITE: every writer step's set).
    pub(super) fn lock_step(&self, set: LockSet) -> StepLocks<'_, L> {
        let mut held = StepLocks {
            family: None,
            space: None,
        };
        for req in set.iter() {
            assert_eq!(req.mode, Mode::Write, "{req}: steps lock for write");
            match req.target {
                LockTarget::IMmap(s) => held.space = Some(self.spaces[s.index()].write()),
                LockTarget::AnonVmaRoot(f) => held.family = Some(self.family_slot(f).write()),
                // The first fault's page_table_lock: this engine still runs
                // __anon_vma_prepare under mmap_lock WRITE, which covers it.
                LockTarget::PageTableLock(_) => {}
                LockTarget::MmapLock(_) | LockTarget::VmaLock(..) | LockTarget::LruLock => {
                    unreachable!("{req}: no step this engine runs declares it")
                }
            }
        }
        held
    }
}
