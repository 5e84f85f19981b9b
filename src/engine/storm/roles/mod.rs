//! The roles of a storm, one small file each (will-it-scale's contract: one
//! operation per call, nothing else). A role's `op` does one operation on the
//! shared world and says how it ended ([`OpOutcome`]); the engine's worker
//! loop around it times it, counts it and thinks.

mod execl;
mod fork_exit;
mod monitor;
mod mprotect;
mod munmap;
pub mod reclaim;
mod touch;

use super::costs::WalkCharge;
use super::ctx::Ctx;
use super::shared::Touched;
use super::worker::Worker;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::OpOutcome;
use crate::model::Role;
use crate::rmap::fault::Fault;

/// One operation of `role` by worker `w`.
#[inline]
pub fn op<L: RawRwLock>(role: Role, ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    w.start::<L::Platform>();
    match role {
        Role::Reclaim => reclaim::op(ctx, w),
        Role::ForkExit => fork_exit::op(ctx, w),
        Role::Touch => touch::op(ctx, w),
        Role::Mprotect => mprotect::op(ctx, w),
        Role::Execl => execl::op(ctx, w),
        Role::Monitor => monitor::op(ctx, w),
        Role::Munmap => munmap::op(ctx, w),
    }
}

/// Count what one touch did in the worker's record: swap-ins and
/// swap-cache hits, its vma_lock events, its lru_lock wait.
pub fn count_touch(w: &mut Worker, t: &Touched) {
    if let Fault::SwapIn { cache_hit, .. } = t.fault {
        if cache_hit {
            w.local.swap_cache_hits += 1;
        } else {
            w.local.swapins += 1;
        }
    }
    w.local.vma_lock.add(&t.vma_lock);
    w.local.lru_wait_ns += t.lru_wait_ns;
}

/// The per-vma hook of a walk: the kernel work of one visit (charged: real
/// threads did it), and with the first one the walk's own start
/// (`walk_ns`: the anon_vma and the interval tree's search, done under the
/// lock), the configured extra work (`work_ns`, udelayed), the
/// cond_resched() rmap_walk calls for every vma, and a sched_yield if the
/// model asks for one (`yield_each`). Every call is a preemption point where
/// the platform has them.
#[inline]
pub fn vma_hook<P: Platform>(
    walk_ns: u64,
    visit_ns: u64,
    work_ns: u64,
    yield_each: bool,
) -> impl FnMut() {
    let mut charge = WalkCharge::new(walk_ns, visit_ns);
    move || {
        P::charge(charge.next_vma());
        P::udelay(work_ns);
        P::cond_resched();
        if yield_each {
            P::yield_now();
        }
    }
}

/// Whether a walk's hook would do nothing on `P` (real threads, no extra
/// work, no yields): the walk then gets an empty closure, which a hook that
/// only tests its settings is not (it cost about 25% of a 10,001-vma walk,
/// measured with `run --threads 1`).
#[inline]
pub fn idle_hook<P: Platform>(work_ns: u64, yield_each: bool) -> bool {
    !P::CHARGES && work_ns == 0 && !yield_each
}
