//! mprotect: change the protection of part of an anon vma and back:
//! __split_vma (mmap_lock WRITE, then the root anon_vma WRITE to re-key the
//! AVCs), then vma_merge the halves. With `remap`, one iteration of seed
//! 000's arena loop instead (Jakub Jelinek's test program, each thread on
//! its own region): write every page of the vma (each write faults, under
//! mmap_lock READ, since the last iteration discarded the pages; the first
//! prepares a new anon_vma), then mmap(PROT_NONE, MAP_FIXED) of the whole
//! vma, discarding its pages, then one mprotect(PROT_READ | PROT_WRITE) of
//! that range, which splits nothing: two mmap_lock writes per iteration.

use super::{Worker, count_touch};
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
    // The syscalls' entries and exits: two each way (mmap and mprotect, or
    // the split's mprotect and the merge's).
    L::Platform::udelay(2 * ctx.world.costs.syscall);
    let vma = w.vma_index(ctx);
    let start = l.anon_vma_start(vma);
    if ctx.workload.roles[Role::Mprotect].remap.unwrap_or(false) {
        let end = start + l.pages_per_vma;
        for addr in start..end {
            match ctx.world.touch(user.mm, addr, true, None) {
                Ok(Some(t)) => count_touch(w, &t),
                Ok(None) | Err(_) => return OpOutcome::Failed,
            }
        }
        let done = ctx.world.mmap_anon_fixed(user.mm, start, l.pages_per_vma)
            && ctx.world.mprotect(user.mm, start, end);
        return if done {
            OpOutcome::Done
        } else {
            OpOutcome::Failed
        };
    }
    let at = start + 1 + w.below(l.pages_per_vma - 1);
    if !ctx.world.split(user.mm, at) {
        return OpOutcome::Failed;
    }
    ctx.world.merge(user.mm, at);
    OpOutcome::Done
}
