//! execl: what unixbench execl does to the rmap per exec (seed 003): a new
//! mm maps the binary's text and RW segments MAP_PRIVATE from the file
//! (i_mmap WRITE each), reads the text, writes its relocations into the RW
//! segment (COW copies, so the RW vma gets an anon_vma), then ld.so's RELRO
//! mprotect splits the RW file vma (i_mmap WRITE, then root WRITE), and the
//! task exits (every vma unlinked; file vmas under i_mmap WRITE, one at a
//! time before 2024). The binary is one of the world's files, chosen at
//! random, laid out as [`Binary::in_file`] says (at least 3 pages).
//!
//! An operation is one exec and exit; it fails when the file is too small
//! for a binary, no mm slot is free, or a fault found no page.

use super::reclaim::direct_reclaim_if_needed;
use super::{Worker, count_touch};
use crate::engine::storm::ctx::Ctx;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::OpOutcome;
use crate::rmap::exec::Binary;
use crate::rmap::ids::SpaceId;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    let l = &ctx.layout;
    let Some(bin) = Binary::in_file(SpaceId(w.below(l.files)), l.file_pages) else {
        return OpOutcome::Failed;
    };
    direct_reclaim_if_needed(ctx, w);
    // The syscall entries and exits: execve(2), ld.so's mprotect(2) and
    // exit_group(2).
    L::Platform::udelay(3 * ctx.world.costs.syscall);
    let done = ctx.world.exec(bin, &mut |t| count_touch(w, t));
    match done {
        Ok(Some(exec)) => {
            ctx.world.exit(exec.mm);
            OpOutcome::Done
        }
        Ok(None) | Err(_) => OpOutcome::Failed,
    }
}
