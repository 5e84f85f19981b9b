//! mprotect: change the protection of part of an anon vma and back:
//! __split_vma (mmap_lock WRITE, then the root anon_vma WRITE to re-key the
//! AVCs), then vma_merge the halves. With `remap`, first mmap the whole vma
//! again with MAP_FIXED, discarding its pages: seed 000's loop of
//! touch / mmap(PROT_NONE, MAP_FIXED) / mprotect, which makes every touch fault.

use super::Worker;
use crate::engine::storm::ctx::Ctx;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::OpOutcome;
use crate::model::Role;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    let l = &ctx.layout;
    if l.anon_vmas == 0 || l.pages_per_vma < 2 {
        return OpOutcome::Failed;
    }
    let random = w.below(u32::MAX) as usize;
    let Some(user) = ctx.pick_mm(ctx.workload.mm, random) else {
        return OpOutcome::Failed;
    };
    let remap = ctx.workload.roles[Role::Mprotect].remap.unwrap_or(false);
    // The syscalls' entries and exits: mprotect(2) for the split and again
    // for the merge, and mmap(2) first with `remap`.
    L::Platform::udelay((2 + u64::from(remap)) * ctx.world.costs.syscall);
    let vma = w.vma_index(ctx);
    let start = l.anon_vma_start(vma);
    if remap {
        ctx.world.mmap_anon_fixed(user.mm, start, l.pages_per_vma);
    }
    let at = start + 1 + w.below(l.pages_per_vma - 1);
    if !ctx.world.split(user.mm, at) {
        return OpOutcome::Failed;
    }
    ctx.world.merge(user.mm, at);
    OpOutcome::Done
}
