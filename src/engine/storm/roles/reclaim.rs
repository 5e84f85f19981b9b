//! reclaim: kswapd's LRU scan (mm/vmscan.c shrink_lruvec). It isolates a
//! batch of `memory.reclaim_batch` pages (SWAP_CLUSTER_MAX, 32, by default)
//! under the lru_lock, from the active list while the inactive one is low
//! (shrink_active_list) and from the inactive list otherwise, then walks
//! them one per operation: page_referenced (clearing young bits); an old
//! inactive page, while memory is short, is reclaimed (add_to_swap for an
//! anon page, try_to_unmap leaving swap entries, freed once unmapped); when
//! the batch is walked, every page goes back under the lru_lock by its
//! verdict (referenced inactive ones go to the active list, every active
//! one is deactivated; [`crate::rmap::lru::verdict`]). `try_lock` gives up
//! on a contended root and keeps the page at the inactive list's head
//! (folio_referenced with rwc.try_lock, 2022); otherwise the walk blocks
//! (the older kernel).
//!
//! Direct reclaim (an allocating thread below the min watermark) shrinks
//! one whole batch itself, after too_many_isolated() has let it in:
//! reclaim_throttle (5.16+) sleeps until fewer pages are isolated or
//! HZ/50 (20 ms) passes; still too many, it gives up that entry, as
//! shrink_inactive_list returns 0 after one stall.
//!
//! An operation is one page scanned: done when page_referenced walked it,
//! given up when its try_lock met a writer, failed when there was no page
//! to isolate or the page turned out to belong elsewhere under the lock.

use super::{Worker, idle_hook, vma_hook};
use crate::engine::storm::ctx::Ctx;
use crate::engine::storm::shared::{Isolated, LruBatch, WalkOutcome};
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::{LockKey, OpOutcome};
use crate::model::Role;
use crate::rmap::ids::PageId;
use crate::rmap::lru::{self, List, Verdict, Walked};
use crate::rmap::page::Mapping;

/// reclaim_throttle's VMSCAN_THROTTLE_ISOLATED timeout: HZ/50 (mm/vmscan.c
/// since 5.16, Mel Gorman's "throttle reclaim when too many pages are
/// isolated"; before it shrink_inactive_list slept msleep(100)).
const THROTTLE_TIMEOUT_NS: u64 = 20_000_000;
/// How often a throttled reclaimer looks again: one jiffy at HZ=1000. The
/// kernel's waiter is woken when a too_many_isolated() check finds the
/// isolated count low again (wake_throttle_isolated); polling each jiffy
/// stands for that wakeup.
const JIFFY_NS: u64 = 1_000_000;

pub fn op<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> OpOutcome {
    let unmap = ctx.memory.kswapd_reclaims(ctx.held_pages());
    let mut batch = match w.lru.take() {
        Some(b) => b,
        None => match isolate(ctx, w, false) {
            Isolated::Batch(b) => b,
            Isolated::Throttle | Isolated::Empty => return OpOutcome::Failed,
        },
    };
    let page = batch.next_page().expect("a batch in hand has pages left");
    let outcome = scan_page(ctx, w, &mut batch, page, unmap);
    if batch.drained() {
        putback(ctx, w, batch);
    } else {
        w.lru = Some(batch);
    }
    outcome
}

/// isolate_lru_folios of one batch, its lru_lock wait counted.
fn isolate<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker, direct: bool) -> Isolated {
    let (got, waited) = ctx.world.isolate(ctx.memory.batch() as usize, direct);
    w.local.lru_wait_ns += waited;
    got
}

fn putback<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker, batch: LruBatch) {
    w.local.lru_wait_ns += ctx.world.putback(batch);
}

fn key_of<L: RawRwLock>(ctx: &Ctx<L>, page: PageId) -> Option<LockKey> {
    Some(match ctx.world.pages().mapping(page)? {
        Mapping::Anon { family, .. } => LockKey::Family(family.0),
        Mapping::File { space } => LockKey::Space(space.0),
    })
}

