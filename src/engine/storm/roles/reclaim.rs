//! reclaim: kswapd's LRU scan. Per page: page_referenced (clearing young bits);
//! if no mapping was young and memory is short, try_to_unmap and free it.
//! `try_lock` gives up on a contended root and keeps the page (folio_referenced
//! with rwc.try_lock, 2022); otherwise the walk blocks (the older kernel).
//! Direct reclaim by allocating threads runs the same scan.
//!
//! An operation is one page scanned: done when page_referenced walked it,
//! given up when its try_lock met a writer, failed when there was no live
//! page to scan or the page went away before the walk reached it.

use super::{Worker, idle_hook, vma_hook};
use crate::engine::storm::ctx::Ctx;
use crate::engine::storm::shared::WalkOutcome;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::{LockKey, OpOutcome};
use crate::model::Role;
use crate::rmap::ids::PageId;
use crate::rmap::page::Mapping;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    let unmap = ctx.memory.kswapd_reclaims(ctx.held_pages());
    match next_live_page(ctx, w) {
        Some(page) => scan_page(ctx, w, page, unmap),
        None => OpOutcome::Failed,
    }
}

/// The next live page at or after this worker's LRU hand (page id order
/// stands in for LRU order); the hand moves past it.
fn next_live_page<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> Option<PageId> {
    let page = ctx.world.pages().next_allocated(PageId(w.lru_hand))?;
    w.lru_hand = page.0.wrapping_add(1);
    Some(page)
}

fn key_of<L: RawRwLock>(ctx: &Ctx<L>, page: PageId) -> Option<LockKey> {
    Some(match ctx.world.pages().mapping(page)? {
        Mapping::Anon { family, .. } => LockKey::Family(family.0),
        Mapping::File { space } => LockKey::Space(space.0),
    })
}

/// page_referenced, then (if `unmap` and nobody referenced it) try_to_unmap.
fn scan_page<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker, page: PageId, unmap: bool) -> OpOutcome {
    let spec = &ctx.workload.roles[Role::Reclaim];
    let try_lock = spec.try_lock.unwrap_or(false);
    let key = key_of(ctx, page);
    let (work, yields) = (spec.work_ns, ctx.workload.cond_resched);
    let costs = ctx.world.costs;
    let mut visited = 0;
    let walked = if idle_hook::<L::Platform>(work, yields) {
        ctx.world.page_referenced(page, try_lock, &mut || {})
    } else {
        let mut hook = vma_hook::<L::Platform>(costs.vma_visit, work, yields);
        ctx.world.page_referenced(page, try_lock, &mut hook)
    };
    let (outcome, referenced) = match walked {
        WalkOutcome::Done { result, hold, .. } => {
            visited += u64::from(result.vmas_visited);
            if let Some(k) = key {
                w.local.hold(k, hold);
            }
            let outcome = if result.raced {
                OpOutcome::Failed
            } else {
                OpOutcome::Done
            };
            (outcome, result.hits > 0)
        }
        // Contended (try_lock): keep the page, as the 2022 kernel does.
        WalkOutcome::Contended => (OpOutcome::GaveUp, true),
        WalkOutcome::PageLocked | WalkOutcome::Free => (OpOutcome::Failed, true),
    };
    let mut hook = vma_hook::<L::Platform>(costs.unmap_pte, work, yields);
    if unmap
        && !referenced
        && let WalkOutcome::Done { result, hold, .. } = ctx.world.reclaim(page, &mut hook)
    {
        visited += u64::from(result.vmas_visited);
        if let Some(k) = key {
            w.local.hold(k, hold);
        }
        if ctx.world.pages().mapping(page).is_none() {
            w.local.pages_reclaimed += 1;
        }
    }
    w.local.vmas_visited += visited;
    outcome
}

/// An allocating thread below the min watermark reclaims a batch itself
/// before it may go on (__alloc_pages_direct_reclaim).
pub fn direct_reclaim_if_needed<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) {
    if !ctx.memory.must_direct_reclaim(ctx.held_pages()) {
        return;
    }
    let start = L::Platform::now_ns();
    w.local.direct_reclaims += 1;
    for _ in 0..ctx.memory.batch() {
        let Some(page) = next_live_page(ctx, w) else {
            break;
        };
        scan_page(ctx, w, page, true);
        if !ctx.memory.must_direct_reclaim(ctx.held_pages()) {
            break;
        }
    }
    w.local.direct_reclaim_ns += L::Platform::now_ns() - start;
}
