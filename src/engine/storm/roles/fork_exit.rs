//! fork-exit: the AIM7 churn. Fork a new child of a task's ancestor
//! (anon_vma_fork per vma under the root WRITE lock, dup_mmap under both
//! mmap_locks), put it in the old task's place, then exit the old task
//! (unlink_anon_vmas under the root WRITE lock): the task count stays steady.
//! With `any_parent`, AIM7's fork_test instead: a random live task forks a
//! child that exits at once, so every job's fork takes the family's root
//! anon_vma WRITE lock, and only forks of the same task share an mmap_lock.

use super::Worker;
use super::reclaim::direct_reclaim_if_needed;
use crate::engine::storm::ctx::Ctx;
use crate::engine::storm::fork_probe::ForkProbe;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::OpOutcome;
use crate::model::{MmChoice, Role};
use crate::rmap::MmId;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    direct_reclaim_if_needed(ctx, w);
    // fork(2) and exit(2): their entries and exits.
    L::Platform::udelay(2 * ctx.world.costs.syscall);
    if ctx.workload.roles[Role::ForkExit]
        .any_parent
        .unwrap_or(false)
    {
        return fork_test(ctx, w);
    }
    let Some((position, old, parent)) = ctx.roster.claim_child() else {
        // No descendants to replace: fork and exit a child of the ancestor.
        let Some((child, fork_ns)) = fork(ctx, ctx.roster.ancestor()) else {
            return OpOutcome::Failed;
        };
        exit(ctx, child, fork_ns);
        return OpOutcome::Done;
    };
    let Some((child, fork_ns)) = fork(ctx, parent) else {
        ctx.roster.publish(position, old);
        return OpOutcome::Failed;
    };
    ctx.roster.publish(position, child);
    ctx.roster.begin_exit::<L::Platform>(old);
    exit(ctx, old, fork_ns);
    OpOutcome::Done
}

/// fork_test's iteration: a random live task forks, its child exits.
fn fork_test<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    let random = w.below(u32::MAX) as usize;
    let Some(parent) = ctx.pick_mm(MmChoice::Any, random) else {
        return OpOutcome::Failed;
    };
    let Some((child, fork_ns)) = fork(ctx, parent.mm) else {
        return OpOutcome::Failed;
    };
    exit(ctx, child, fork_ns);
    OpOutcome::Done
}

/// A child of `parent`, and the fork's time on the probe's clock.
fn fork<L: RawRwLock>(ctx: &Ctx<L>, parent: MmId) -> Option<(MmId, u64)> {
    match ForkProbe::time(ctx.fork_probe.as_ref(), || ctx.world.fork(parent)) {
        (Some(child), ns) => Some((child, ns)),
        (None, _) => None,
    }
}

/// Exit `mm`, whose fork took `fork_ns`: the probe counts the two together.
fn exit<L: RawRwLock>(ctx: &Ctx<L>, mm: MmId, fork_ns: u64) {
    let probe = ctx.fork_probe.as_ref();
    let ((), exit_ns) = ForkProbe::time(probe, || ctx.world.exit(mm));
    if let Some(p) = probe {
        p.cycled(fork_ns + exit_ns);
    }
}