/// page_referenced of one isolated page, then (if `unmap`, the page is on
/// the inactive list and nobody referenced it) its reclaim; the page's
/// verdict goes into `batch`.
fn scan_page<L: RawRwLock>(
    ctx: &Ctx<L>,
    w: &mut Worker,
    batch: &mut LruBatch,
    page: PageId,
    unmap: bool,
) -> OpOutcome {
    let spec = &ctx.workload.roles[Role::Reclaim];
    let try_lock = spec.try_lock.unwrap_or(false);
    let key = key_of(ctx, page);
    let (work, yields) = (spec.work_ns, ctx.workload.cond_resched);
    let costs = ctx.world.costs;
    let probe = ctx.walk_probe.as_ref().map(|p| (p, p.start()));
    let walked = if idle_hook::<L::Platform>(work, yields) {
        ctx.world.page_referenced(page, try_lock, &mut || {})
    } else {
        let mut hook = vma_hook::<L::Platform>(costs.walk, costs.vma_visit, work, yields);
        ctx.world.page_referenced(page, try_lock, &mut hook)
    };
    if let (Some((p, start)), WalkOutcome::Done { result, .. }) = (probe, &walked) {
        p.walked(start, result.vmas_visited);
    }
    let (outcome, found) = match walked {
        WalkOutcome::Done { result, hold } => {
            w.local.vmas_visited += u64::from(result.vmas_visited);
            if let Some(k) = key {
                w.local.hold(k, hold);
            }
            match (result.raced, result.hits > 0) {
                (true, _) => (OpOutcome::Failed, Walked::Old),
                (false, true) => (OpOutcome::Done, Walked::Referenced),
                (false, false) => (OpOutcome::Done, Walked::Old),
            }
        }
        // Contended (try_lock): keep the page, as the 2022 kernel does.
        WalkOutcome::Contended => (OpOutcome::GaveUp, Walked::Contended),
        WalkOutcome::PageLocked | WalkOutcome::Free => (OpOutcome::Failed, Walked::Old),
    };
    let scanning = unmap && batch.from == List::Inactive;
    if scanning {
        w.local.pages_scanned += 1;
    }
    let verdict = lru::verdict(batch.from, found, || {
        scanning && reclaim_page(ctx, w, page, key)
    });
    if verdict == Verdict::Reclaimed {
        let second = w.second::<L::Platform>();
        w.local.reclaimed(second);
    }
    batch.decide(page, verdict);
    outcome
}

/// try_to_unmap of an isolated page, then whether it is now free to go
/// (nothing maps it, no cache holds it: freed at putback).
fn reclaim_page<L: RawRwLock>(
    ctx: &Ctx<L>,
    w: &mut Worker,
    page: PageId,
    key: Option<LockKey>,
) -> bool {
    let spec = &ctx.workload.roles[Role::Reclaim];
    let (work, yields) = (spec.work_ns, ctx.workload.cond_resched);
    let costs = ctx.world.costs;
    let mut hook = vma_hook::<L::Platform>(costs.walk, costs.unmap_pte, work, yields);
    if let WalkOutcome::Done { result, hold } = ctx.world.reclaim(page, &mut hook) {
        w.local.vmas_visited += u64::from(result.vmas_visited);
        if let Some(k) = key {
            w.local.hold(k, hold);
        }
    }
    ctx.world.only_isolated(page)
}

/// An allocating thread below the min watermark reclaims a batch itself
/// before it may go on (__alloc_pages_direct_reclaim -> shrink_lruvec),
/// throttled first if too many pages are isolated. True if it did.
pub fn direct_reclaim_if_needed<L: RawRwLock>(ctx: &Ctx<L>, w: &mut Worker) -> bool {
    if !ctx.memory.must_direct_reclaim(ctx.held_pages()) {
        return false;
    }
    let start = L::Platform::now_ns();
    w.local.direct_reclaims += 1;
    let mut got = isolate(ctx, w, true);
    if let Isolated::Throttle = got {
        w.local.throttled += 1;
        reclaim_throttle(ctx);
        got = isolate(ctx, w, true);
    }
    if let Isolated::Batch(mut batch) = got {
        while let Some(page) = batch.next_page() {
            scan_page(ctx, w, &mut batch, page, true);
        }
        putback(ctx, w, batch);
    }
    w.local.direct_reclaim_ns += L::Platform::now_ns() - start;
    true
}

/// reclaim_throttle(VMSCAN_THROTTLE_ISOLATED): sleep until fewer pages are
/// isolated, at most [`THROTTLE_TIMEOUT_NS`].
fn reclaim_throttle<L: RawRwLock>(ctx: &Ctx<L>) {
    let mut slept = 0;
    while slept < THROTTLE_TIMEOUT_NS && ctx.world.too_many_isolated() {
        L::Platform::sleep(JIFFY_NS);
        slept += JIFFY_NS;
    }
}
