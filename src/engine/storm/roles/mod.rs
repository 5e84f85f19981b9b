//! The roles of a storm, one small file each (will-it-scale's contract: one
//! operation per call, nothing else). A role's `op` does one operation on the
//! shared world and says how it ended ([`OpOutcome`]); the engine's worker
//! loop around it times it, counts it and thinks.

mod execl;
mod fork_exit;
mod monitor;
mod mprotect;
pub mod reclaim;
mod touch;

use super::ctx::Ctx;
use super::worker::Worker;
use crate::locks::RawRwLock;
use crate::metrics::record::OpOutcome;
use crate::model::Role;
use std::time::{Duration, Instant};

/// One operation of `role` by worker `w`.
#[inline]
pub fn op<L: RawRwLock>(role: Role, ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    match role {
        Role::Reclaim => reclaim::op(ctx, w),
        Role::ForkExit => fork_exit::op(ctx, w),
        Role::Touch => touch::op(ctx, w),
        Role::Mprotect => mprotect::op(ctx, w),
        Role::Execl => execl::op(ctx, w),
        Role::Monitor => monitor::op(ctx, w),
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
