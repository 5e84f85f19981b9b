//! monitor: a /proc/pid/maps reader: mmap_lock READ (or down_read_critical,
//! seed 002), walk the vma list, `work_ns` of formatting while holding it.

use super::{Worker, spin_for};
use crate::engine::storm::ctx::Ctx;
use crate::locks::RawRwLock;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker<'_>) {
    let spec = &ctx.workload.monitor;
    let random = w.below(u32::MAX) as usize;
    let Some(user) = ctx.pick_mm(ctx.workload.mm, random) else {
        return;
    };
    let critical = spec.read_critical.unwrap_or(false);
    let work = spec.work_ns;
    ctx.world.read_maps(user.mm, critical, &|| spin_for(work));
}
