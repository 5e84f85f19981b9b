//! What every worker of a run shares: the locked world, the workload, the
//! roster of tasks, memory pressure, and the stop flag.

use super::memory::Memory;
use super::roster::{MmUser, Roster};
use super::shared::SharedWorld;
use crate::locks::RawRwLock;
use crate::model::{MmChoice, WorkloadSpec, WorldSpec};
use std::sync::atomic::AtomicBool;

pub struct Ctx<L: RawRwLock> {
    pub world: SharedWorld<L>,
    pub layout: WorldSpec,
    pub workload: WorkloadSpec,
    pub memory: Memory,
    pub roster: Roster,
    pub stop: AtomicBool,
}

impl<L: RawRwLock> Ctx<L> {
    /// Pages the world holds now (allocated from its pool).
    pub fn held_pages(&self) -> u64 {
        u64::from(self.world.page_capacity()) - self.world.free_pages()
    }

    /// A task for a per-task role, with a user reference: the ancestor, or a
    /// random live task (skipping ones being replaced).
    pub fn pick_mm(&self, choice: MmChoice, random: usize) -> Option<MmUser<'_>> {
        match choice {
            MmChoice::Ancestor => self.roster.mmget(self.roster.ancestor()),
            MmChoice::Any => {
                (0..4).find_map(|i| self.roster.get((random + i) % self.roster.positions()))
            }
        }
    }
}
