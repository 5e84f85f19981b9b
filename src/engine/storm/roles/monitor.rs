//! monitor: a /proc/pid/maps reader: mmap_lock READ (or down_read_critical,
//! seed 002), walk the vma list, `work_ns` of formatting while holding it.

use super::Worker;
use crate::engine::storm::ctx::Ctx;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::OpOutcome;
use crate::model::Role;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    let spec = &ctx.workload.roles[Role::Monitor];
    let random = w.below(u32::MAX) as usize;
    // The user reference keeps the mm live (exit waits for it), so the read
    // always finds the mm; no task to read is the only failure.
    let Some(user) = ctx.pick_mm(ctx.workload.mm, random) else {
        return OpOutcome::Failed;
    };
    // The syscall entries and exits: read(2) of /proc/PID/maps.
    L::Platform::udelay(ctx.world.costs.syscall);
    let critical = spec.read_critical.unwrap_or(false);
    let work = spec.work_ns;
    ctx.world
        .read_maps(user.mm, critical, &|| L::Platform::udelay(work));
    OpOutcome::Done
}
