//! The native engine: real threads with fixed roles over one shared world.
//!
//! The storm ([`crate::engine::storm`]: its world taken apart into lock
//! domains, one lock of the kind under test per root anon_vma family and per
//! file, one mmap_lock per mm) is built once, and every role's threads run
//! over it ([`storm`]) until the duration is up. What needs real threads
//! lives here: spawning and pinning them, the start barrier, the monitor and
//! watchdog loop, getrusage, and the kernel's own trace of their schedule
//! ([`sched_trace`]).

pub mod calibrate;
pub mod pin;
pub mod recorder;
pub mod sched_trace;
pub mod storm;

use crate::Result;
use crate::engine::RunConfig;
use crate::engine::cpus::CpuList;
use crate::engine::storm::costs::Costs;
use crate::engine::storm::ctx::Ctx;
use crate::locks::platform::Native as Platform;
use crate::locks::{KindInfo, LockVisitor, RawRwLock};
use crate::metrics::summary::{self, RunMeta};
use crate::results::RunReport;
use std::path::Path;
use std::sync::Arc;

/// Run `cfg` on real threads.
pub fn run(cfg: &RunConfig) -> Result<RunReport> {
    let (rmap_kind, _) = cfg.kinds();
    rmap_kind.dispatch::<Platform, _>(NativeRun { cfg })
}

/// Run `cfg` on real threads with the kernel's sched tracepoints recorded
/// to `out` ([`sched_trace`]): the report, and the events the trace buffer
/// had no room for.
pub fn run_traced(cfg: &RunConfig, out: &Path) -> Result<(RunReport, u64)> {
    let cpus = cfg.pin.as_ref().map(CpuList::cpus);
    let capture = sched_trace::Capture::start(cpus, cfg.duration)?;
    let report = run(cfg)?;
    let about = format!(
        "rmap-storm native run of {} with {}: context switches and wake-ups",
        cfg.model_path.display(),
        cfg.lock.name()
    );
    let dropped = capture.finish(out, &about)?;
    Ok((report, dropped))
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
