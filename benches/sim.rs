//! The simulator's speed: simulated events per wall second on the pure lock
//! loop (torture with writers only, exponential times; issue 9's goal: at
//! least 5 M events/s on one core).
//!
//! Criterion reports the throughput in elements/s, one element per event;
//! the event count of each case is fixed by its seed. Each case simulates
//! 20 virtual ms, so that setting the run up (mapping a stack per simulated
//! thread, the statistics) is a few percent of it: at 2 ms it was 15% of the
//! instructions (rwsem, 64 CPUs: 985 per event at 2 ms, 835 at 20 ms,
//! counted with cachegrind).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmap_storm::engine::sim::{Preempt, SimSpec};
use rmap_storm::locks::LockKind;
use rmap_storm::model::machine::{self, MachineProfile};
use rmap_storm::torture::{self, Config, Engine};
use std::time::Duration;

fn config(kind: LockKind, cpus: usize, machine: &MachineProfile) -> Config {
    Config {
        kind,
        threads: [0, cpus, 0, 0],
        duration: Duration::from_millis(20),
        load: Duration::from_micros(1),
        interval: Duration::from_micros(1),
        sched: false,
        exponential: true,
        seed: 1,
        engine: Engine::Sim(Box::new(SimSpec {
            cpus,
            preempt: Preempt::Voluntary,
            machine: machine.clone(),
        })),
    }
}

fn events(cfg: &Config) -> u64 {
    let out = torture::run(cfg).expect("a simulated run");
    out.sim.expect("simulator figures").events
}

fn lock_loop(c: &mut Criterion) {
    let machine = machine::load(&MachineProfile::default_path()).expect("default profile");
    let mut group = c.benchmark_group("sim_lockloop");
    // A case takes 20-60 ms of wall time; ten samples keep the bench short.
    group.sample_size(10);
    for (kind, cpus) in [
        (LockKind::Spinlock, 64),
        (LockKind::Qspinlock, 64),
        (LockKind::Rwsem, 64),
        (LockKind::RwsemFifo, 8),
    ] {
        let cfg = config(kind, cpus, &machine);
        group.throughput(Throughput::Elements(events(&cfg)));
        group.bench_function(format!("{kind}_{cpus}cpus"), |b| b.iter(|| events(&cfg)));
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
