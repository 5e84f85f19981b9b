//! `rmap-storm reproduce`: a source's claims as runs and comparisons.
//!
//! A scenario ([`scenario`]) names its source, its kernel era, the runs its
//! source describes and the figures it reports. Every run is resolved first
//! (a bad model, override or lock is bad input before anything runs), then
//! run on one machine profile for all scenarios; simulated runs go in
//! parallel (each is deterministic on its own, so the table does not depend
//! on how many threads ran them). Each claim becomes a row ([`judge`]).
//! Nothing here is tuned per scenario: a scenario sets only what its source
//! states, and a claim that misses says so.

pub mod judge;
pub mod scenario;

use crate::engine::sim::{Preempt, SimSpec};
use crate::engine::{self, RunConfig, RunEngine, RunRequest, cpus::online_cpus};
use crate::locks::LockKind;
use crate::results::reproduce::{RunLine, ScenarioReport};
use crate::results::{RunReport, figure};
use crate::{Error, Result};
use rayon::prelude::*;
use scenario::{PlannedRun, Scenario};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One scenario run: the table, and every run's own report in plan order.
pub struct Outcome {
    pub table: ScenarioReport,
    pub runs: Vec<(PlannedRun, RunReport)>,
}

/// A scenario whose every run is resolved: nothing left to fail as bad input.
pub struct Prepared {
    path: PathBuf,
    scenario: Scenario,
    quick: bool,
    engine: RunEngine,
    plan: Vec<PlannedRun>,
    configs: Vec<RunConfig>,
}

/// Load the scenario at `path` and resolve its runs on `engine` (whose CPUs
/// and preemption model are the defaults; a run sets its own where its
/// source states them).
pub fn prepare(path: &Path, quick: bool, engine: &RunEngine) -> Result<Prepared> {
    let scenario = scenario::load(path)?;
    let plan = scenario.plan(quick);
    let duration = Duration::from_millis(scenario.duration_ms(quick));
    let configs = plan
        .iter()
        .map(|r| resolve(r, duration, engine).map_err(|e| at_run(path, r, e)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Prepared {
        path: path.to_path_buf(),
        scenario,
        quick,
        engine: engine.clone(),
        plan,
        configs,
    })
}

impl Prepared {
    /// Runs to make.
    pub fn len(&self) -> usize {
        self.plan.len()
    }

    pub fn is_empty(&self) -> bool {
        self.plan.is_empty()
    }

    /// Make every run (`tick` after each) and judge the claims.
    pub fn run(self, tick: &(dyn Fn() + Sync)) -> Result<Outcome> {
        let one = |cfg: &RunConfig| {
            let report = engine::run(cfg);
            tick();
            report
        };
        let reports: Vec<RunReport> = match self.engine {
            RunEngine::Sim(_) => self.configs.par_iter().map(one).collect::<Result<_>>()?,
            RunEngine::Native { .. } => self.configs.iter().map(one).collect::<Result<_>>()?,
        };
        let runs: Vec<(PlannedRun, RunReport)> = self.plan.into_iter().zip(reports).collect();
        let table = table(
            &self.path,
            &self.scenario,
            self.quick,
            &self.engine,
            &self.configs,
            &runs,
        );
        Ok(Outcome { table, runs })
    }
}

/// The run's config; native runs ignore the scenario's CPUs and preemption
/// model (this machine has its own), which the table then shows.
fn resolve(r: &PlannedRun, duration: Duration, engine: &RunEngine) -> Result<RunConfig> {
    let engine = match engine {
        RunEngine::Native { machine } => RunEngine::Native {
            machine: machine.clone(),
        },
        RunEngine::Sim(spec) => RunEngine::Sim(SimSpec {
            cpus: r.cpus.map_or(spec.cpus, |c| c as usize),
            preempt: r.preempt.as_deref().map_or(spec.preempt, preempt),
            machine: spec.machine.clone(),
        }),
    };
    RunConfig::resolve(&RunRequest {
        model_path: Path::new(&r.model),
        overrides: &r.set,
        threads: r.threads,
        lock: r.lock,
        mmap_lock: LockKind::Rwsem,
        duration,
        pin: None,
        seed: None,
        engine,
    })
}

/// A preemption model's name, already checked by the scenario's loader.
fn preempt(name: &str) -> Preempt {
    [Preempt::None, Preempt::Voluntary, Preempt::Full]
        .into_iter()
        .find(|p| p.name() == name)
        .unwrap_or_default()
}

fn at_run(path: &Path, r: &PlannedRun, e: Error) -> Error {
    let named = |m: String| format!("{}: run '{}': {m}", path.display(), r.name);
    match e {
        Error::Usage(m) => Error::Usage(named(m)),
        Error::Failed(m) => Error::Failed(named(m)),
    }
}

fn table(
    path: &Path,
    s: &Scenario,
    quick: bool,
    engine: &RunEngine,
    configs: &[RunConfig],
    runs: &[(PlannedRun, RunReport)],
) -> ScenarioReport {
    let report_of = |name: &str| {
        let (_, report) = runs
            .iter()
            .find(|(r, _)| r.name == name)
            .expect("the loader checked every run name");
        report
    };
    let value = |name: &str, fig: &str| {
        figure::of(report_of(name), fig).expect("the loader checked every figure")
    };
    let rows = s
        .expect
        .iter()
        .map(|e| {
            let vs = e.comparison().map(|(run, fig)| value(run, fig));
            judge::row(e, value(&e.run, &e.figure), vs)
        })
        .collect();
    ScenarioReport {
        name: Scenario::name(path),
        title: s.title.clone(),
        source: s.source.clone(),
        era: s.era.clone(),
        engine: engine.name().into(),
        machine: engine.machine().name.clone(),
        quick,
        duration_ms: s.duration_ms(quick),
        rows,
        runs: runs
            .iter()
            .zip(configs)
            .map(|((r, report), cfg)| run_line(r, report, cfg))
            .collect(),
    }
}

fn run_line(r: &PlannedRun, report: &RunReport, cfg: &RunConfig) -> RunLine {
    let (cpus, preempt) = match &cfg.engine {
        RunEngine::Sim(spec) => (spec.cpus as u32, Some(spec.preempt.name().to_string())),
        RunEngine::Native { .. } => (online_cpus() as u32, None),
    };
    RunLine {
        name: r.name.clone(),
        model: r.model.clone(),
        lock: r.lock.to_string(),
        cpus,
        threads: report.threads,
        preempt,
        overrides: r.set.clone(),
        progress: report.verdict.to_string(),
    }
}
