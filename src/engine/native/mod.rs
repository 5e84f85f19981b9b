//! The native engine: real threads with fixed roles over one shared world.
//!
//! The storm ([`crate::engine::storm`]: its world taken apart into lock
//! domains, one lock of the kind under test per root anon_vma family and per
//! file, one mmap_lock per mm) is built once, and every role's threads run
//! over it ([`storm`]) until the duration is up. What needs real threads
//! lives here: spawning and pinning them, the start barrier, the monitor and
//! watchdog loop, getrusage.

pub mod calibrate;
pub mod pin;
pub mod recorder;
pub mod sched_trace;
pub mod storm;

use crate::Result;
use crate::engine::RunConfig;
use crate::engine::storm::costs::Costs;
use crate::engine::storm::ctx::Ctx;
use crate::locks::platform::Native as Platform;
use crate::locks::{KindInfo, LockVisitor, RawRwLock};
use crate::metrics::summary::{self, RunMeta};
use crate::results::RunReport;
use std::sync::Arc;

/// Run `cfg` on real threads.
pub fn run(cfg: &RunConfig) -> Result<RunReport> {
    let (rmap_kind, _) = cfg.kinds();
    rmap_kind.dispatch::<Platform, _>(NativeRun { cfg })
}

struct NativeRun<'a> {
    cfg: &'a RunConfig,
}

impl LockVisitor for NativeRun<'_> {
    type Output = Result<RunReport>;

    fn visit<L: RawRwLock + KindInfo>(self) -> Result<RunReport> {
        let cfg = self.cfg;
        let costs = Costs::of(&cfg.engine.machine().work);
        let cpus = crate::engine::cpus::online_cpus();
        let ctx = Arc::new(Ctx::<L>::build(&cfg.model, cfg.kinds().1, costs, cpus));
        let out = storm::run(ctx, cfg.duration, cfg.pin.as_ref(), cfg.seed);
        let meta = RunMeta {
            model: cfg.model_path.display().to_string(),
            engine: "native".into(),
            lock: cfg.lock,
            threads: cfg.model.workload.scaled_threads(),
            cpus: cpus as u32,
            seed: cfg.seed,
            overrides: cfg.overrides.clone(),
        };
        let secs = out.elapsed.as_secs_f64();
        Ok(summary::report(meta, &out.threads, out.progress, secs))
    }
}
