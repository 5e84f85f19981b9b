//! A short fixed reclaim storm under the feature-selected default lock:
//! a 2,000-task AIM7 world, 2 reclaim threads walking the shared root while
//! 1 fork-exit thread churns children under the root WRITE lock.
//!
//! Switch the lock the way the owner asked, by feature flag:
//!
//! ```text
//! cargo bench --bench storm                                             # rwsem
//! cargo bench --bench storm --no-default-features --features lock-spinlock
//! ```
//!
//! Reported time is per reclaim operation (one page_referenced, and a
//! try_to_unmap when the page is unreferenced), measured over one storm of
//! STORM per sample: the storm's wall time divided by the reclaim ops done.

use criterion::{Criterion, criterion_group, criterion_main};
use rmap_storm::engine::{self, RunConfig, RunEngine, RunRequest};
use rmap_storm::locks::LockKind;
use rmap_storm::model::machine::{self, MachineProfile};
use std::path::Path;
use std::time::Duration;

const STORM: Duration = Duration::from_millis(300);

fn config() -> RunConfig {
    let overrides: Vec<String> = [
        "world.tasks=2000",
        "workload.reclaim.threads=2",
        "workload.fork_exit.threads=1",
        "workload.touch.threads=0",
        "memory.budget_pages=0",
    ]
    .map(String::from)
    .to_vec();
    RunConfig::resolve(&RunRequest {
        model_path: Path::new("models/aim7-fork-storm.toml"),
        overrides: &overrides,
        threads: None,
        lock: LockKind::default_kind(),
        mmap_lock: LockKind::Rwsem,
        duration: STORM,
        pin: None,
        seed: Some(1),
        engine: RunEngine::Native {
            machine: machine::load(&MachineProfile::default_path()).expect("the default profile"),
        },
    })
    .expect("the bench's model resolves")
}

fn storm(c: &mut Criterion) {
    let cfg = config();
    let name = format!("storm/aim7-2k/{}/reclaim_op", LockKind::default_kind());
    c.bench_function(&name, |b| {
        b.iter_custom(|iters| {
            let report = engine::run(&cfg).expect("storm runs");
            let ops = report.roles["reclaim"].ops.max(1);
            let per_op = report.duration_s / ops as f64;
            Duration::from_secs_f64(per_op * iters as f64)
        })
    });
}

criterion_group! {
    name = benches;
    // Criterion's plots need a system font this machine lacks.
    config = Criterion::default().without_plots().sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    targets = storm
}
criterion_main!(benches);
