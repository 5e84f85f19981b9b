//! Engines run a model's roles over its world with the lock under test.
//!
//! A [`RunConfig`] is what the CLI (or a sweep point) resolved: the model with
//! overrides applied, which lock kinds go where, how long, on which CPUs. An
//! engine returns a [`RunReport`]; nothing downstream knows which engine made it.
//!
//! [`storm`] is what every engine runs (roles, workers, the locked world);
//! [`native`] runs it on real threads, [`sim`] on virtual CPUs; [`cpus`] is
//! the `--pin` list. Only this
//! module and the CLI name an engine: everything else sees a `RunReport`.

pub mod cpus;
pub mod native;
pub mod sim;
pub mod storm;

/// Measuring this machine for a simulator profile. It runs on real threads
/// (the native engine's probes and storm), and a layer above that needs it
/// (crosscheck's `--recalibrate`) reaches it here, not inside an engine.
pub use native::calibrate;

use crate::locks::LockKind;
use crate::model::machine::MachineProfile;
use crate::model::workload::MAX_THREADS;
use crate::model::{Model, StudiedLock};
use crate::results::RunReport;
use crate::{Error, Result};
use cpus::{CpuList, online_cpus};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct RunConfig {
    pub model_path: PathBuf,
    /// The model, `--set` and `--threads` already applied and validated.
    pub model: Model,
    /// The `--set` overrides as given, for the report.
    pub overrides: Vec<String>,
    /// The lock under test, on whatever the model's `lock_target` names.
    pub lock: LockKind,
    /// The mmap_lock's kind when it is not the lock under test.
    pub mmap_lock: LockKind,
    pub duration: Duration,
    pub pin: Option<CpuList>,
    pub seed: u64,
    /// Real threads or virtual CPUs.
    pub engine: RunEngine,
}

/// Where a run runs.
#[derive(Clone, Debug, PartialEq)]
pub enum RunEngine {
    /// This machine's threads; `machine`'s `[work]` costs stand for the
    /// kernel work they only model (TLB-flush IPIs, syscall entries).
    Native { machine: MachineProfile },
    /// Virtual CPUs of a machine profile.
    Sim(sim::SimSpec),
}

impl RunEngine {
    /// The name reports carry (`native`, `sim`).
    pub fn name(&self) -> &'static str {
        match self {
            RunEngine::Native { .. } => "native",
            RunEngine::Sim(_) => "sim",
        }
    }

    /// The machine profile whose costs the run charges.
    pub fn machine(&self) -> &MachineProfile {
        match self {
            RunEngine::Native { machine } => machine,
            RunEngine::Sim(spec) => &spec.machine,
        }
    }
}

/// What a caller asks for, before the model is read and checked.
#[derive(Clone, Debug)]
pub struct RunRequest<'a> {
    pub model_path: &'a Path,
    pub overrides: &'a [String],
    /// Threads of the model's scaled role (`workload.scale`); None keeps the model's.
    pub threads: Option<u32>,
    pub lock: LockKind,
    pub mmap_lock: LockKind,
    pub duration: Duration,
    /// `--pin` as given (`0-3,6`).
    pub pin: Option<&'a str>,
    /// None: the model's `world.seed`.
    pub seed: Option<u64>,
    pub engine: RunEngine,
}

impl RunConfig {
    /// Load and check everything a run needs, so bad input fails before any
    /// thread starts or any file is written.
    pub fn resolve(req: &RunRequest<'_>) -> Result<RunConfig> {
        let mut model = crate::model::load(req.model_path, req.overrides)?;
        if let Some(n) = req.threads {
            if !(1..=MAX_THREADS).contains(&n) {
                return Err(Error::usage(format!(
                    "--threads: {n} is out of range (allowed: 1..={MAX_THREADS})"
                )));
            }
            let scale = model.workload.scale;
            model.workload.roles[scale].threads = n;
        }
        if model.workload.threads() == 0 {
            return Err(Error::usage(format!(
                "{}: workload: no role has threads (allowed: workload.ROLE.threads >= 1 for some role, or --threads N)",
                req.model_path.display()
            )));
        }
        // Simulated, the list names virtual CPUs.
        let cpus = match &req.engine {
            RunEngine::Native { .. } => online_cpus(),
            RunEngine::Sim(spec) => spec.cpus,
        };
        let pin = req
            .pin
            .map(|p| CpuList::parse(p, cpus))
            .transpose()
            .map_err(Error::usage)?;
        Ok(RunConfig {
            model_path: req.model_path.to_path_buf(),
            seed: req.seed.unwrap_or(model.world.seed),
            model,
            overrides: req.overrides.to_vec(),
            lock: req.lock,
            mmap_lock: req.mmap_lock,
            duration: req.duration,
            pin,
            engine: req.engine.clone(),
        })
    }

    /// (rmap locks' kind, mmap_lock's kind). When the model studies the
    /// mmap_lock, the rmap locks are today's rw_semaphore.
    pub fn kinds(&self) -> (LockKind, LockKind) {
        match self.model.workload.lock_target {
            StudiedLock::Rmap => (self.lock, self.mmap_lock),
            StudiedLock::MmapLock => (LockKind::Rwsem, self.lock),
        }
    }
}

/// Run `cfg` on its engine.
pub fn run(cfg: &RunConfig) -> Result<RunReport> {
    match &cfg.engine {
        RunEngine::Native { .. } => native::run(cfg),
        RunEngine::Sim(spec) => sim::storm::run(cfg, spec),
    }
}
