//! execl: what unixbench execl does to the rmap per exec: map a shared
//! binary's file vma (i_mmap WRITE), fault one page of it, unmap it again
//! (i_mmap WRITE). `downgrade` has munmap downgrade mmap_lock to read before
//! unlinking, as __do_munmap did.

use super::Worker;
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
    let addr = start + w.below(pages);
    let faulted = ctx.world.touch(user.mm, addr, false, None);
    let downgrade = ctx.workload.roles[Role::Execl].downgrade.unwrap_or(false);
    ctx.world.munmap(user.mm, start, start + pages, downgrade);
    match faulted {
        Ok(Some(_)) => OpOutcome::Done,
        Ok(None) | Err(_) => OpOutcome::Failed,
    }
}
