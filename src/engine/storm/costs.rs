//! What the kernel work of a storm's operations costs, from the machine
//! profile's `[work]` section, and how each platform spends it.
//!
//! Work the storm does for real (a walk's visit of a vma through its page
//! tables, a fork's copy of a PTE, linking an anon_vma_chain) is *charged*:
//! natively nothing more happens, the time was spent; the simulator, whose
//! real work takes no virtual time, advances the thread's clock by the
//! profile's figure. Work the storm only stands for (the TLB-flush IPIs of
//! try_to_unmap, a page fault's entry and clearing of 4 KiB, a syscall's
//! entry and exit) is *udelayed*: both engines spend it, natively by
//! spinning. Each figure's source is in the profile (models/machines/).

use crate::model::machine::WorkCosts;

/// The profile's `[work]` costs, whole nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Costs {
    pub syscall: u64,
    pub vma_visit: u64,
    pub walk: u64,
    pub unmap_pte: u64,
    pub tlb_flush: u64,
    pub tlb_ipi: u64,
    pub avc: u64,
    pub vma: u64,
    pub pte_copy: u64,
    pub fault: u64,
    pub swapin: u64,
    pub touch: u64,
    pub lru_page: u64,
}

impl Costs {
    pub fn of(w: &WorkCosts) -> Costs {
        let ns = |x: f64| x.round() as u64;
        Costs {
            syscall: ns(w.syscall_ns),
            vma_visit: ns(w.vma_visit_ns),
            walk: ns(w.walk_ns),
            unmap_pte: ns(w.unmap_pte_ns),
            tlb_flush: ns(w.tlb_flush_ns),
            tlb_ipi: ns(w.tlb_ipi_ns),
            avc: ns(w.avc_ns),
            vma: ns(w.vma_ns),
            pte_copy: ns(w.pte_copy_ns),
            fault: ns(w.fault_ns),
            swapin: ns(w.swapin_ns),
            touch: ns(w.touch_ns),
            lru_page: ns(w.lru_page_ns),
        }
    }

    /// The TLB flush after clearing a PTE of an mm that runs on `remote`
    /// CPUs other than the flushing one: the local flush, and one IPI per
    /// remote CPU (flush_tlb_mm_range's on_each_cpu_cond_mask over
    /// mm_cpumask).
    pub fn tlb_shootdown(&self, remote: u64) -> u64 {
        self.tlb_flush + self.tlb_ipi * remote
    }
}

/// What one rmap walk charges at each vma it visits: the visit, and with
/// the first one the walk's own start (the anon_vma and the interval tree's
/// search), which a walk pays once however many vmas it visits.
#[derive(Clone, Copy, Debug)]
pub struct WalkCharge {
    start: u64,
    visit: u64,
}

impl WalkCharge {
    pub fn new(start: u64, visit: u64) -> WalkCharge {
        WalkCharge { start, visit }
    }

    /// The charge for the next vma visited.
    pub fn next_vma(&mut self) -> u64 {
        std::mem::take(&mut self.start) + self.visit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_pays_its_start_with_its_first_vma_only() {
        let mut w = WalkCharge::new(300, 40);
        assert_eq!(w.next_vma(), 340);
        assert_eq!(w.next_vma(), 40);
        assert_eq!(w.next_vma(), 40);
        let mut again = WalkCharge::new(300, 40);
        assert_eq!(again.next_vma(), 340, "each walk pays its own start");
    }

    #[test]
    fn a_shootdown_pays_one_ipi_per_remote_cpu() {
        let c = Costs {
            tlb_flush: 100,
            tlb_ipi: 40,
            ..Costs::default()
        };
        assert_eq!(c.tlb_shootdown(0), 100);
        assert_eq!(c.tlb_shootdown(1), 140);
        assert_eq!(c.tlb_shootdown(7), 100 + 7 * 40);
    }
}
