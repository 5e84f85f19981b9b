//! touch: a task reads (or, `write_pct` of the time, writes) one of its anon
//! pages. A present PTE just gets its young bit set (no lock, as the MMU
//! does); a missing one faults it back in under mmap_lock READ, and a write
//! to a COW-shared page copies it: both allocate a page (direct reclaim first
//! when memory is below min). `disk_us` makes every touch a major fault that holds
//! mmap_lock for read while "waiting on disk" (seed 002's thread A).
//!
//! A touch of a reclaimed anon page faults on its swap entry and maps the
//! page back (a swap-in, or a swap-cache hit when another task's fault read
//! it in already): what keeps a reclaim storm going.
//!
//! A touch fails when memory is exhausted after direct reclaim, when no task
//! is free to touch, or when the fault finds no vma or no page.

use super::reclaim::direct_reclaim_if_needed;
use super::{Worker, count_touch};
use crate::engine::storm::ctx::Ctx;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::OpOutcome;
use crate::model::Role;
use crate::rmap::fault::Fault;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    let probe = ctx.touch_probe.as_ref().map(|p| (p, p.start()));
    let reclaimed = direct_reclaim_if_needed(ctx, w);
    if ctx.memory.exhausted(ctx.held_pages()) {
        return OpOutcome::Failed;
    }
    let random = w.below(u32::MAX) as usize;
    let Some(user) = ctx.pick_mm(ctx.workload.mm, random) else {
        return OpOutcome::Failed;
    };
    let spec = &ctx.workload.roles[Role::Touch];
    if let Some(us) = spec.disk_us {
        let disk = || L::Platform::sleep(us * 1_000);
        ctx.world.read_maps(user.mm, false, &disk);
    }
    let addr = page_to_touch(ctx, w);
    let write = w.below(100) < spec.write_pct.unwrap_or(0);
    match ctx.world.touch(user.mm, addr, write, None) {
        Ok(Some(t)) => {
            count_touch(w, &t);
            if let Some((p, start)) = probe
                && !reclaimed
                && t.fault == Fault::Hit
            {
                p.plain(start);
            }
            OpOutcome::Done
        }
        Ok(None) | Err(_) => OpOutcome::Failed,
    }
}

/// A page of one of the task's anon vmas (or of its first file mapping in a
/// world without anon vmas).
fn page_to_touch<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> u32 {
    let l = &ctx.layout;
    if l.anon_vmas == 0 {
        return l.file_start(0) + w.below(l.file_pages.max(1));
    }
    let vma = w.vma_index(ctx);
    l.anon_vma_start(vma) + w.below(l.pages_per_vma)
}
