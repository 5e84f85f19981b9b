//! The native engine: real threads with fixed roles over one shared world.
//!
//! The world is built single-threaded, taken apart into lock domains
//! ([`shared::SharedWorld`]: one lock of the kind under test per root
//! anon_vma family and per file, one mmap_lock per mm), and every role's
//! threads run over it ([`storm`]) until the duration is up.

pub mod pin;
pub mod recorder;
pub mod storm;
pub mod summary;

use crate::Result;
use crate::engine::RunConfig;
use crate::locks::platform::Native as Platform;
use crate::locks::{KindInfo, LockVisitor, RawRwLock};
use crate::model::WorldSpec;
use crate::report::RunReport;
use crate::rmap::ids::MmId;
use crate::rmap::world::{Capacity, World};
use crate::engine::storm::ctx::Ctx;
use crate::engine::storm::memory::Memory;
use crate::engine::storm::roster::Roster;
use crate::engine::storm::shared;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Run `cfg` on real threads.
pub fn run(cfg: &RunConfig) -> Result<RunReport> {
    let (rmap_kind, _) = cfg.kinds();
    rmap_kind.dispatch::<Platform, _>(NativeRun { cfg })
}

struct NativeRun<'a> {
    cfg: &'a RunConfig,
}

impl LockVisitor for NativeRun<'_> {
    type Output = Result<RunReport>;

    fn visit<L: RawRwLock + KindInfo>(self) -> Result<RunReport> {
        let cfg = self.cfg;
        let spec = &cfg.model.world;
        let world = World::build_with(spec, capacity(cfg));
        let (tasks, parents) = roster_of(&world, spec);
        let mm_slots = world.mms.max_slots();
        let epoch = Instant::now();
        let ctx = Arc::new(Ctx {
            world: shared::SharedWorld::<L>::new(world, cfg.kinds().1, epoch),
            layout: spec.clone(),
            workload: cfg.model.workload.clone(),
            memory: Memory::new(cfg.model.memory.clone()),
            roster: Roster::new(&tasks, &parents, mm_slots),
            stop: AtomicBool::new(false),
        });
        let out = storm::run(ctx.clone(), cfg.duration, cfg.pin.as_ref(), cfg.seed);
        Ok(summary::report(cfg, &ctx, out))
    }
}

/// Room for the model's tasks plus the children fork-exit holds while it
/// replaces them, and for every page any task could fault in.
fn capacity(cfg: &RunConfig) -> Capacity {
    let spec = &cfg.model.world;
    let forkers = cfg.model.workload.fork_exit.threads;
    Capacity {
        mms: spec.tasks + 2 * forkers + 2,
        pages: u32::try_from(spec.page_bound()).unwrap_or(u32::MAX),
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
