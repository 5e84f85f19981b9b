//! Memory pressure: a zone's free-page watermarks (mm/page_alloc.c, mm/vmscan.c).
//!
//! Free pages are the model's budget minus the pages the world holds. Below
//! `low`, kswapd (the reclaim role) is woken and reclaims until free pages
//! reach `high`; below `min`, a thread that allocates must first reclaim
//! itself (direct reclaim), so under pressure every allocating thread ends up
//! walking the rmap — the AIM7 livelock's mechanism (seed 004).
//!
//! The reclaim role walks in either case; the watermarks decide whether it
//! also unmaps the pages it finds unreferenced (reclaiming) or only ages them
//! (clearing young bits, as shrink_active_list does).

use crate::model::MemorySpec;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct Memory {
    spec: MemorySpec,
    /// kswapd is awake: set below `low`, cleared at `high`.
    kswapd_awake: AtomicBool,
}

impl Memory {
    pub fn new(spec: MemorySpec) -> Memory {
        Memory {
            spec,
            kswapd_awake: AtomicBool::new(false),
        }
    }

    pub fn batch(&self) -> u32 {
        self.spec.reclaim_batch
    }

    /// Free pages given `held` pages in the world; u64::MAX without a budget.
    pub fn free(&self, held: u64) -> u64 {
        if self.spec.limited() {
            self.spec.budget_pages.saturating_sub(held)
        } else {
            u64::MAX
        }
    }

    /// Whether reclaim should unmap unreferenced pages now (kswapd awake),
    /// updating the wake state from the free count.
    pub fn kswapd_reclaims(&self, held: u64) -> bool {
        if !self.spec.limited() {
            return false;
        }
        let free = self.free(held);
        if free < self.spec.low_pages {
            self.kswapd_awake.store(true, Ordering::Relaxed);
            true
        } else if free >= self.spec.high_pages {
            self.kswapd_awake.store(false, Ordering::Relaxed);
            false
        } else {
            self.kswapd_awake.load(Ordering::Relaxed)
        }
    }

    /// Whether an allocating thread must reclaim before it may go on.
    pub fn must_direct_reclaim(&self, held: u64) -> bool {
        self.spec.limited() && self.free(held) < self.spec.min_pages
    }

    /// Whether an allocation would exceed the budget outright.
    pub fn exhausted(&self, held: u64) -> bool {
        self.free(held) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> Memory {
        Memory::new(MemorySpec {
            budget_pages: 100,
            min_pages: 10,
            low_pages: 20,
            high_pages: 40,
            reclaim_batch: 32,
        })
    }

    #[test]
    fn kswapd_wakes_below_low_and_sleeps_at_high() {
        let m = memory();
        assert!(!m.kswapd_reclaims(70), "30 free: above low, never woken");
        assert!(m.kswapd_reclaims(85), "15 free: below low");
        assert!(m.kswapd_reclaims(70), "30 free: still short of high");
        assert!(!m.kswapd_reclaims(60), "40 free: high reached");
        assert!(!m.kswapd_reclaims(70), "30 free: asleep until low again");
    }

    #[test]
    fn direct_reclaim_below_min_only() {
        let m = memory();
        assert!(!m.must_direct_reclaim(90));
        assert!(m.must_direct_reclaim(91));
        assert!(m.exhausted(100) && !m.exhausted(99));
    }

    #[test]
    fn no_budget_means_no_pressure() {
        let m = Memory::new(MemorySpec::default());
        assert!(!m.kswapd_reclaims(u64::MAX - 1) && !m.must_direct_reclaim(1 << 40));
    }
}
