//! The pure lock loop: each CPU runs one thread that takes the lock, holds it
//! for `hold`, releases it and thinks for `think`, again and again: the
//! workload of Boyd-Wickizer et al.'s model (and of lockhammer's
//! `crit_ns`/`par_ns`), for validating the simulator against analysis.
//!
//! Times are fixed or drawn from an exponential distribution (the Markov
//! model's assumption), per thread from a seeded stream. Acquisitions are
//! counted over the run after a warm-up tenth.

use super::kernel::Kernel;
use super::run::{self, Body, Timers};
use super::{Preempt, Sim};
use crate::locks::platform::Platform;
use crate::locks::stats::ThreadStats;
use crate::locks::{KindInfo, LockKind, LockVisitor, RawRwLock, RwLock};
use crate::model::machine::MachineProfile;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cell::Cell;

/// One lock loop.
#[derive(Clone, Debug)]
pub struct LockLoop {
    pub kind: LockKind,
    pub cpus: usize,
    pub hold_ns: f64,
    pub think_ns: f64,
    /// Draw each hold and think time from an exponential distribution of
    /// that mean, instead of fixed times.
    pub exponential: bool,
    /// Virtual run time, nanoseconds (the first tenth is warm-up).
    pub duration_ns: u64,
    pub preempt: Preempt,
    pub seed: u64,
}

/// What it measured.
#[derive(Clone, Debug)]
pub struct LockLoopResult {
    /// Acquisitions per virtual second over the measured part.
    pub per_s: f64,
    /// Acquisitions per thread over the measured part.
    pub per_thread: Vec<u64>,
    pub ended: run::Ended,
}

/// Run `spec` on `profile`.
pub fn run(spec: &LockLoop, profile: &MachineProfile) -> LockLoopResult {
    spec.kind.dispatch::<Sim, _>(Loop { spec, profile })
}

struct Loop<'a> {
    spec: &'a LockLoop,
    profile: &'a MachineProfile,
}

impl LockVisitor for Loop<'_> {
    type Output = LockLoopResult;

    fn visit<L: RawRwLock + KindInfo>(self) -> LockLoopResult {
        let spec = self.spec;
        let lock = RwLock::<L, ()>::new(());
        let stop = Cell::new(false);
        let warm_ns = spec.duration_ns / 10;
        let counts: Vec<Cell<u64>> = (0..spec.cpus).map(|_| Cell::new(0)).collect();
        let bodies: Vec<Body<'_>> = (0..spec.cpus)
            .map(|i| {
                let (lock, stop, count) = (&lock, &stop, &counts[i]);
                let seed = spec.seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                Box::new(move || {
                    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
                    let mut draw = |mean: f64| {
                        let t = if spec.exponential {
                            -mean * (1.0 - rng.random::<f64>()).ln()
                        } else {
                            mean
                        };
                        t.round() as u64
                    };
                    while !stop.get() {
                        let hold = draw(spec.hold_ns);
                        let guard = lock.write();
                        Sim::udelay(hold);
                        drop(guard);
                        if (warm_ns..spec.duration_ns).contains(&Sim::now_ns()) {
                            count.set(count.get() + 1);
                        }
                        Sim::user_work(draw(spec.think_ns));
                    }
                }) as Body<'_>
            })
            .collect();
        let kernel = Kernel::new(self.profile, spec.cpus, spec.preempt, spec.cpus, spec.seed);
        let mut stats: Vec<ThreadStats> = (0..spec.cpus).map(|_| ThreadStats::default()).collect();
        let timers = Timers {
            window_ps: 0,
            on_window: Box::new(|_, _| {}),
            stop_ps: spec.duration_ns * 1_000,
            on_stop: Box::new(|| stop.set(true)),
            cut_off_ps: 2 * spec.duration_ns * 1_000,
        };
        let ended = run::run(kernel, bodies, &mut stats, timers);
        let per_thread: Vec<u64> = counts.iter().map(Cell::get).collect();
        let measured_s = (spec.duration_ns - warm_ns) as f64 / 1e9;
        LockLoopResult {
            per_s: per_thread.iter().sum::<u64>() as f64 / measured_s,
            per_thread,
            ended,
        }
    }
}
