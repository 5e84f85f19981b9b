//! The simulator's speed: simulated events per wall second on the pure lock
//! loop (issue 9's goal: at least 5 M events/s on one core).
//!
//! Criterion reports the throughput in elements/s, one element per event;
//! the event count of each case is fixed by its seed.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmap_storm::engine::sim::Preempt;
use rmap_storm::engine::sim::lockloop::{self, LockLoop};
use rmap_storm::locks::LockKind;
use rmap_storm::model::machine::{self, MachineProfile};

fn spec(kind: LockKind, cpus: usize) -> LockLoop {
    LockLoop {
        kind,
        cpus,
        hold_ns: 1_000.0,
        think_ns: 1_000.0,
        exponential: true,
        duration_ns: 2_000_000,
        preempt: Preempt::Voluntary,
        seed: 1,
    }
}

fn lock_loop(c: &mut Criterion) {
    let profile = machine::load(&MachineProfile::default_path()).expect("default profile");
    let mut group = c.benchmark_group("sim_lockloop");
    for (kind, cpus) in [
        (LockKind::Spinlock, 64),
        (LockKind::Qspinlock, 64),
        (LockKind::Rwsem, 64),
        (LockKind::RwsemFifo, 8),
    ] {
        let events = lockloop::run(&spec(kind, cpus), &profile).ended.events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(format!("{kind}_{cpus}cpus"), |b| {
            b.iter(|| lockloop::run(&spec(kind, cpus), &profile).ended.events)
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Criterion's plots need a system font this machine does not have.
    config = Criterion::default().without_plots();
    targets = lock_loop
}
criterion_main!(benches);
