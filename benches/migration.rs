//! What the simulator leaves out: the world's own data moving between CPUs
//! with the lock that guards it (see docs/sim.md, "What it does not model").
//!
//! Two threads pinned to CPUs 0 and 1 take turns (a flag handed back and
//! forth, as a contended lock hands its holder on) at mprotect's work on
//! synchro's mm: a split and the merge back (`World::split`, `World::merge`).
//! - `shared_mm`: both work on one world, so each turn finds the vmas, the
//!   vma table and the anon_vma tree written by the other CPU, as the
//!   writers of synchro at 2 CPUs find them natively;
//! - `private_mm`: each works on a world of its own; the same turns and
//!   hand-offs, the data stays in its CPU's cache.
//!
//! The difference between the two is what a split and merge pays for its
//! data's lines coming from the other CPU (and the `Mutex` word's one line,
//! some 70 ns here by calibrate's ping-pong). One iteration is a pair of
//! turns, one on each CPU. The simulator prices the pair by the profile's
//! `work.vma_ns` and `work.avc_ns`, which calibrate measures with a warm
//! cache on one CPU, and moves only lock words between CPUs.
//!
//! Needs 2 online CPUs (skipped otherwise). Run briefly:
//! `cargo bench --bench migration -- --warm-up-time 1 --measurement-time 3`.

use criterion::{Criterion, criterion_group, criterion_main};
use rmap_storm::engine::cpus::online_cpus;
use rmap_storm::engine::native::pin::pin_current_thread;
use rmap_storm::model::{self, WorldSpec};
use rmap_storm::rmap::{MmId, World};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `pairs` rounds of a turn on CPU 0 then one on CPU 1, each a split and
/// the merge back in `worlds[cpu]`; the wall time of the whole.
fn turns(worlds: [Arc<Mutex<World>>; 2], pairs: u64) -> Duration {
    let turn = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let threads: Vec<_> = worlds
        .into_iter()
        .enumerate()
        .map(|(cpu, world)| {
            let turn = Arc::clone(&turn);
            std::thread::spawn(move || {
                pin_current_thread(cpu).expect("pin to CPU 0 or 1");
                for i in 0..pairs {
                    let mine = 2 * i + cpu as u64;
                    while turn.load(Ordering::Acquire) != mine {
                        std::hint::spin_loop();
                    }
                    split_and_merge(&mut world.lock().expect("no panics"), i);
                    turn.store(mine + 1, Ordering::Release);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a turn-taking thread");
    }
    t0.elapsed()
}

/// mprotect's split of the first anon vma at a page that moves each round,
/// and the merge back.
fn split_and_merge(world: &mut World, round: u64) {
    let at = 1 + (round % 6) as u32;
    assert!(
        world.split(MmId(0), at),
        "synchro's first vma splits at {at}"
    );
    assert!(world.merge(MmId(0), at), "and merges back");
}

fn migration(c: &mut Criterion) {
    if online_cpus() < 2 {
        eprintln!("migration: needs 2 online CPUs, skipped");
        return;
    }
    let spec: WorldSpec = model::load(Path::new("models/synchro.toml"), &[])
        .expect("models/synchro.toml")
        .world;
    let world = || Arc::new(Mutex::new(World::build(&spec)));
    let mut group = c.benchmark_group("migration");
    group.bench_function("shared_mm", |b| {
        let one = world();
        b.iter_custom(|pairs| turns([Arc::clone(&one), Arc::clone(&one)], pairs))
    });
    group.bench_function("private_mm", |b| {
        let (a, z) = (world(), world());
        b.iter_custom(|pairs| turns([Arc::clone(&a), Arc::clone(&z)], pairs))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // Criterion's plots need a system font this machine does not have.
    config = Criterion::default().without_plots();
    targets = migration
}
criterion_main!(benches);
