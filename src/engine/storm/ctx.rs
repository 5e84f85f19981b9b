//! What every worker of a run shares: the locked world, the workload, the
//! roster of tasks, memory pressure, and the stop flag.

use super::costs::Costs;
use super::fork_probe::ForkProbe;
use super::memory::Memory;
use super::roster::{MmUser, Roster};
use super::shared::SharedWorld;
use super::touch_probe::TouchProbe;
use super::walk_probe::WalkProbe;
use crate::locks::{LockKind, RawRwLock};
use crate::model::{MmChoice, Model, Role, WorkloadSpec, WorldSpec};
use crate::rmap::ids::MmId;
use crate::rmap::world::{Capacity, World};
use std::sync::atomic::AtomicBool;

pub struct Ctx<L: RawRwLock> {
    pub world: SharedWorld<L>,
    pub layout: WorldSpec,
    pub workload: WorkloadSpec,
    pub memory: Memory,
    pub roster: Roster,
    pub stop: AtomicBool,
    /// Times the long page_referenced walks (`calibrate` only; None in a
    /// run, whose walks are not timed).
    pub walk_probe: Option<WalkProbe>,
    /// Times the forks and exits (`calibrate` only, as `walk_probe`).
    pub fork_probe: Option<ForkProbe>,
    /// Times the touches of mapped pages (`calibrate` only, as `walk_probe`).
    pub touch_probe: Option<TouchProbe>,
}

impl<L: RawRwLock> Ctx<L> {
    /// Build `model`'s world single-threaded and take it apart into lock
    /// domains (`L` on the rmap locks, `mmap_lock` on every mm, faults
    /// locking what `workload.fault_lock` says), its kernel work costing
    /// `costs`, on a machine of `cpus` CPUs.
    pub fn build(model: &Model, mmap_lock: LockKind, costs: Costs, cpus: usize) -> Ctx<L> {
        let spec = &model.world;
        let world = World::build_with(spec, capacity(model));
        let (tasks, parents) = roster_of(&world, spec);
        let mm_slots = world.mms.max_slots();
        let remote = mm_remote_cpus(&model.workload, cpus);
        Ctx {
            world: SharedWorld::new(world, mmap_lock, costs, remote)
                .with_fault_lock(model.workload.fault_lock),
            layout: spec.clone(),
            workload: model.workload.clone(),
            memory: Memory::new(model.memory.clone()),
            roster: Roster::new(&tasks, &parents, mm_slots),
            stop: AtomicBool::new(false),
            walk_probe: None,
            fork_probe: None,
            touch_probe: None,
        }
    }

    /// The same storm with its long walks timed by `probe`.
    pub fn with_walk_probe(mut self, probe: WalkProbe) -> Ctx<L> {
        self.walk_probe = Some(probe);
        self
    }

    /// The same storm with its forks and exits timed by `probe`.
    pub fn with_fork_probe(mut self, probe: ForkProbe) -> Ctx<L> {
        self.fork_probe = Some(probe);
        self
    }

    /// The same storm with its touches of mapped pages timed by `probe`.
    pub fn with_touch_probe(mut self, probe: TouchProbe) -> Ctx<L> {
        self.touch_probe = Some(probe);
        self
    }

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

/// The CPUs besides a flusher's that a task's mm runs on: a process of
/// every worker thread when the roles share the ancestor's mm (seeds 000-002,
/// as many CPUs as those threads can occupy), else single-threaded tasks,
/// each on some CPU other than the one reclaiming it.
fn mm_remote_cpus(workload: &WorkloadSpec, cpus: usize) -> u64 {
    match workload.mm {
        MmChoice::Ancestor => u64::from(workload.threads())
            .min(cpus as u64)
            .saturating_sub(1),
        MmChoice::Any => 1,
    }
}

/// Room for the model's tasks plus the children fork-exit holds while it
/// replaces them and the new mm each exec builds, and for every page any
/// task could fault in (an exec's private copies of its binary included).
fn capacity(model: &Model) -> Capacity {
    let spec = &model.world;
    let roles = &model.workload.roles;
    let forkers = roles[Role::ForkExit].threads;
    let execs = roles[Role::Execl].threads;
    Capacity {
        mms: spec.tasks + 2 * forkers + execs + 2,
        pages: u32::try_from(spec.page_bound() + u64::from(execs) * u64::from(spec.file_pages))
            .unwrap_or(u32::MAX),
    }
}

/// Every initial task in id order, and the ancestor each descends from (the
/// build spawns each ancestor, then forks its descendants, in that order).
fn roster_of(world: &World, spec: &WorldSpec) -> (Vec<MmId>, Vec<MmId>) {
    let ids: Vec<MmId> = world.live_mms().map(|(id, _)| id).collect();
    let mut parents = Vec::with_capacity(ids.len());
    let mut next = 0usize;
    for a in 0..spec.ancestors {
        let group = 1 + spec.descendants_of(a) as usize;
        parents.extend(std::iter::repeat_n(ids[next], group));
        next += group;
    }
    (ids, parents)
}
