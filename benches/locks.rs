//! Acquire+release cost of every lock kind, side by side with parking_lot and std.
//!
//! Four groups, each listing every `LockKind` (through `LockKind::dispatch`,
//! so each is the monomorphised code the tool runs) and the three baselines:
//! - `uncontended read` / `uncontended write`: one thread, lock and unlock.
//! - `2 threads read-only`: two threads each take and drop the read lock
//!   `iters` times; time per iteration is the wall time for one op on each.
//! - `2 threads 90% read`: the same, every tenth op a write.
//!
//! Goals (issue 3), judged from the report, never asserted: every kind's
//! uncontended acquire+release within 1.5x of parking_lot's (rwsem read within
//! 1.25x); percpu-rwsem's 2-thread read-only throughput at least 1.5x
//! parking_lot::RwLock's. Exclusive-only kinds and parking_lot::Mutex take
//! their exclusive path for reads.

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use rmap_storm::locks::platform::Native;
use rmap_storm::locks::{KindInfo, LockKind, LockVisitor, RawRwLock};
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// What a bench needs of a lock: make one, take and drop it in each mode.
trait Subject: Send + Sync + 'static {
    fn new() -> Self;
    fn read(&self);
    fn write(&self);
}

/// A kind under study, through its raw interface (as the engines use it).
struct Kind<L>(L);

impl<L: RawRwLock> Subject for Kind<L> {
    fn new() -> Self {
        Kind(L::new())
    }
    #[inline]
    fn read(&self) {
        let token = black_box(self.0.lock_shared());
        // SAFETY: the token came from this lock and is released once.
        unsafe { self.0.unlock_shared(token) }
    }
    #[inline]
    fn write(&self) {
        let token = black_box(self.0.lock_exclusive());
        // SAFETY: the token came from this lock and is released once.
        unsafe { self.0.unlock_exclusive(token) }
    }
}

struct ParkingLotRwLock(parking_lot::RwLock<()>);

impl Subject for ParkingLotRwLock {
    fn new() -> Self {
        ParkingLotRwLock(parking_lot::RwLock::new(()))
    }
    #[inline]
    fn read(&self) {
        drop(black_box(self.0.read()));
    }
    #[inline]
    fn write(&self) {
        drop(black_box(self.0.write()));
    }
}

struct ParkingLotMutex(parking_lot::Mutex<()>);

impl Subject for ParkingLotMutex {
    fn new() -> Self {
        ParkingLotMutex(parking_lot::Mutex::new(()))
    }
    #[inline]
    fn read(&self) {
        drop(black_box(self.0.lock()));
    }
    #[inline]
    fn write(&self) {
        drop(black_box(self.0.lock()));
    }
}

struct StdRwLock(std::sync::RwLock<()>);

impl Subject for StdRwLock {
    fn new() -> Self {
        StdRwLock(std::sync::RwLock::new(()))
    }
    #[inline]
    fn read(&self) {
        drop(black_box(self.0.read().expect("not poisoned")));
    }
    #[inline]
    fn write(&self) {
        drop(black_box(self.0.write().expect("not poisoned")));
    }
}

#[derive(Clone, Copy)]
enum Scenario {
    UncontendedRead,
    UncontendedWrite,
    TwoThreadsReadOnly,
    TwoThreadsMostlyRead,
}

impl Scenario {
    const ALL: [Scenario; 4] = [
        Scenario::UncontendedRead,
        Scenario::UncontendedWrite,
        Scenario::TwoThreadsReadOnly,
        Scenario::TwoThreadsMostlyRead,
    ];

    fn group(self) -> &'static str {
        match self {
            Scenario::UncontendedRead => "uncontended read",
            Scenario::UncontendedWrite => "uncontended write",
            Scenario::TwoThreadsReadOnly => "2 threads read-only",
            Scenario::TwoThreadsMostlyRead => "2 threads 90% read",
        }
    }

    /// Lock operations per iteration: one per thread.
    fn ops(self) -> u64 {
        match self {
            Scenario::UncontendedRead | Scenario::UncontendedWrite => 1,
            Scenario::TwoThreadsReadOnly | Scenario::TwoThreadsMostlyRead => 2,
        }
    }

    fn bench<S: Subject>(self, g: &mut BenchmarkGroup<'_, WallTime>, name: &str) {
        match self {
            Scenario::UncontendedRead => {
                let lock = S::new();
                g.bench_function(name, |b| b.iter(|| lock.read()));
            }
            Scenario::UncontendedWrite => {
                let lock = S::new();
                g.bench_function(name, |b| b.iter(|| lock.write()));
            }
            Scenario::TwoThreadsReadOnly => {
                g.bench_function(name, |b| b.iter_custom(|n| two_threads::<S>(n, None)));
            }
            Scenario::TwoThreadsMostlyRead => {
                // Every tenth operation a write: 90% reads.
                g.bench_function(name, |b| b.iter_custom(|n| two_threads::<S>(n, Some(10))));
            }
        }
    }
}

/// Two threads start together at a barrier and each does `iters` operations on
/// one fresh lock, a write every `write_every`-th; the slower one's time.
fn two_threads<S: Subject>(iters: u64, write_every: Option<u64>) -> Duration {
    let lock = S::new();
    let start = Barrier::new(2);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    let t = Instant::now();
                    for i in 0..iters {
                        if write_every.is_some_and(|n| i % n == 0) {
                            lock.write();
                        } else {
                            lock.read();
                        }
                    }
                    t.elapsed()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("bench thread panicked"))
            .max()
            .expect("two threads")
    })
}

/// Registers one scenario's bench for whichever kind `dispatch` selects.
struct Register<'a, 'b> {
    group: &'a mut BenchmarkGroup<'b, WallTime>,
    scenario: Scenario,
}

impl LockVisitor for Register<'_, '_> {
    type Output = ();
    fn visit<L: RawRwLock + KindInfo>(self) {
        self.scenario.bench::<Kind<L>>(self.group, L::KIND.name());
    }
}

fn locks(c: &mut Criterion) {
    for scenario in Scenario::ALL {
        let mut group = c.benchmark_group(scenario.group());
        group.throughput(Throughput::Elements(scenario.ops()));
        for kind in LockKind::ALL {
            kind.dispatch::<Native, _>(Register {
                group: &mut group,
                scenario,
            });
        }
        scenario.bench::<ParkingLotRwLock>(&mut group, "parking_lot::RwLock");
        scenario.bench::<ParkingLotMutex>(&mut group, "parking_lot::Mutex");
        scenario.bench::<StdRwLock>(&mut group, "std::sync::RwLock");
        group.finish();
    }
}

criterion_group! {
    name = benches;
    // Criterion's plots need a system font this machine lacks.
    config = Criterion::default().without_plots();
    targets = locks
}
criterion_main!(benches);
