//! One torture thread's loop, generic over the lock and so over its
//! platform: the same loop runs on real threads ([`super::engine`]) and on
//! the simulator's virtual CPUs ([`super::sim`]).
//!
//! synchro-test's reader()/writer()/downgrader() loop: acquire (timed),
//! check who is inside, hold for `load`, check again, release, optionally
//! yield (`do_sched`), pause for `interval`. Holds and pauses are udelay()s,
//! fixed or (for the analytical models) drawn from an exponential
//! distribution of that mean, per thread from a seeded stream.

use super::check::{Occupancy, Seen};
use super::config::{Config, Role};
use super::gate::Gate;
use crate::locks::platform::Platform;
use crate::locks::stats::{self, LockClass, LockStats};
use crate::locks::{KindInfo, RawRwLock, RwLock};
use crate::metrics::{self, PerThread, ThreadCtx};
use hdrhistogram::Histogram;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Per-thread counters in the shared [`PerThread`] rows.
pub const TAKEN: usize = 0;
pub const FAILS: usize = 1;

/// What every thread shares: the lock under test and the checker beside it.
pub struct Shared<L: RawRwLock> {
    pub lock: RwLock<L, ()>,
    occupancy: Occupancy,
    pub stop: AtomicBool,
    /// [TAKEN, FAILS] per thread, readable while threads run.
    pub counts: PerThread<2>,
    load_ns: u64,
    interval_ns: u64,
    sched: bool,
    exponential: bool,
    seed: u64,
}

/// What a finished thread hands back.
pub struct ThreadEnd {
    pub acquire_ns: Histogram<u64>,
    pub lock: LockStats,
    pub ctx: ThreadCtx,
}

impl<L: RawRwLock + KindInfo> Shared<L> {
    pub fn new(cfg: &Config, threads: usize) -> Self {
        Shared {
            lock: RwLock::new(()),
            occupancy: Occupancy::default(),
            stop: AtomicBool::new(false),
            counts: PerThread::new(threads),
            load_ns: cfg.load.as_nanos() as u64,
            interval_ns: cfg.interval.as_nanos() as u64,
            sched: cfg.sched,
            exponential: cfg.exponential,
            seed: cfg.seed,
        }
    }

    /// One thread's life; `gate` (native) starts every thread together.
    pub fn worker(&self, gate: Option<&Gate>, me: usize, role: Role) -> ThreadEnd {
        // A lone lock under test counts as the anon_vma class (locks::stats).
        stats::set_class(LockClass::AnonVma);
        let mut delays = Delays::new(self, me);
        let mut acquire_ns = metrics::histogram();
        if let Some(gate) = gate {
            gate.arrive_and_wait();
        }
        let start = ctx_now::<L::Platform>();
        while !self.stop.load(Relaxed) {
            let seen = match role {
                Role::Reader => self.read_once(false, &mut acquire_ns, &mut delays),
                Role::CriticalReader => self.read_once(true, &mut acquire_ns, &mut delays),
                Role::Writer => self.write_once(&mut acquire_ns, &mut delays),
                Role::Downgrader => self.downgrade_once(&mut acquire_ns, &mut delays),
            };
            self.counts.bump(me, TAKEN);
            if seen == Seen::Violation {
                self.counts.bump(me, FAILS);
            }
            if self.sched {
                // sched_yield(2), as synchro-test's do_sched calls schedule().
                L::Platform::yield_now();
            }
            L::Platform::udelay(delays.interval());
        }
        ThreadEnd {
            acquire_ns,
            ctx: ctx_now::<L::Platform>() - start,
            lock: stats::take(),
        }
    }

    fn read_once(&self, critical: bool, acquire_ns: &mut Histogram<u64>, d: &mut Delays) -> Seen {
        let guard = timed::<L::Platform, _>(acquire_ns, || {
            if critical {
                self.lock.read_critical()
            } else {
                self.lock.read()
            }
        });
        let seen = self.occupancy.enter_read(L::SHARED_READERS);
        L::Platform::udelay(d.load());
        let seen = seen.and(self.occupancy.exit_read(L::SHARED_READERS));
        drop(guard);
        seen
    }

    fn write_once(&self, acquire_ns: &mut Histogram<u64>, d: &mut Delays) -> Seen {
        let guard = timed::<L::Platform, _>(acquire_ns, || self.lock.write());
        let seen = self.occupancy.enter_write();
        L::Platform::udelay(d.load());
        let seen = seen.and(self.occupancy.exit_write());
        drop(guard);
        seen
    }

    /// synchro-test's downgrader: hold for `load` as a writer, downgrade, hold
    /// for `load` as a reader, release. Kinds without downgrade_write just write.
    fn downgrade_once(&self, acquire_ns: &mut Histogram<u64>, d: &mut Delays) -> Seen {
        if !L::HAS_DOWNGRADE {
            return self.write_once(acquire_ns, d);
        }
        let guard = timed::<L::Platform, _>(acquire_ns, || self.lock.write());
        let seen = self.occupancy.enter_write();
        L::Platform::udelay(d.load());
        let seen = seen.and(self.occupancy.write_to_read());
        let guard = guard.downgrade();
        let seen = seen.and(self.occupancy.check_read(L::SHARED_READERS));
        L::Platform::udelay(d.load());
        let seen = seen.and(self.occupancy.exit_read(L::SHARED_READERS));
        drop(guard);
        seen
    }
}

/// A thread's hold and pause times: fixed, or exponential of that mean.
struct Delays {
    load_ns: u64,
    interval_ns: u64,
    /// Some when times are drawn.
    rng: Option<Xoshiro256PlusPlus>,
}

impl Delays {
    fn new<L: RawRwLock>(shared: &Shared<L>, me: usize) -> Delays {
        let seed = shared.seed ^ (me as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Delays {
            load_ns: shared.load_ns,
            interval_ns: shared.interval_ns,
            rng: shared
                .exponential
                .then(|| Xoshiro256PlusPlus::seed_from_u64(seed)),
        }
    }

    fn draw(&mut self, mean_ns: u64) -> u64 {
        match &mut self.rng {
            None => mean_ns,
            Some(rng) => {
                let u: f64 = rng.random();
                (-(mean_ns as f64) * (1.0 - u).ln()).round() as u64
            }
        }
    }

    fn load(&mut self) -> u64 {
        self.draw(self.load_ns)
    }

    fn interval(&mut self) -> u64 {
        self.draw(self.interval_ns)
    }
}

/// The calling thread's context switches so far (torture reports no CPU
/// time: its threads only spin, hold and think).
fn ctx_now<P: Platform>() -> ThreadCtx {
    let (voluntary, involuntary) = P::ctx_switches();
    ThreadCtx {
        voluntary,
        involuntary,
        ..ThreadCtx::default()
    }
}

/// Time one acquisition into `hist`.
#[inline]
fn timed<P: Platform, T>(hist: &mut Histogram<u64>, acquire: impl FnOnce() -> T) -> T {
    let t = P::now_ns();
    let token = acquire();
    metrics::record(hist, P::now_ns() - t);
    token
}
