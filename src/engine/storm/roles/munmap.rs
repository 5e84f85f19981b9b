//! munmap: a task maps one of the files (i_mmap WRITE), faults one page of
//! it and unmaps it again (i_mmap WRITE). With `downgrade`, munmap drops
//! mmap_lock to READ before unlinking the vmas, as __do_munmap does since
//! 4.20: synchro-test's downgrader (write, downgrade, read) on mmap_lock.
//!
//! An operation is one map, fault and unmap; it fails when no task is live
//! to map into or the fault found no page.

use super::{Worker, count_touch};
use crate::engine::storm::ctx::Ctx;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::OpOutcome;
use crate::model::Role;
use crate::rmap::ids::SpaceId;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    let l = &ctx.layout;
    let random = w.below(u32::MAX) as usize;
    let Some(user) = ctx.pick_mm(ctx.workload.mm, random) else {
        return OpOutcome::Failed;
    };
    // The syscall entries and exits: mmap(2) and munmap(2).
    L::Platform::udelay(2 * ctx.world.costs.syscall);
    let file = SpaceId(w.below(l.files));
    let pages = l.file_pages;
    let Some(start) = ctx.world.mmap_file(user.mm, file, 0, pages) else {
        return OpOutcome::Failed;
    };
    let faulted = ctx
        .world
        .touch(user.mm, start + w.below(pages), false, None);
    let downgrade = ctx.workload.roles[Role::Munmap].downgrade.unwrap_or(false);
    ctx.world.munmap(user.mm, start, start + pages, downgrade);
    match faulted {
        Ok(Some(t)) => {
            count_touch(w, &t);
            OpOutcome::Done
        }
        Ok(None) | Err(_) => OpOutcome::Failed,
    }
}
