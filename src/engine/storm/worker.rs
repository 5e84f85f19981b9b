//! One worker of a storm: its role, its place among the role's threads, its
//! random stream and its record. An engine creates the workers of
//! [`plan`], runs each one's role op over and over, and collects the records.

use super::ctx::Ctx;
use super::shared::LruBatch;
use crate::locks::RawRwLock;
use crate::locks::platform::Platform;
use crate::metrics::record::Record;
use crate::model::{MmChoice, Role, RoleSpec, WorkloadSpec};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Where a worker sits: its role and which of the role's threads it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub role: Role,
    /// This thread's number within its role.
    pub nth: usize,
    /// Threads in the role.
    pub of: usize,
}

/// Every worker of `workload`, role by role in [`Role::ALL`] order: the
/// worker's index in this list picks its random stream.
pub fn plan(workload: &WorkloadSpec) -> Vec<Place> {
    workload
        .roles
        .iter()
        .flat_map(|(role, spec)| {
            let of = spec.threads as usize;
            (0..of).map(move |nth| Place { role, nth, of })
        })
        .collect()
}

/// One worker's private state.
pub struct Worker {
    pub role: Role,
    /// This thread's number within its role (a per-thread range of the mm).
    pub nth: usize,
    pub rng: Xoshiro256PlusPlus,
    /// What this worker measured since its engine last collected it.
    pub local: Record,
    /// A reclaimer's isolated batch, walked one page per operation (None
    /// between batches and for other roles).
    pub lru: Option<LruBatch>,
    /// When the worker's first operation began (platform ns): the start of
    /// its per-second figures.
    epoch_ns: Option<u64>,
}

impl Worker {
    /// Worker `index` of the run's [`plan`], sitting at `place`. Its stream
    /// is the run's `seed` mixed with its index (a Weyl step by the 64-bit
    /// golden ratio, so neighbouring indices get unrelated seeds), the same
    /// whichever engine runs it. `_page_capacity` is no longer read (reclaim
    /// scans the LRU, not page ids from a per-worker hand); the engines
    /// still pass it.
    pub fn new(place: Place, index: usize, seed: u64, _page_capacity: u32) -> Worker {
        let rng = Xoshiro256PlusPlus::seed_from_u64(
            seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        Worker {
            role: place.role,
            nth: place.nth,
            rng,
            local: Record::default(),
            lru: None,
            epoch_ns: None,
        }
    }

    /// Mark the start of the worker's run (its first operation's).
    #[inline]
    pub fn start<P: Platform>(&mut self) {
        if self.epoch_ns.is_none() {
            self.epoch_ns = Some(P::now_ns());
        }
    }

    /// Whole seconds since the worker's first operation.
    pub fn second<P: Platform>(&self) -> usize {
        let since = P::now_ns().saturating_sub(self.epoch_ns.unwrap_or(0));
        (since / 1_000_000_000) as usize
    }

    pub fn spec<'s, L: RawRwLock>(&self, ctx: &'s Ctx<L>) -> &'s RoleSpec {
        &ctx.workload.roles[self.role]
    }

    /// A random index below `n` (n > 0).
    pub fn below(&mut self, n: u32) -> u32 {
        self.rng.random_range(0..n)
    }

    /// The vma index this operation works on: the thread's own one when all
    /// threads share the ancestor's mm (their "own ranges", seed 000), a
    /// random one otherwise.
    pub fn vma_index<L: RawRwLock>(&mut self, ctx: &Ctx<L>) -> u32 {
        let n = ctx.layout.anon_vmas.max(1);
        match ctx.workload.mm {
            MmChoice::Ancestor => (self.nth as u32) % n,
            MmChoice::Any => self.below(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_lists_each_role_s_threads_in_role_order() {
        let mut w = WorkloadSpec::default();
        w.roles[Role::Touch].threads = 2;
        w.roles[Role::Reclaim].threads = 1;
        let places = plan(&w);
        let seen: Vec<(Role, usize, usize)> =
            places.iter().map(|p| (p.role, p.nth, p.of)).collect();
        assert_eq!(
            seen,
            [
                (Role::Reclaim, 0, 1),
                (Role::Touch, 0, 2),
                (Role::Touch, 1, 2)
            ]
        );
        let draws: Vec<u32> = places
            .iter()
            .enumerate()
            .map(|(i, &p)| Worker::new(p, i, 9, 100).below(1 << 30))
            .collect();
        assert!(
            draws[0] != draws[1] && draws[1] != draws[2],
            "each worker has its own stream: {draws:?}"
        );
    }
}
