//! The roles of a storm, one small file each (will-it-scale's contract: one
//! operation per call, nothing else). A role's `op` does one operation on the
//! shared world; the worker loop around it times it, counts it and thinks.

mod execl;
mod fork_exit;
mod monitor;
mod mprotect;
pub mod reclaim;
mod touch;

use super::ctx::Ctx;
use crate::engine::native::recorder::Recorder;
use crate::locks::RawRwLock;
use crate::model::workload::ROLES;
use crate::model::{MmChoice, RoleSpec};
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::{Duration, Instant};

/// Every role, in [`ROLES`] order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Reclaim,
    ForkExit,
    Touch,
    Mprotect,
    Execl,
    Monitor,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::Reclaim,
        Role::ForkExit,
        Role::Touch,
        Role::Mprotect,
        Role::Execl,
        Role::Monitor,
    ];

    /// The model's and the report's name.
    pub fn name(self) -> &'static str {
        ROLES[self as usize]
    }

    /// One operation.
    pub fn op<L: RawRwLock>(self, ctx: &Ctx<L>, w: &mut Worker<'_>) {
        match self {
            Role::Reclaim => reclaim::op(ctx, w),
            Role::ForkExit => fork_exit::op(ctx, w),
            Role::Touch => touch::op(ctx, w),
            Role::Mprotect => mprotect::op(ctx, w),
            Role::Execl => execl::op(ctx, w),
            Role::Monitor => monitor::op(ctx, w),
        }
    }

    /// Whether this role's operations are the AIM7 jobs ("useful work"), as
    /// opposed to reclaim or bookkeeping.
    pub fn useful(self) -> bool {
        matches!(self, Role::Touch | Role::ForkExit)
    }
}

/// One worker thread's private state.
pub struct Worker<'a> {
    pub role: Role,
    /// This thread's number within its role (a per-thread range of the mm).
    pub nth: usize,
    pub rng: Xoshiro256PlusPlus,
    pub rec: Recorder<'a>,
    /// This reclaimer's LRU hand (page id), spread so reclaimers scan
    /// different pages rather than bump one shared counter.
    pub lru_hand: u32,
}

impl Worker<'_> {
    pub fn spec<'s, L: RawRwLock>(&self, ctx: &'s Ctx<L>) -> &'s RoleSpec {
        ctx.workload.role(self.role.name())
    }

    /// A random index below `n` (n > 0).
    pub fn below(&mut self, n: u32) -> u32 {
        self.rng.random_range(0..n)
    }

    /// The vma index this operation works on: the thread's own one when all
    /// threads share the ancestor's mm (their "own ranges", seed 000), a
    /// random one otherwise.
    pub fn vma_index<L: RawRwLock>(&mut self, ctx: &Ctx<L>) -> u32 {
        let n = ctx.layout.anon_vmas.max(1);
        match ctx.workload.mm {
            MmChoice::Ancestor => (self.nth as u32) % n,
            MmChoice::Any => self.below(n),
        }
    }
}

/// Busy work standing in for `ns` of CPU: udelay, as synchro-test and
/// locktorture's delays spin rather than sleep.
#[inline]
pub fn spin_for(ns: u64) {
    if ns == 0 {
        return;
    }
    let until = Instant::now() + Duration::from_nanos(ns);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// The per-vma hook of a walk: the configured work, and cond_resched() if
/// the model asks (rmap_walk calls it for every vma). A concrete closure, so
/// with neither configured it inlines to nothing inside the walk loop.
pub fn vma_hook(work_ns: u64, cond_resched: bool) -> impl FnMut() {
    move || {
        spin_for(work_ns);
        if cond_resched {
            std::thread::yield_now();
        }
    }
}
