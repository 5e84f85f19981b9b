//! fork-exit: the AIM7 churn. Fork a new child of a task's ancestor
//! (anon_vma_fork per vma under the root WRITE lock, dup_mmap under both
//! mmap_locks), put it in the old task's place, then exit the old task
//! (unlink_anon_vmas under the root WRITE lock): the task count stays steady.

use super::Worker;
use super::reclaim::direct_reclaim_if_needed;
use crate::engine::storm::ctx::Ctx;
use crate::locks::RawRwLock;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker<'_>) {
    direct_reclaim_if_needed(ctx, w);
    let Some((position, old, parent)) = ctx.roster.claim_child() else {
        // No descendants to replace: fork and exit a child of the ancestor.
        match ctx.world.fork(ctx.roster.ancestor()) {
            Some(child) => ctx.world.exit(child),
            None => w.rec.local.failed += 1,
        }
        return;
    };
    match ctx.world.fork(parent) {
        Some(child) => {
            ctx.roster.publish(position, child);
            ctx.roster.begin_exit(old);
            ctx.world.exit(old);
        }
        None => {
            ctx.roster.publish(position, old);
            w.rec.local.failed += 1;
        }
    }
}
