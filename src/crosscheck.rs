//! The native-vs-simulator cross-check (issue 9): the same model, lock kind,
//! thread count and seeds on this machine's CPUs and on as many virtual CPUs
//! of a profile calibrated on it, so the simulator's error against the
//! machine it models can be read off one table.
//!
//! For every model, CPU count N and lock kind: `repeats` native runs pinned
//! to CPUs 0..N-1 with N threads of the model's scaled role, one after
//! another (a native run measures the machine: two at once would measure
//! each other), then as many simulated runs on N virtual CPUs, pinned the
//! same way, with the same seeds, in parallel (a simulated run depends only
//! on its inputs). Each run gives its scaled role's ops/s;
//! [`crate::report::crosscheck`] takes the medians and the error.

use crate::engine::sim::{Preempt, SimSpec};
use crate::engine::{self, RunConfig, RunEngine, RunRequest};
use crate::locks::LockKind;
use crate::model::machine::MachineProfile;
use crate::results::RunReport;
use crate::results::crosscheck::{CrossCheck, CrossRow};
use crate::{Error, Result};
use indicatif::ProgressBar;
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

/// What to cross-check.
#[derive(Clone, Debug)]
pub struct Plan {
    pub models: Vec<PathBuf>,
    /// CPU counts N: `--pin 0..N-1 --threads N`, simulated on `--cpus N`.
    pub cpus: Vec<usize>,
    pub locks: Vec<LockKind>,
    /// Runs per side and point (seeds `seed..seed + repeats`).
    pub repeats: u32,
    pub duration: Duration,
    /// The first repeat's seed; None: each model's `world.seed`.
    pub seed: Option<u64>,
    /// The profile the simulator runs and both sides charge kernel work from.
    pub machine_file: PathBuf,
    pub machine: MachineProfile,
    pub preempt: Preempt,
}

/// One (model, CPUs, kind): its two resolved configs (seed of the first
/// repeat).
#[derive(Clone, Debug)]
pub struct Point {
    pub native: RunConfig,
    pub sim: RunConfig,
}

impl Point {
    /// `aim7-fork-storm 2 CPUs rwsem`.
    pub fn label(&self) -> String {
        format!(
            "{} {} CPU{} {}",
            model_name(&self.native),
            self.cpus(),
            if self.cpus() == 1 { "" } else { "s" },
            self.native.lock.name()
        )
    }

    fn cpus(&self) -> u32 {
        self.native.model.workload.scaled_threads()
    }
}

fn model_name(cfg: &RunConfig) -> String {
    cfg.model_path.file_stem().map_or_else(
        || cfg.model_path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// Resolve every point of `plan`, so bad input (a model, a CPU count this
/// machine lacks, no repeats) fails before the first run.
pub fn points(plan: &Plan) -> Result<Vec<Point>> {
    if plan.repeats == 0 {
        return Err(Error::usage("--repeats: 0 is out of range (allowed: 1..)"));
    }
    let mut points = Vec::new();
    for model_path in &plan.models {
        for &n in &plan.cpus {
            for &lock in &plan.locks {
                let pin = format!("0-{}", n - 1);
                let request = RunRequest {
                    model_path,
                    overrides: &[],
                    threads: Some(n as u32),
                    lock,
                    mmap_lock: LockKind::Rwsem,
                    duration: plan.duration,
                    pin: Some(&pin),
                    seed: plan.seed,
                    engine: RunEngine::Sim(SimSpec {
                        cpus: n,
                        preempt: plan.preempt,
                        machine: plan.machine.clone(),
                    }),
                };
                // The simulated side first: its errors are the model's own.
                let sim = RunConfig::resolve(&request)?;
                let native = RunConfig::resolve(&RunRequest {
                    engine: RunEngine::Native {
                        machine: plan.machine.clone(),
                    },
                    ..request
                })
                .map_err(|e| {
                    Error::usage(format!("--cpus {n}: native runs pin CPUs {pin}: {e}"))
                })?;
                points.push(Point { native, sim });
            }
        }
    }
    Ok(points)
}

/// Run every point `repeats` times a side; `on_row` sees each finished row
/// (for progress lines), `progress` ticks once per run.
pub fn run(
    plan: &Plan,
    points: &[Point],
    progress: &ProgressBar,
    mut on_row: impl FnMut(&CrossRow),
) -> Result<CrossCheck> {
    progress.set_length(points.len() as u64 * 2 * u64::from(plan.repeats));
    let mut rows = Vec::with_capacity(points.len());
    for point in points {
        let seeds: Vec<u64> = (0..u64::from(plan.repeats))
            .map(|r| point.native.seed + r)
            .collect();
        let role = point.native.model.workload.scale.name();
        progress.set_message(format!("{} native", point.label()));
        let mut native = Vec::with_capacity(seeds.len());
        for &seed in &seeds {
            native.push(scaled_ops_per_s(&run_once(&point.native, seed)?, role)?);
            progress.inc(1);
        }
        progress.set_message(format!("{} sim", point.label()));
        let sim = seeds
            .par_iter()
            .map(|&seed| {
                let ops = scaled_ops_per_s(&run_once(&point.sim, seed)?, role);
                progress.inc(1);
                ops
            })
            .collect::<Result<Vec<f64>>>()?;
        let row = CrossRow {
            model: model_name(&point.native),
            role: role.to_string(),
            cpus: point.cpus(),
            lock: point.native.lock,
            seeds,
            native_ops_per_s: native,
            sim_ops_per_s: sim,
        };
        on_row(&row);
        rows.push(row);
    }
    Ok(CrossCheck {
        machine_file: plan.machine_file.display().to_string(),
        machine_name: plan.machine.name.clone(),
        duration_s: plan.duration.as_secs_f64(),
        preempt: plan.preempt.name().to_string(),
        rows,
    })
}

fn run_once(cfg: &RunConfig, seed: u64) -> Result<RunReport> {
    engine::run(&RunConfig {
        seed,
        ..cfg.clone()
    })
}

/// The scaled role's ops/s; a report without it is the engine's failure.
fn scaled_ops_per_s(report: &RunReport, role: &str) -> Result<f64> {
    report.roles.get(role).map(|r| r.ops_per_s).ok_or_else(|| {
        Error::failed(format!(
            "crosscheck: the {} run of {} reported no {role} role",
            report.engine, report.model
        ))
    })
}
